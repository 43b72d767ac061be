/**
 * Controls: the built-in catalog (one row per control and catalog version), each audit's
 * assessments, and findings (one per repository and fingerprint) with the audits that saw them.
 */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('controls', (t) => {
    t.uuid('id').primary();
    t.uuid('mapping_version_id').notNullable();
    t.text('catalog_version').notNullable();
    t.text('key').notNullable();
    t.text('title').notNullable();
    t.text('description').notNullable();
    t.text('domain').notNullable();
    t.text('severity').notNullable();
    t.jsonb('requirements').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.unique(['catalog_version', 'key']);
  });
  await knex.schema.createTable('control_assessments', (t) => {
    t.uuid('id').primary();
    t.uuid('audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('control_id').notNullable().references('controls.id');
    t.uuid('mapping_version_id').notNullable();
    t.text('control_key').notNullable();
    t.text('title').notNullable();
    t.text('description').notNullable();
    t.text('domain').notNullable();
    t.text('severity').notNullable();
    t.text('status').notNullable();
    t.text('calculation_version').notNullable();
    t.text('input_hash').notNullable();
    t.text('rationale').notNullable();
    t.text('applicability').notNullable();
    t.text('applicability_rationale');
    t.decimal('confidence', 3, 2).notNullable();
    t.jsonb('evidence_ids').notNullable();
    t.jsonb('finding_ids').notNullable();
    t.jsonb('architecture_relationship_ids').notNullable();
    t.jsonb('stale_evidence_ids').notNullable();
    t.jsonb('conflicting_evidence_ids').notNullable();
    t.jsonb('missing_requirement_keys').notNullable();
    t.uuid('exception_id');
    t.jsonb('requirements').notNullable();
    t.integer('overlay_version').notNullable().defaultTo(0);
    t.timestamp('calculated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.unique(['audit_id', 'control_key']);
  });
  await knex.schema.createTable('findings', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').references('repositories.id');
    // The repository id, or `audit:<id>` for an upload audit (its findings stand alone).
    t.text('scope_key').notNullable();
    t.uuid('control_id').notNullable().references('controls.id');
    t.text('control_key').notNullable();
    t.text('severity').notNullable();
    t.text('title').notNullable();
    t.text('detail').notNullable();
    t.text('fingerprint').notNullable();
    t.text('status').notNullable().defaultTo('open');
    t.text('note');
    t.text('entity_key');
    t.jsonb('evidence_ids').notNullable();
    t.jsonb('locations').notNullable();
    t.uuid('first_seen_audit_id').notNullable().references('audits.id');
    t.uuid('last_seen_audit_id').notNullable().references('audits.id');
    t.timestamp('first_seen_at', { useTz: true }).notNullable();
    t.timestamp('last_seen_at', { useTz: true }).notNullable();
    t.integer('occurrences').notNullable().defaultTo(1);
    t.uuid('resolved_audit_id').references('audits.id');
    t.timestamp('resolved_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.unique(['workspace_id', 'scope_key', 'fingerprint']);
    t.index(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'status', 'created_at']);
    t.index(['workspace_id', 'repository_id', 'created_at']);
  });
  await knex.schema.createTable('audit_findings', (t) => {
    t.uuid('audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.uuid('finding_id').notNullable().references('findings.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.primary(['audit_id', 'finding_id']);
    t.index(['finding_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('audit_findings');
  await knex.schema.dropTableIfExists('findings');
  await knex.schema.dropTableIfExists('control_assessments');
  await knex.schema.dropTableIfExists('controls');
}
