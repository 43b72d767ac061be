/** Rows of the schedules feature as API responses. */
import { type ScheduleRow } from '../../db/schedules';
import { iso, isoOrNull } from '../shared';

export function presentSchedule(row: ScheduleRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    repository_id: row.repository_id,
    owner_id: row.owner_id,
    name: row.name,
    timezone: row.timezone,
    cadence: row.cadence,
    local_hour: row.local_hour,
    local_minute: row.local_minute,
    weekday: row.weekday,
    day_of_month: row.day_of_month,
    anchor_date: row.anchor_date,
    branch_ref: row.branch_ref,
    missed_run_policy: row.missed_run_policy,
    state: row.state,
    scheduler_schedule_id: row.scheduler_schedule_id,
    next_run_at: iso(row.next_run_at),
    last_dispatched_at: isoOrNull(row.last_dispatched_at),
    last_run_at: isoOrNull(row.last_run_at),
    last_error_code: row.last_error_code,
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
