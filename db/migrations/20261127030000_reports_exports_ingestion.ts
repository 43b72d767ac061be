/**
 * Report approvals (the approved report's content is kept, so it is served unchanged), audit
 * exports (a rendered file in the blob store, kept until `retained_until`), and evidence
 * ingestion batches with their records (evidence from outside the repository, read by the
 * repository's next audits).
 */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });
  await knex.schema.createTable('report_approvals', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    // One approval per audit: an approved report version is immutable.
    t.uuid('audit_id').notNullable().unique().references('audits.id').onDelete('CASCADE');
    t.text('report_version').notNullable();
    t.text('content_sha256').notNullable();
    t.jsonb('content').notNullable();
    t.uuid('actor_id').notNullable().references('members.id');
    t.text('actor_role').notNullable();
    t.text('authorization_scope').notNullable();
    t.text('rationale').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
  });
  await knex.schema.createTable('audit_exports', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.text('format').notNullable();
    // queued -> running -> available | failed; available -> expired (retention).
    t.text('status').notNullable();
    t.text('filename').notNullable();
    t.text('content_type').notNullable();
    t.text('sha256');
    t.bigInteger('size_bytes');
    t.integer('retention_days').notNullable();
    ts(t, 'retained_until');
    t.text('error_code');
    t.text('error_message');
    t.uuid('requested_by').notNullable().references('members.id');
    t.text('workflow_id').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'completed_at');
    ts(t, 'removed_at');
    t.index(['audit_id', 'created_at', 'id']);
    t.index(['status', 'retained_until']);
    t.index(['sha256']);
  });
  await knex.schema.createTable('evidence_ingestions', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.text('batch_key').notNullable();
    t.text('content_sha256').notNullable();
    t.integer('record_count').notNullable();
    t.jsonb('counts').notNullable();
    t.uuid('submitted_by').notNullable().references('members.id');
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    t.unique(['workspace_id', 'repository_id', 'batch_key']);
    t.index(['workspace_id', 'created_at', 'id']);
  });
  await knex.schema.createTable('ingested_evidence', (t) => {
    t.uuid('id').primary();
    t.uuid('ingestion_id').notNullable().references('evidence_ingestions.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('kind').notNullable();
    t.text('source_type').notNullable();
    t.text('provider').notNullable();
    t.text('evidence_kind').notNullable();
    t.text('subject_key').notNullable();
    t.text('relationship_kind');
    t.text('object_key');
    t.jsonb('location');
    t.text('summary').notNullable();
    t.jsonb('attributes').notNullable();
    t.text('content_sha256').notNullable();
    ts(t, 'observed_at').notNullable();
    t.index(['repository_id', 'observed_at']);
    t.index(['ingestion_id', 'position']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ingested_evidence');
  await knex.schema.dropTableIfExists('evidence_ingestions');
  await knex.schema.dropTableIfExists('audit_exports');
  await knex.schema.dropTableIfExists('report_approvals');
}
