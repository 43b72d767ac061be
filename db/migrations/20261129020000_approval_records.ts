/**
 * Every approval records the same fields (domain/approvals/model.ts): remediation and report
 * approvals gain `policy_version` (null: no versioned workspace policy sets their quorum), and a
 * workflow action records the scope and policy version of its decision next to its role. Rows
 * decided before this carry the only scope that could decide them, workflow_actions:approve.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  for (const table of ['remediation_approvals', 'report_approvals'])
    await knex.schema.alterTable(table, (t) => {
      t.integer('policy_version');
    });
  await knex.schema.alterTable('workflow_actions', (t) => {
    t.text('decided_by_scope');
    t.integer('decided_policy_version');
  });
  await knex('workflow_actions')
    .whereNotNull('decided_by')
    .update({ decided_by_scope: 'workflow_actions:approve' });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflow_actions', (t) => {
    t.dropColumn('decided_policy_version');
    t.dropColumn('decided_by_scope');
  });
  for (const table of ['report_approvals', 'remediation_approvals'])
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('policy_version');
    });
}
