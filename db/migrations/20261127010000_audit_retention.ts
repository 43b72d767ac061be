/**
 * Retention of old audits' bulk (logs, agent runs, source manifests, snapshot evidence): when an
 * audit was pruned, and the indexes the sweep needs (finished audits not yet pruned by age; the
 * runs that still use an artifact).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('audits', (t) => {
    t.timestamp('retention_pruned_at', { useTz: true });
  });
  await knex.raw(
    'CREATE INDEX audits_retention_candidates ON audits (completed_at) WHERE retention_pruned_at IS NULL AND completed_at IS NOT NULL',
  );
  await knex.raw(
    'CREATE INDEX agent_runs_artifact ON agent_runs (artifact_id) WHERE artifact_id IS NOT NULL',
  );
  await knex.raw('CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS idempotency_keys_created');
  await knex.raw('DROP INDEX IF EXISTS agent_runs_artifact');
  await knex.raw('DROP INDEX IF EXISTS audits_retention_candidates');
  await knex.schema.alterTable('audits', (t) => {
    t.dropColumn('retention_pruned_at');
  });
}
