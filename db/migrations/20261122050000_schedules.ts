/** Audit schedules and the audits they dispatched (one row per occurrence: exactly-once). */
import type { Knex } from 'knex';

const NOW = "date_trunc('milliseconds', now())";

export async function up(knex: Knex): Promise<void> {
  const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true });

  await knex.schema.createTable('audit_schedules', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('repository_id').notNullable().references('repositories.id');
    t.uuid('owner_id').notNullable().references('members.id');
    t.text('name').notNullable();
    t.text('timezone').notNullable();
    t.text('cadence').notNullable();
    t.integer('local_hour').notNullable();
    t.integer('local_minute').notNullable();
    t.integer('weekday');
    t.integer('day_of_month');
    // YYYY-MM-DD in the schedule's zone, kept as text: a SQL date would pass through a JS Date.
    t.text('anchor_date');
    t.text('branch_ref');
    t.text('missed_run_policy').notNullable();
    t.text('state').notNullable();
    t.text('scheduler_schedule_id').notNullable();
    ts(t, 'next_run_at').notNullable();
    ts(t, 'last_dispatched_at');
    ts(t, 'last_run_at');
    t.text('last_error_code');
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    // Occurrences at or before this instant are handled (dispatched, skipped or paused over).
    ts(t, 'dispatch_cursor_at').notNullable();
    t.integer('version').notNullable().defaultTo(1);
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'updated_at').notNullable().defaultTo(knex.raw(NOW));
    ts(t, 'deleted_at');
    t.index(['workspace_id', 'created_at', 'id']);
  });
  await knex.raw(`ALTER TABLE audit_schedules
    ADD CONSTRAINT audit_schedules_cadence_check CHECK (cadence IN ('daily','weekly','biweekly','monthly')),
    ADD CONSTRAINT audit_schedules_state_check CHECK (state IN ('active','paused','error')),
    ADD CONSTRAINT audit_schedules_policy_check CHECK (missed_run_policy IN ('skip','run_once'))`);

  await knex.schema.createTable('audit_schedule_runs', (t) => {
    t.uuid('schedule_id').notNullable().references('audit_schedules.id').onDelete('CASCADE');
    // The occurrence this audit runs for; the key that makes a dispatch happen at most once.
    ts(t, 'occurrence_at').notNullable();
    t.uuid('audit_id').notNullable().references('audits.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.raw(NOW));
    t.primary(['schedule_id', 'occurrence_at']);
    t.index(['audit_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('audit_schedule_runs');
  await knex.schema.dropTableIfExists('audit_schedules');
}
