/** Change gates: each workspace's gate policy and the gate each audit's `changes` stage computed. */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });
  await knex.schema.createTable('gate_policies', (t) => {
    t.uuid('workspace_id').primary().references('workspaces.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.boolean('enabled').notNullable();
    t.decimal('confidence_floor', 5, 4).notNullable();
    t.jsonb('rules').notNullable();
    t.uuid('updated_by').references('members.id');
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'updated_at').notNullable().defaultTo(knex.raw(NOW));
  });
  await knex.schema.createTable('audit_gates', (t) => {
    t.uuid('audit_id').primary().references('audits.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').references('repositories.id');
    t.uuid('current_snapshot_id').notNullable();
    t.uuid('previous_snapshot_id');
    t.text('outcome').notNullable();
    t.integer('policy_version').notNullable();
    // The whole evaluation: reasons with their rules and evidence, and every change item.
    t.jsonb('result').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('audit_gates');
  await knex.schema.dropTableIfExists('gate_policies');
}
