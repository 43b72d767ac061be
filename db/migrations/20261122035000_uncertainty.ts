/**
 * Uncertainty cases: open questions about a repository's architecture (contradictions, low
 * confidence, unresolved references, missing sources). One row per identity
 * (workspace, repository, reason, scope, subject_key, field); a later snapshot that sees the
 * same question again updates the row, one that no longer sees it leaves the row as it was.
 */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('uncertainty_cases', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').references('repositories.id');
    t.uuid('snapshot_id').references('architecture_snapshots.id').onDelete('SET NULL');
    t.text('reason').notNullable();
    t.text('scope').notNullable();
    t.text('subject_key').notNullable();
    t.text('field');
    t.text('detail').notNullable();
    t.boolean('blocking').notNullable();
    t.text('state').notNullable().defaultTo('open');
    t.uuid('owner_id').references('members.id').onDelete('SET NULL');
    t.specificType('source_keys', 'text[]').notNullable();
    t.specificType('evidence_ids', 'uuid[]').notNullable();
    t.jsonb('alternatives').notNullable().defaultTo('[]');
    /** SHA-256 over what the evidence says (cited lines, claimed values): decides reopening. */
    t.text('evidence_fingerprint').notNullable();
    t.timestamp('detected_at', { useTz: true }).notNullable();
    t.timestamp('last_observed_at', { useTz: true }).notNullable();
    t.timestamp('resolved_at', { useTz: true });
    t.text('resolution_summary');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.raw(NOW));
    t.index(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'repository_id', 'state']);
  });
  await knex.raw(`
    ALTER TABLE uncertainty_cases
      ADD CONSTRAINT uncertainty_cases_state_check
        CHECK (state IN ('open', 'investigating', 'resolved', 'dismissed')),
      ADD CONSTRAINT uncertainty_cases_resolution_check
        CHECK ((state IN ('resolved', 'dismissed')) = (resolved_at IS NOT NULL));
    CREATE UNIQUE INDEX uncertainty_cases_identity ON uncertainty_cases
      (workspace_id, repository_id, reason, scope, subject_key, (coalesce(field, '')))
      WHERE repository_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('uncertainty_cases');
}
