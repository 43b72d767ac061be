/**
 * Remediations (a plan for one or more findings, its approvals and verification) and workflow
 * actions (privileged requests that wait for a second person, then execute once).
 */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });
  await knex.schema.createTable('remediations', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').references('repositories.id').onDelete('CASCADE');
    // The audit that last observed the findings when the plan was made: model runs are its cost.
    t.uuid('audit_id').references('audits.id').onDelete('SET NULL');
    t.text('title').notNullable();
    t.text('summary').notNullable();
    t.jsonb('steps').notNullable();
    t.jsonb('affected_entity_keys').notNullable().defaultTo('[]');
    t.text('risk').notNullable();
    t.text('effort').notNullable();
    t.text('source').notNullable();
    t.text('status').notNullable().defaultTo('proposed');
    t.uuid('created_by').notNullable().references('members.id');
    t.uuid('approved_by').references('members.id');
    ts(t, 'approved_at');
    ts(t, 'rejected_at');
    ts(t, 'started_at');
    ts(t, 'done_at');
    ts(t, 'verified_at');
    t.uuid('verification_audit_id').references('audits.id').onDelete('SET NULL');
    t.jsonb('verification');
    t.text('latest_rationale');
    t.uuid('agent_run_id').references('agent_runs.id').onDelete('SET NULL');
    t.integer('version').notNullable().defaultTo(1);
    t.text('last_request_key');
    t.text('workflow_id').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'updated_at').notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'status']);
    t.index(['repository_id', 'status']);
  });
  await knex.schema.createTable('remediation_findings', (t) => {
    t.uuid('remediation_id').notNullable().references('remediations.id').onDelete('CASCADE');
    t.uuid('finding_id').notNullable().references('findings.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.primary(['remediation_id', 'finding_id']);
    t.index(['finding_id']);
  });
  await knex.schema.createTable('remediation_approvals', (t) => {
    t.uuid('id').primary();
    t.uuid('remediation_id').notNullable().references('remediations.id').onDelete('CASCADE');
    t.uuid('actor_id').notNullable().references('members.id');
    t.text('actor_role').notNullable();
    t.text('authorization_scope').notNullable();
    t.text('outcome').notNullable();
    t.text('rationale').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    t.index(['remediation_id', 'created_at']);
  });
  await knex.schema.createTable('workflow_actions', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.jsonb('target').notNullable();
    t.text('reason').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.uuid('requested_by').notNullable().references('members.id');
    t.uuid('decided_by').references('members.id');
    t.text('decided_by_role');
    ts(t, 'decided_at');
    t.text('decision_rationale');
    ts(t, 'expires_at').notNullable();
    ts(t, 'executed_at');
    t.jsonb('outcome');
    t.text('error_code');
    t.text('last_request_key');
    t.text('workflow_id').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'updated_at').notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'status']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('workflow_actions');
  await knex.schema.dropTableIfExists('remediation_approvals');
  await knex.schema.dropTableIfExists('remediation_findings');
  await knex.schema.dropTableIfExists('remediations');
}
