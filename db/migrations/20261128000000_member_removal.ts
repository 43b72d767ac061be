/**
 * Members can be removed (`npm run admin -- remove-member`): the row stays, so decisions,
 * approvals, audits and the activity log keep naming who acted; `removed_at` takes the member's
 * credentials, sessions and grants out of use.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('members', (t) => {
    t.timestamp('removed_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('members', (t) => {
    t.dropColumn('removed_at');
  });
}
