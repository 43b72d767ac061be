/**
 * Admission of audits: when an audit's workflow first asked to run (it waits in line from then
 * on; a queued audit whose workflow never started is not in line and holds no one up).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('audits', (t) => {
    t.timestamp('admission_requested_at', { useTz: true }).nullable();
  });
  await knex.raw(
    `CREATE INDEX audits_admission_line ON audits (admission_requested_at, id) WHERE status = 'queued' AND admission_requested_at IS NOT NULL`,
  );
  await knex.raw(
    `CREATE INDEX audits_running_by_workspace ON audits (workspace_id) WHERE status = 'running'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS audits_running_by_workspace');
  await knex.raw('DROP INDEX IF EXISTS audits_admission_line');
  await knex.schema.alterTable('audits', (t) => {
    t.dropColumn('admission_requested_at');
  });
}
