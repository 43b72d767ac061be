/**
 * Architecture decisions: the decision rows, their approvals and status history, and the
 * per-workspace approval policy (quorum, reminder interval).
 */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('decision_policies', (t) => {
    t.uuid('workspace_id').primary().references('workspaces.id').onDelete('CASCADE');
    t.integer('quorum').notNullable().defaultTo(1);
    t.integer('reminder_interval_seconds')
      .notNullable()
      .defaultTo(72 * 3600);
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
  });
  await knex.raw(
    'ALTER TABLE decision_policies ADD CONSTRAINT decision_policies_bounds CHECK (quorum BETWEEN 1 AND 20 AND reminder_interval_seconds >= 1)',
  );

  await knex.schema.createTable('decisions', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    // Per-workspace sequence number: the brief's file name (0007-...).
    t.integer('number').notNullable();
    t.uuid('repository_id').references('repositories.id');
    t.uuid('snapshot_id').notNullable().references('architecture_snapshots.id');
    t.text('candidate_change_id');
    t.text('title').notNullable();
    t.text('question').notNullable();
    t.text('context').notNullable();
    t.text('status').notNullable();
    t.uuid('owner_id').notNullable().references('members.id');
    t.uuid('created_by').notNullable().references('members.id');
    t.jsonb('options').notNullable();
    t.text('selected_option_id');
    t.jsonb('evidence_ids').notNullable();
    t.jsonb('uncertainties').notNullable();
    t.jsonb('affected_entity_keys').notNullable();
    t.jsonb('affected_relationship_keys').notNullable();
    t.jsonb('success_criteria').notNullable();
    t.text('latest_rationale');
    t.uuid('approved_by').references('members.id');
    t.timestamp('approved_at', { useTz: true });
    t.timestamp('implemented_at', { useTz: true });
    t.timestamp('verified_at', { useTz: true });
    t.timestamp('superseded_at', { useTz: true });
    t.uuid('verification_snapshot_id').references('architecture_snapshots.id');
    t.jsonb('verification_result');
    t.uuid('supersedes_id').references('decisions.id');
    // Each entry into in_review starts a new round; approvals count within their round.
    t.integer('review_round').notNullable().defaultTo(0);
    t.timestamp('review_started_at', { useTz: true });
    t.integer('version').notNullable().defaultTo(1);
    // The workflow Update that made the last change: a retried activity does not apply it twice.
    t.text('last_request_key');
    t.text('workflow_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.unique(['workspace_id', 'number']);
    t.index(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'repository_id', 'status']);
  });

  await knex.schema.createTable('decision_approvals', (t) => {
    t.uuid('id').primary();
    t.uuid('decision_id').notNullable().references('decisions.id').onDelete('CASCADE');
    t.uuid('actor_id').notNullable().references('members.id');
    t.text('actor_role').notNullable();
    t.text('authorization_scope').notNullable();
    t.integer('policy_version');
    t.text('outcome').notNullable();
    t.text('rationale').notNullable();
    t.integer('review_round').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    // One vote per approver per review round.
    t.unique(['decision_id', 'review_round', 'actor_id']);
    t.index(['decision_id', 'created_at']);
  });

  await knex.schema.createTable('decision_transitions', (t) => {
    t.uuid('id').primary();
    t.uuid('decision_id').notNullable().references('decisions.id').onDelete('CASCADE');
    t.text('from_status');
    t.text('to_status').notNullable();
    t.uuid('actor_id').references('members.id');
    t.text('actor_login');
    t.text('rationale');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['decision_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('decision_transitions');
  await knex.schema.dropTableIfExists('decision_approvals');
  await knex.schema.dropTableIfExists('decisions');
  await knex.schema.dropTableIfExists('decision_policies');
}
