/**
 * Audit schedules and their dispatched runs. The API writes definitions; the ScheduleWorkflow's
 * activities read them, advance the dispatch cursor and record what each dispatch did.
 */
import type { SCHEDULE_STATES } from '../domain/contract/values';
import { scheduleWorkflowId } from '../domain/contract/workflows';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';
import type { Cadence, ScheduleRule } from '../domain/schedules/rules';

export interface ScheduleRow {
  id: string;
  workspace_id: string;
  repository_id: string;
  owner_id: string;
  name: string;
  timezone: string;
  cadence: Cadence;
  local_hour: number;
  local_minute: number;
  weekday: number | null;
  day_of_month: number | null;
  anchor_date: string | null;
  branch_ref: string | null;
  missed_run_policy: 'skip' | 'run_once';
  state: (typeof SCHEDULE_STATES)[number];
  scheduler_schedule_id: string;
  next_run_at: Date;
  last_dispatched_at: Date | null;
  last_run_at: Date | null;
  last_error_code: string | null;
  consecutive_failures: number;
  dispatch_cursor_at: Date;
  version: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** The calendar fields a client sets (create) or changes (update). */
export type ScheduleDefinition = Pick<
  ScheduleRow,
  | 'name'
  | 'repository_id'
  | 'timezone'
  | 'cadence'
  | 'local_hour'
  | 'local_minute'
  | 'weekday'
  | 'day_of_month'
  | 'anchor_date'
  | 'branch_ref'
  | 'missed_run_policy'
>;

/** The calendar rule of a stored schedule. */
export function ruleOf(row: ScheduleRow): ScheduleRule {
  return {
    timezone: row.timezone,
    cadence: row.cadence,
    localHour: row.local_hour,
    localMinute: row.local_minute,
    weekday: row.weekday,
    dayOfMonth: row.day_of_month,
    anchorDate: row.anchor_date,
  };
}

export async function insertSchedule(
  db: Knex,
  input: ScheduleDefinition & {
    id?: string;
    workspace_id: string;
    owner_id: string;
    next_run_at: Date;
    dispatch_cursor_at: Date;
  },
): Promise<ScheduleRow> {
  const id = input.id ?? crypto.randomUUID();
  const [row] = await db<ScheduleRow>('audit_schedules')
    .insert({
      ...input,
      id,
      state: 'active',
      scheduler_schedule_id: scheduleWorkflowId(id),
      created_at: input.dispatch_cursor_at,
      updated_at: input.dispatch_cursor_at,
    })
    .returning('*');
  return row!;
}

export async function findSchedule(
  db: Knex,
  workspaceId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ScheduleRow | undefined> {
  const q = db<ScheduleRow>('audit_schedules')
    .where({ workspace_id: workspaceId, id })
    .whereNull('deleted_at');
  if (options.forUpdate) q.forUpdate();
  return q.first();
}

export interface ScheduleFilter {
  repositoryId?: string;
}

/** Live schedules of a workspace, optionally of one repository, for keyset paging. */
export function schedulesQuery(
  db: Knex,
  workspaceId: string,
  f: ScheduleFilter = {},
): Keyset<ScheduleRow> {
  const q = db('audit_schedules')
    .select('*')
    .where('audit_schedules.workspace_id', workspaceId)
    .whereNull('audit_schedules.deleted_at');
  if (f.repositoryId) q.andWhere('audit_schedules.repository_id', f.repositoryId);
  return keyset(q, 'audit_schedules');
}

/** Applies a change and bumps the version (the caller has checked the version under a lock). */
export async function updateSchedule(
  db: Knex,
  id: string,
  patch: Partial<Omit<ScheduleRow, 'id' | 'workspace_id' | 'version' | 'created_at'>>,
  options: { bumpVersion: boolean },
): Promise<ScheduleRow> {
  const [row] = await db<ScheduleRow>('audit_schedules')
    .where({ id })
    .update({
      ...patch,
      updated_at: db.raw("date_trunc('milliseconds', now())") as unknown as Date,
      ...(options.bumpVersion ? { version: db.raw('version + 1') as unknown as number } : {}),
    })
    .returning('*');
  return row!;
}

/** A schedule by id alone (the worker side), deleted or not, optionally locked. */
export async function scheduleById(
  db: Knex,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ScheduleRow | undefined> {
  const q = db<ScheduleRow>('audit_schedules').where({ id });
  if (options.forUpdate) q.forUpdate();
  return q.first();
}

export interface ScheduleRunRow {
  schedule_id: string;
  occurrence_at: Date;
  audit_id: string;
  kind: 'on_time' | 'catch_up' | 'trigger';
  created_at: Date;
}

export async function findScheduleRun(
  db: Knex,
  scheduleId: string,
  occurrenceAt: Date,
): Promise<ScheduleRunRow | undefined> {
  return db<ScheduleRunRow>('audit_schedule_runs')
    .where({ schedule_id: scheduleId, occurrence_at: occurrenceAt })
    .first();
}

export async function insertScheduleRun(
  db: Knex,
  run: Omit<ScheduleRunRow, 'created_at'>,
): Promise<void> {
  await db('audit_schedule_runs').insert(run);
}

/** Marks a schedule deleted (reads stop finding it; its version and updated_at stay). */
export async function softDeleteSchedule(db: Knex, id: string): Promise<void> {
  await db('audit_schedules')
    .where({ id })
    .update({ deleted_at: db.raw("date_trunc('milliseconds', now())") });
}

/** Records a run started by hand at `at` (the definition, its version and updated_at stay). */
export async function markScheduleTriggered(db: Knex, id: string, at: Date): Promise<void> {
  await db('audit_schedules').where({ id }).update({ last_dispatched_at: at, last_run_at: at });
}

/**
 * Moves the dispatch cursor forward to `to` (never backwards). Returns what the caller records
 * about the schedule, or undefined when the cursor was already there or beyond.
 */
export async function advanceDispatchCursor(
  db: Knex,
  id: string,
  to: Date,
): Promise<Pick<ScheduleRow, 'workspace_id' | 'missed_run_policy'> | undefined> {
  const moved = await db('audit_schedules')
    .where({ id })
    .andWhere('dispatch_cursor_at', '<', to)
    .update({ dispatch_cursor_at: to })
    .returning(['workspace_id', 'missed_run_policy']);
  return moved[0] as Pick<ScheduleRow, 'workspace_id' | 'missed_run_policy'> | undefined;
}
