/**
 * What each snapshot observed of each uncertainty case, as it was then. A case row follows its
 * newest observation (snapshot, detail, blocking), so an audit's report read from the case rows
 * lost the cases a later audit re-observed; the report now reads these rows. Backfilled from the
 * cases' current snapshot (all that is known of earlier observations).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('uncertainty_observations', (t) => {
    t.uuid('snapshot_id').notNullable().references('architecture_snapshots.id').onDelete('CASCADE');
    t.uuid('case_id').notNullable().references('uncertainty_cases.id').onDelete('CASCADE');
    t.text('reason').notNullable();
    t.text('subject_key').notNullable();
    t.text('detail').notNullable();
    t.boolean('blocking').notNullable();
    t.text('state').notNullable();
    t.primary(['snapshot_id', 'case_id']);
    t.index(['case_id']);
  });
  await knex.raw(`
    INSERT INTO uncertainty_observations (snapshot_id, case_id, reason, subject_key, detail, blocking, state)
    SELECT snapshot_id, id, reason, subject_key, detail, blocking, state
      FROM uncertainty_cases WHERE snapshot_id IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('uncertainty_observations');
}
