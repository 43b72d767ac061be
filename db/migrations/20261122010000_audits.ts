/** Audit engine: uploads, audits, stages, logs, source manifests, agent runs and artifacts, idempotency keys. */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });

  await knex.schema.createTable('uploads', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('uploaded_by').notNullable().references('members.id');
    t.text('filename').notNullable();
    t.text('content_type').notNullable();
    t.text('format').notNullable();
    t.text('sha256').notNullable();
    t.bigInteger('size_bytes').notNullable();
    t.integer('file_count').notNullable();
    t.bigInteger('unpacked_bytes').notNullable();
    t.text('status').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
  });

  await knex.schema.createTable('audits', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').references('repositories.id');
    t.uuid('upload_id').references('uploads.id');
    t.uuid('created_by').references('members.id');
    t.text('audit_type').notNullable();
    t.text('status').notNullable();
    t.text('branch_ref');
    t.text('commit_sha');
    // What the client asked for (branch_ref/commit_sha above become what was resolved).
    t.text('requested_branch_ref');
    t.text('requested_commit_sha');
    t.boolean('deep_review').notNullable().defaultTo(false);
    t.boolean('scanner_only').notNullable().defaultTo(true);
    t.text('workflow_id');
    t.jsonb('source_scope').notNullable().defaultTo('{}');
    t.jsonb('source');
    t.jsonb('source_manifest').notNullable().defaultTo('{}');
    t.jsonb('coverage_gaps').notNullable().defaultTo('[]');
    t.text('context_hash');
    t.text('error_code');
    t.text('origin').notNullable().defaultTo('manual');
    t.text('origin_ref');
    t.text('trigger_reason');
    t.jsonb('profile_snapshot');
    t.jsonb('structural_gate_result');
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'updated_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'completed_at');
    t.index(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'repository_id', 'created_at', 'id']);
    t.index(['workspace_id', 'status', 'created_at', 'id']);
  });

  await knex.schema.createTable('audit_stages', (t) => {
    t.uuid('audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.text('key').notNullable();
    t.integer('position').notNullable();
    t.text('status').notNullable();
    t.integer('attempt').notNullable().defaultTo(0);
    ts(t, 'started_at');
    ts(t, 'completed_at');
    t.text('error_code');
    t.text('summary');
    t.primary(['audit_id', 'key']);
  });

  await knex.schema.createTable('audit_logs', (t) => {
    t.bigIncrements('seq').primary();
    t.uuid('audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    ts(t, 'occurred_at').notNullable().defaultTo(knex.raw('clock_timestamp()'));
    t.text('level').notNullable();
    t.text('source').notNullable();
    t.text('message').notNullable();
    t.jsonb('details');
    t.index(['audit_id', 'seq']);
  });

  await knex.schema.createTable('audit_source_files', (t) => {
    t.uuid('audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.text('path').notNullable();
    t.text('kind').notNullable();
    t.bigInteger('size').notNullable();
    t.text('sha256');
    t.text('link_target');
    t.text('source_type');
    t.boolean('stored').notNullable();
    t.primary(['audit_id', 'path']);
    t.index(['audit_id', 'source_type']);
  });

  await knex.schema.createTable('agent_artifacts', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('title').notNullable();
    t.jsonb('artifact').notNullable();
    t.specificType('evidence_ids', 'text[]').notNullable().defaultTo('{}');
    t.decimal('confidence', 6, 4).notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
  });

  await knex.schema.createTable('agent_runs', (t) => {
    t.uuid('id').primary();
    t.uuid('audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('stage').notNullable();
    t.text('agent_key').notNullable();
    t.text('agent_version').notNullable();
    t.text('model_id').notNullable();
    t.text('reasoning_effort').notNullable();
    t.integer('attempt').notNullable();
    t.text('status').notNullable();
    t.boolean('cache_hit').notNullable().defaultTo(false);
    t.boolean('model_backed').notNullable().defaultTo(false);
    t.text('cost_kind').notNullable().defaultTo('analysis');
    t.text('context_hash').notNullable();
    ts(t, 'started_at');
    ts(t, 'completed_at');
    t.text('error_code');
    t.text('error_message');
    t.integer('input_tokens').notNullable().defaultTo(0);
    t.integer('cached_input_tokens').notNullable().defaultTo(0);
    t.integer('output_tokens').notNullable().defaultTo(0);
    t.decimal('cost_usd', 18, 6).notNullable().defaultTo(0);
    t.uuid('artifact_id').references('agent_artifacts.id');
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    t.unique(['audit_id', 'agent_key', 'attempt']);
    t.index(['workspace_id', 'context_hash']);
  });

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('operation_id').notNullable();
    t.text('key').notNullable();
    t.text('request_sha256').notNullable();
    t.integer('status').notNullable();
    t.jsonb('response').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    t.primary(['workspace_id', 'operation_id', 'key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'idempotency_keys',
    'agent_runs',
    'agent_artifacts',
    'audit_source_files',
    'audit_logs',
    'audit_stages',
    'audits',
    'uploads',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
