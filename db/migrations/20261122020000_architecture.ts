/** Architecture truth: immutable snapshots per audit and the evidence they rest on. */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('architecture_snapshots', (t) => {
    t.uuid('id').primary();
    t.uuid('audit_id').notNullable().unique().references('audits.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').references('repositories.id');
    t.text('version').notNullable();
    t.text('status').notNullable();
    t.specificType('sources', 'text[]').notNullable();
    t.specificType('missing_sources', 'text[]').notNullable();
    t.decimal('source_coverage', 5, 4).notNullable();
    t.integer('entity_count').notNullable();
    t.integer('relationship_count').notNullable();
    t.jsonb('entities').notNullable();
    t.jsonb('relationships').notNullable();
    t.timestamp('generated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'repository_id', 'generated_at']);
  });
  await knex.schema.createTable('architecture_evidence', (t) => {
    t.uuid('id').primary();
    t.uuid('snapshot_id').notNullable().references('architecture_snapshots.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('source_type').notNullable();
    t.text('provider').notNullable();
    t.text('evidence_kind').notNullable();
    t.text('subject_key').notNullable();
    t.text('relationship_kind');
    t.text('object_key');
    t.jsonb('location');
    t.text('source_ref').notNullable();
    t.text('summary').notNullable();
    t.text('content_sha256').notNullable();
    t.jsonb('attributes').notNullable().defaultTo('{}');
    t.timestamp('observed_at', { useTz: true }).notNullable();
    t.integer('position').notNullable();
    t.index(['snapshot_id', 'position']);
  });
  // Snapshots are immutable once written.
  await knex.raw(`
    CREATE FUNCTION architecture_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'architecture snapshots are immutable'; END $$;
    CREATE TRIGGER architecture_snapshots_immutable BEFORE UPDATE ON architecture_snapshots
      FOR EACH ROW EXECUTE FUNCTION architecture_immutable();
    CREATE TRIGGER architecture_evidence_immutable BEFORE UPDATE ON architecture_evidence
      FOR EACH ROW EXECUTE FUNCTION architecture_immutable();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('architecture_evidence');
  await knex.schema.dropTableIfExists('architecture_snapshots');
  await knex.raw('DROP FUNCTION IF EXISTS architecture_immutable()');
}
