/**
 * Idempotency keys become claims: a row is inserted (state `in_progress`, with the id of the
 * resource the request will create) before the work runs, and completed with the response after.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.text('state').notNullable().defaultTo('completed');
    t.uuid('claim_id');
    t.timestamp('claimed_at', { useTz: true });
    t.uuid('resource_id');
    t.integer('status').nullable().alter();
    t.jsonb('response').nullable().alter();
    t.check(
      "(state = 'completed' AND status IS NOT NULL AND response IS NOT NULL) OR (state = 'in_progress' AND claim_id IS NOT NULL AND claimed_at IS NOT NULL)",
      [],
      'idempotency_keys_state_check',
    );
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('idempotency_keys').where({ state: 'in_progress' }).delete();
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropChecks(['idempotency_keys_state_check']);
    t.dropColumns('state', 'claim_id', 'claimed_at', 'resource_id');
    t.integer('status').notNullable().alter();
    t.jsonb('response').notNullable().alter();
  });
}
