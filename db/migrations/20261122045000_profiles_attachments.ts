/**
 * Audit profiles (named, versioned audit settings of a repository) and audit attachments (files
 * kept beside an audit for a retention period, then removed by the retention sweep).
 */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_profiles', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('branch_ref').notNullable();
    t.text('purpose').notNullable().defaultTo('');
    t.jsonb('source_scope');
    t.integer('version').notNullable().defaultTo(1);
    t.uuid('created_by').notNullable().references('members.id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    // Soft delete: audits keep their profile_snapshot, schedules keep a resolvable reference.
    t.timestamp('deleted_at', { useTz: true });
    t.index(['repository_id', 'created_at', 'id']);
    t.index(['workspace_id', 'created_at', 'id']);
  });
  await knex.raw(
    'CREATE UNIQUE INDEX audit_profiles_repository_name_live ON audit_profiles (repository_id, lower(name)) WHERE deleted_at IS NULL',
  );

  await knex.schema.createTable('audit_attachments', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.uuid('upload_id').notNullable().references('uploads.id');
    t.uuid('uploaded_by').notNullable().references('members.id');
    t.text('filename').notNullable();
    t.text('content_type').notNullable();
    t.text('sha256').notNullable();
    t.bigInteger('size_bytes').notNullable();
    t.text('status').notNullable().defaultTo('available');
    t.integer('retention_days').notNullable();
    t.timestamp('retained_until', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.timestamp('removed_at', { useTz: true });
    t.index(['audit_id', 'created_at', 'id']);
    t.index(['upload_id']);
  });
  await knex.raw(
    "ALTER TABLE audit_attachments ADD CONSTRAINT audit_attachments_status CHECK (status IN ('available', 'deleted', 'expired'))",
  );
  // The sweep's query, and the "is this blob still held" checks of blob release.
  await knex.raw(
    "CREATE INDEX audit_attachments_due ON audit_attachments (retained_until) WHERE status = 'available'",
  );
  await knex.raw(
    "CREATE INDEX audit_attachments_live_sha256 ON audit_attachments (sha256) WHERE status = 'available'",
  );
  await knex.schema.alterTable('uploads', (t) => t.index(['sha256']));
  await knex.schema.alterTable('audits', (t) => t.index(['upload_id']));
  await knex.schema.alterTable('audit_source_files', (t) => t.index(['sha256']));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('audit_source_files', (t) => t.dropIndex(['sha256']));
  await knex.schema.alterTable('audits', (t) => t.dropIndex(['upload_id']));
  await knex.schema.alterTable('uploads', (t) => t.dropIndex(['sha256']));
  await knex.schema.dropTableIfExists('audit_attachments');
  await knex.schema.dropTableIfExists('audit_profiles');
}
