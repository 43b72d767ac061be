/**
 * The assistant: conversations about one repository, their messages, one run per question
 * (durable in Temporal) and each workspace's limits. The limits row doubles as the per-workspace
 * lock that makes admission of a question atomic (see db/assistant.ts admitQuestion).
 */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });
  await knex.schema.createTable('assistant_conversations', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    // A pinned snapshot; null: every question reads the repository's latest completed one.
    t.uuid('snapshot_id').references('architecture_snapshots.id').onDelete('SET NULL');
    t.text('title').notNullable();
    t.uuid('created_by').notNullable().references('members.id');
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'updated_at').notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
  });
  await knex.schema.createTable('assistant_messages', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('conversation_id')
      .notNullable()
      .references('assistant_conversations.id')
      .onDelete('CASCADE');
    t.uuid('author_id').references('members.id');
    t.text('role').notNullable();
    t.text('content').notNullable();
    t.jsonb('structured').notNullable().defaultTo('{}');
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    t.index(['conversation_id', 'created_at', 'id']);
  });
  await knex.schema.createTable('assistant_runs', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('conversation_id')
      .notNullable()
      .references('assistant_conversations.id')
      .onDelete('CASCADE');
    t.uuid('user_message_id').notNullable().references('assistant_messages.id');
    t.uuid('assistant_message_id').references('assistant_messages.id');
    t.uuid('requested_by').notNullable().references('members.id');
    t.uuid('repository_id').references('repositories.id').onDelete('SET NULL');
    t.uuid('context_snapshot_id');
    t.text('status').notNullable();
    t.text('route');
    t.text('specialist');
    t.boolean('cache_hit').notNullable().defaultTo(false);
    t.text('cache_key');
    t.text('model_id');
    t.integer('max_output_tokens').notNullable();
    // What admission set aside from the monthly budget while the run is active.
    t.decimal('reserved_usd', 18, 6).notNullable().defaultTo(0);
    t.decimal('cost_usd', 18, 6).notNullable().defaultTo(0);
    t.integer('input_tokens').notNullable().defaultTo(0);
    t.integer('cached_input_tokens').notNullable().defaultTo(0);
    t.integer('output_tokens').notNullable().defaultTo(0);
    t.integer('model_calls').notNullable().defaultTo(0);
    t.integer('dropped_citations').notNullable().defaultTo(0);
    t.text('error_code');
    t.text('error_message');
    t.text('workflow_id').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'started_at');
    ts(t, 'completed_at');
    t.index(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'requested_by', 'created_at']);
    t.index(['conversation_id', 'created_at']);
    t.index(['workspace_id', 'cache_key']);
  });
  await knex.raw(
    `CREATE INDEX assistant_runs_active ON assistant_runs (workspace_id, requested_by) WHERE status IN ('queued', 'running')`,
  );
  await knex.schema.createTable('assistant_limits', (t) => {
    t.uuid('workspace_id').primary().references('workspaces.id').onDelete('CASCADE');
    // Version 0: the built-in defaults apply (the row exists only as the admission lock).
    t.integer('version').notNullable().defaultTo(0);
    t.integer('user_daily_limit');
    t.integer('workspace_daily_limit');
    t.decimal('monthly_limit_usd', 18, 6);
    t.integer('max_output_tokens');
    t.integer('max_active_user_runs');
    t.integer('max_active_workspace_runs');
    t.text('time_zone');
    t.uuid('updated_by').references('members.id');
    ts(t, 'updated_at');
  });
  // The agent-run usage report groups by workspace and day.
  await knex.schema.alterTable('agent_runs', (t) => t.index(['workspace_id', 'created_at']));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agent_runs', (t) => t.dropIndex(['workspace_id', 'created_at']));
  await knex.schema.dropTableIfExists('assistant_limits');
  await knex.schema.dropTableIfExists('assistant_runs');
  await knex.schema.dropTableIfExists('assistant_messages');
  await knex.schema.dropTableIfExists('assistant_conversations');
}
