/** Change sets: declared intent (candidate) and what each audit saw change (observed). */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });
  await knex.schema.createTable('change_sets', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.text('state').notNullable();
    t.text('change_key').notNullable();
    t.text('source_ref').notNullable();
    t.text('trigger').notNullable();
    t.text('reason').notNullable();
    t.uuid('actor_id').references('members.id');
    // The audit whose changes stage observed the set (observed sets only).
    t.uuid('audit_id').references('audits.id').onDelete('CASCADE');
    t.uuid('baseline_snapshot_id');
    t.uuid('result_snapshot_id');
    t.uuid('reconciled_change_set_id').references('change_sets.id').onDelete('SET NULL');
    t.jsonb('normalized_changes').notNullable();
    t.jsonb('candidate_payload');
    t.jsonb('impact_result');
    t.jsonb('gate_result');
    t.jsonb('accuracy');
    ts(t, 'occurred_at').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'updated_at').notNullable().defaultTo(knex.raw(NOW));
    t.unique(['repository_id', 'state', 'change_key']);
    t.unique(['audit_id']);
    t.index(['workspace_id', 'repository_id', 'created_at', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('change_sets');
}
