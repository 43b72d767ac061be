/**
 * Audit schedules: definitions in Postgres, each owned by a running `ScheduleWorkflow`
 * (`schedule-<id>`, the scheduler_schedule_id) that dispatches the audits. The API writes the
 * row, commits, then starts or signals the workflow; the workflow re-reads the row on every
 * signal and wake-up, so the row is the single source of truth. Preview uses the same calendar
 * function as dispatch (domain/schedules/rules.ts).
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import { stagesOf } from '../../db/audits';
import { findRepository } from '../../db/repositories';
import {
  findSchedule,
  insertSchedule,
  markScheduleTriggered,
  ruleOf,
  schedulesQuery,
  softDeleteSchedule,
  updateSchedule,
  type ScheduleDefinition,
  type ScheduleRow,
} from '../../db/schedules';
import { WORKFLOW_TYPES } from '../../domain/contract/workflows';
import { refNameProblem } from '../../domain/repositories/git-ref';
import {
  checkRule,
  localDate,
  nextOccurrences,
  type RuleInput,
} from '../../domain/schedules/rules';
import { REPOSITORY_ID, WORKSPACE_ID } from '../../domain/workflow-starts';
import {
  scheduleChangedSignal,
  type ScheduleWorkflow,
  type ScheduleWorkflowInput,
} from '../../workflows/schedules';
import { startAudit } from '../audits/operations';
import { presentAudit } from '../audits/present';
import { AuditResponse } from '../audits/schemas';
import { problems, type FieldError } from '../errors';
import {
  created,
  defineOperation,
  ok,
  operationGroup,
  route,
  started,
} from '../registry/operation';
import { WorkspaceParams } from '../schema-kit';
import type { AppServices } from '../services';
import { commitThenStart, iso, recordPrincipalWrite } from '../shared';
import { presentSchedule } from './present';
import {
  AuditScheduleCreate,
  AuditSchedulePage,
  AuditSchedulePreviewRequest,
  AuditSchedulePreviewResponse,
  AuditScheduleResponse,
  AuditScheduleUpdate,
  ScheduleListQuery,
  ScheduleParams,
} from './schemas';
import { found, listOperation, versionMismatch, recordedWrite } from '../registry/parts';

const CALENDAR_RULES =
  'Calendar rules: `local_hour`:`local_minute` is a wall-clock time in `timezone`, an IANA zone such as `Europe/Berlin` (an unknown zone is 400). `daily` runs every day. `weekly` needs `weekday` (0 = Sunday .. 6 = Saturday). `biweekly` needs `weekday` and runs on the first matching weekday on or after `anchor_date`, then every 14 days; without anchor_date it counts from the creation date in the zone (for a preview: today). `monthly` needs `day_of_month` (1..31); in a month without that day (29..31) it runs on the last day. A field the cadence does not use (`weekday` for daily/monthly, `day_of_month` for daily/weekly/biweekly) is a 400 that names it. No run falls on a local date before `anchor_date` (at most 2999-12-31). A local time skipped by a daylight-saving jump runs when the clock jumps (02:30 on a spring-forward night runs at 03:00); a local time that repeats runs once, the first time. Run times are strictly after now.';

const MISSED_RUNS =
  'Missed runs: an occurrence that passed while nothing could dispatch it (worker or server down) for longer than the grace (`SCHEDULE_MISSED_GRACE_SECONDS`, default 300) is missed. `skip` (default) runs none of them; the next on-time occurrence runs. `run_once` runs exactly one catch-up audit as soon as dispatch is possible (not an extra one when an on-time run is due at the same moment), then the cadence resumes. An occurrence never runs more than one audit, even when the workflow is retried or replayed.';

const DISPATCH =
  'Each schedule is owned by a `ScheduleWorkflow` with workflow id `schedule-<id>` (`scheduler_schedule_id`), visible in the Temporal UI with its next wake-up (memo `next_run_at`, current details and the pending timer). At each occurrence it starts an audit with origin `schedule`, origin_ref the schedule id and a trigger_reason, and records `last_dispatched_at` (when the audit was started), `last_run_at` (the occurrence it ran for) and `next_run_at`. A dispatch that fails (e.g. the repository was deleted) sets `last_error_code`; after `SCHEDULE_MAX_FAILURES` (default 3) failures in a row the state becomes `error` (resume makes it active again).';

/** Schema bounds are checked by the registry; this checks the rules no schema can state. */
function checkDefinition(def: RuleInput & { branch_ref?: string | null }) {
  const { problems: found, rule } = checkRule(def);
  const errors: FieldError[] = found.map((p) => ({ in: 'body', path: p.path, message: p.message }));
  const refProblem = def.branch_ref ? refNameProblem(def.branch_ref) : null;
  if (refProblem) errors.push({ in: 'body', path: '/branch_ref', message: refProblem });
  if (errors.length) throw problems.validationFailed(errors);
  return rule!;
}

async function assertRepository(db: Knex, workspaceId: string, repositoryId: string) {
  if (!(await findRepository(db, workspaceId, repositoryId)))
    throw problems.validationFailed([
      { in: 'body', path: '/repository_id', message: 'no such repository in this workspace' },
    ]);
}

async function loadSchedule(db: Knex, workspaceId: string, id: string, forUpdate = false) {
  return found(findSchedule(db, workspaceId, id, { forUpdate }), `Audit schedule ${id}`);
}

function workflowOptions(services: AppServices, row: ScheduleRow) {
  const args: [ScheduleWorkflowInput] = [{ scheduleId: row.id }];
  return {
    workflowId: row.scheduler_schedule_id,
    taskQueue: services.config.taskQueue,
    args,
    memo: { schedule_name: row.name, timezone: row.timezone, next_run_at: iso(row.next_run_at) },
    typedSearchAttributes: [
      { key: WORKSPACE_ID, value: row.workspace_id },
      { key: REPOSITORY_ID, value: row.repository_id },
    ],
  };
}

/**
 * Tells the schedule's workflow that its row changed, starting it when it is not running (a
 * failed start at creation, or a workflow an operator terminated). Returns false when Temporal
 * could not be reached; the change is committed either way, and a running workflow re-reads
 * the row at its next wake-up.
 */
async function notifyWorkflow(services: AppServices, row: ScheduleRow): Promise<boolean> {
  try {
    const client = await services.temporal.client();
    await client.workflow.signalWithStart<typeof ScheduleWorkflow, []>(WORKFLOW_TYPES.schedule, {
      ...workflowOptions(services, row),
      signal: scheduleChangedSignal,
      signalArgs: [],
    });
    return true;
  } catch (err) {
    services.log.warn({ err, schedule_id: row.id }, 'could not signal the schedule workflow');
    return false;
  }
}

const SCHEDULES = operationGroup('Schedules');

export const listAuditSchedules = listOperation({
  operationId: 'listAuditSchedules',
  ...route.get('/v1/workspaces/{workspace_id}/audit-schedules'),
  summary: 'List audit schedules',
  ...SCHEDULES.scope('audits:read'),
  params: WorkspaceParams,
  query: ScheduleListQuery,
  success: ok('A page of schedules, newest first.', AuditSchedulePage),
  rows: ({ db, params, query }) =>
    schedulesQuery(db, params.workspace_id, { repositoryId: query.repository_id }),
  present: presentSchedule,
});

export const createAuditSchedule = defineOperation({
  operationId: 'createAuditSchedule',
  ...route.post('/v1/workspaces/{workspace_id}/audit-schedules'),
  summary: 'Create an audit schedule',
  description: `Audits a repository (its default branch, or \`branch_ref\`) on a calendar. ${CALENDAR_RULES} ${MISSED_RUNS} ${DISPATCH} The creating member is the owner.`,
  ...SCHEDULES.scope('audits:write'),
  params: WorkspaceParams,
  body: AuditScheduleCreate,
  errors: [503],
  success: created('The new schedule.', AuditScheduleResponse),
  handler: async ({ services, db, params, body, principal, requestId, koa }) => {
    const rule = checkDefinition(body);
    await assertRepository(db, params.workspace_id, body.repository_id);
    const now = new Date();
    const anchor =
      body.anchor_date ?? (body.cadence === 'biweekly' ? localDate(now, rule.timezone) : null);
    const definition: ScheduleDefinition = {
      name: body.name,
      repository_id: body.repository_id,
      timezone: rule.timezone,
      cadence: body.cadence,
      local_hour: body.local_hour,
      local_minute: body.local_minute,
      weekday: rule.weekday,
      day_of_month: rule.dayOfMonth,
      anchor_date: anchor,
      branch_ref: body.branch_ref || null,
      missed_run_policy: body.missed_run_policy ?? 'skip',
    };
    const next = nextOccurrences({ ...rule, anchorDate: anchor }, now, 1)[0]!;
    const row = await commitThenStart(services.log, 'schedule', {
      commit: () =>
        db.transaction(async (trx) => {
          const created = await insertSchedule(trx, {
            ...definition,
            workspace_id: params.workspace_id,
            owner_id: principal.memberId,
            next_run_at: next,
            dispatch_cursor_at: now,
          });
          return recordedWrite(trx, principal, requestId, created, {
            action: 'schedule.created',
            resourceType: 'audit_schedule',
            details: { ...definition, next_run_at: iso(next) },
          });
        }),
      start: async (created) => {
        const client = await services.temporal.client();
        await client.workflow.start<typeof ScheduleWorkflow>(WORKFLOW_TYPES.schedule, {
          ...workflowOptions(services, created),
        });
      },
      ifStartFails: (created) =>
        updateSchedule(
          db,
          created.id,
          { state: 'error', last_error_code: 'workflow_start_failed' },
          { bumpVersion: true },
        ),
      unavailable:
        'The schedule was recorded but its workflow could not be started; its state is error. Resume it when the scheduler is back.',
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/audit-schedules/${row.id}`);
    return presentSchedule(row);
  },
});

export const previewAuditSchedule = defineOperation({
  operationId: 'previewAuditSchedule',
  ...route.post('/v1/workspaces/{workspace_id}/audit-schedules/preview'),
  summary: 'List the next runs of a schedule definition',
  description: `Computes the next \`count\` (1..20, default 5) run times, strictly after now, with the same function the scheduler dispatches by. Nothing is stored. ${CALENDAR_RULES}`,
  ...SCHEDULES.scope('audits:read'),
  params: WorkspaceParams,
  body: AuditSchedulePreviewRequest,
  success: ok('The next run times (UTC).', AuditSchedulePreviewResponse),
  handler: async ({ body }) => {
    const rule = checkDefinition(body);
    const runs = nextOccurrences(rule, new Date(), body.count ?? 5);
    return { timezone: rule.timezone, runs: runs.map(iso) };
  },
});

export const getAuditSchedule = defineOperation({
  operationId: 'getAuditSchedule',
  ...route.get('/v1/workspaces/{workspace_id}/audit-schedules/{schedule_id}'),
  summary: 'Get an audit schedule',
  ...SCHEDULES.scope('audits:read'),
  params: ScheduleParams,
  success: ok('The schedule.', AuditScheduleResponse),
  handler: async ({ db, params }) =>
    presentSchedule(await loadSchedule(db, params.workspace_id, params.schedule_id)),
});

const CALENDAR_FIELDS = [
  'timezone',
  'cadence',
  'local_hour',
  'local_minute',
  'weekday',
  'day_of_month',
  'anchor_date',
] as const;

export const updateAuditSchedule = defineOperation({
  operationId: 'updateAuditSchedule',
  ...route.patch('/v1/workspaces/{workspace_id}/audit-schedules/{schedule_id}'),
  summary: 'Change an audit schedule',
  description: `Changes the given fields when \`expected_version\` is the current version (else 409 version_mismatch and nothing changes). The result must satisfy the calendar rules; a changed calendar takes effect from now (next_run_at is recomputed; occurrences before the change are not missed runs). ${CALENDAR_RULES}`,
  ...SCHEDULES.scope('audits:write'),
  params: ScheduleParams,
  body: AuditScheduleUpdate,
  errors: [409],
  success: ok('The changed schedule.', AuditScheduleResponse),
  handler: async ({ services, db, params, body, principal, requestId }) => {
    const { expected_version: expected, ...patch } = body;
    const row = await db.transaction(async (trx) => {
      const before = await loadSchedule(trx, params.workspace_id, params.schedule_id, true);
      if (before.version !== expected) {
        throw versionMismatch('audit schedule', before.version, expected, 'getAuditSchedule');
      }
      const merged = {
        timezone: patch.timezone ?? before.timezone,
        cadence: patch.cadence ?? before.cadence,
        local_hour: patch.local_hour ?? before.local_hour,
        local_minute: patch.local_minute ?? before.local_minute,
        weekday: patch.weekday !== undefined ? patch.weekday : before.weekday,
        day_of_month: patch.day_of_month !== undefined ? patch.day_of_month : before.day_of_month,
        anchor_date: patch.anchor_date !== undefined ? patch.anchor_date : before.anchor_date,
        branch_ref: patch.branch_ref !== undefined ? patch.branch_ref || null : before.branch_ref,
      };
      const rule = checkDefinition(merged);
      if (patch.repository_id !== undefined)
        await assertRepository(trx, params.workspace_id, patch.repository_id);
      const calendarChanged = CALENDAR_FIELDS.some(
        (k) => merged[k] !== before[k] && !(k === 'timezone' && rule.timezone === before.timezone),
      );
      const now = new Date();
      const anchor =
        merged.anchor_date ??
        (merged.cadence === 'biweekly' ? localDate(now, rule.timezone) : null);
      const changes: Partial<ScheduleRow> = {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.repository_id !== undefined ? { repository_id: patch.repository_id } : {}),
        ...(patch.missed_run_policy !== undefined
          ? { missed_run_policy: patch.missed_run_policy }
          : {}),
        branch_ref: merged.branch_ref,
        timezone: rule.timezone,
        cadence: rule.cadence,
        local_hour: rule.localHour,
        local_minute: rule.localMinute,
        weekday: rule.weekday,
        day_of_month: rule.dayOfMonth,
        anchor_date: anchor,
      };
      if (calendarChanged) {
        // The new calendar starts now: earlier occurrences of it were never due.
        changes.dispatch_cursor_at = now;
        changes.next_run_at = nextOccurrences({ ...rule, anchorDate: anchor }, now, 1)[0]!;
      }
      const after = await updateSchedule(trx, before.id, changes, { bumpVersion: true });
      const changed = Object.fromEntries(
        Object.keys(patch)
          .filter(
            (k) =>
              JSON.stringify(before[k as keyof ScheduleRow]) !==
              JSON.stringify(after[k as keyof ScheduleRow]),
          )
          .map((k) => [
            k,
            { from: before[k as keyof ScheduleRow], to: after[k as keyof ScheduleRow] },
          ]),
      );
      return recordedWrite(trx, principal, requestId, after, {
        action: 'schedule.updated',
        resourceType: 'audit_schedule',
        details: { name: after.name, version: after.version, changes: changed },
      });
    });
    await notifyWorkflow(services, row);
    return presentSchedule(row);
  },
});

export const deleteAuditSchedule = defineOperation({
  operationId: 'deleteAuditSchedule',
  ...route.delete('/v1/workspaces/{workspace_id}/audit-schedules/{schedule_id}'),
  summary: 'Delete an audit schedule',
  description:
    'Stops the schedule: its workflow is terminated and it disappears from reads. Audits it already started keep running and keep their origin_ref.',
  ...SCHEDULES.scope('audits:write'),
  params: ScheduleParams,
  success: ok('The deleted schedule as it was.', AuditScheduleResponse),
  handler: async ({ services, db, params, principal, requestId }) => {
    const row = await db.transaction(async (trx) => {
      const before = await loadSchedule(trx, params.workspace_id, params.schedule_id, true);
      await softDeleteSchedule(trx, before.id);
      return recordedWrite(trx, principal, requestId, before, {
        action: 'schedule.deleted',
        resourceType: 'audit_schedule',
        details: { name: before.name },
      });
    });
    try {
      const client = await services.temporal.client();
      await client.workflow
        .getHandle(row.scheduler_schedule_id)
        .terminate(`audit schedule ${row.id} deleted`);
    } catch (err) {
      // Not running, or the scheduler is unreachable: the workflow exits when it next wakes
      // and finds the row deleted.
      if (!(err instanceof WorkflowNotFoundError))
        services.log.warn({ err, schedule_id: row.id }, 'could not stop the schedule workflow');
    }
    return presentSchedule(row);
  },
});

function stateChange(options: {
  operationId: string;
  path: string;
  summary: string;
  description: string;
  from: readonly ScheduleRow['state'][];
  to: ScheduleRow['state'];
  action: string;
}) {
  return defineOperation({
    operationId: options.operationId,
    method: 'post',
    path: `/v1/workspaces/{workspace_id}/audit-schedules/{schedule_id}/${options.path}`,
    summary: options.summary,
    description: options.description,
    tag: 'Schedules',
    access: { kind: 'scope', scope: 'audits:write' },
    params: ScheduleParams,
    errors: [409, 503],
    success: ok('The schedule.', AuditScheduleResponse),
    handler: async ({ services, db, params, principal, requestId }) => {
      const row = await db.transaction(async (trx) => {
        const before = await loadSchedule(trx, params.workspace_id, params.schedule_id, true);
        if (!options.from.includes(before.state)) {
          throw problems.conflict(
            'invalid_transition',
            `Audit schedule ${before.id} is ${before.state}; it cannot be ${options.path}d.`,
            `Only a schedule that is ${options.from.join(' or ')} can be ${options.path}d.`,
            { state: before.state },
          );
        }
        const now = new Date();
        const changes: Partial<ScheduleRow> = { state: options.to };
        if (options.to === 'active') {
          // Resuming starts from now: occurrences while paused are not missed runs.
          changes.dispatch_cursor_at = now;
          changes.next_run_at = nextOccurrences(ruleOf(before), now, 1)[0]!;
          changes.consecutive_failures = 0;
        }
        const after = await updateSchedule(trx, before.id, changes, { bumpVersion: true });
        await recordPrincipalWrite(trx, principal, requestId, {
          action: options.action,
          resourceType: 'audit_schedule',
          resourceId: before.id,
          details: { name: after.name, from: before.state, to: after.state },
        });
        return after;
      });
      if (!(await notifyWorkflow(services, row)) && options.to === 'active') {
        // Resume may be what starts a workflow that never started; without one nothing runs.
        await updateSchedule(
          db,
          row.id,
          { state: 'error', last_error_code: 'workflow_start_failed' },
          { bumpVersion: true },
        );
        throw problems.unavailable(
          'workflow_engine',
          'The scheduler could not be reached, so the schedule could not be resumed; its state is error. Resume it again when the scheduler is back.',
          { schedule_id: row.id },
        );
      }
      return presentSchedule(row);
    },
  });
}

export const pauseAuditSchedule = stateChange({
  operationId: 'pauseAuditSchedule',
  path: 'pause',
  summary: 'Pause an audit schedule',
  description:
    'The schedule stops dispatching until resumed (an active or error schedule can be paused; a paused one is 409 invalid_transition). Its workflow keeps running, waiting for resume.',
  from: ['active', 'error'],
  to: 'paused',
  action: 'schedule.paused',
});

export const resumeAuditSchedule = stateChange({
  operationId: 'resumeAuditSchedule',
  path: 'resume',
  summary: 'Resume an audit schedule',
  description:
    'A paused (or error) schedule becomes active; next_run_at is recomputed from now, and occurrences that passed while it was paused do not run (they are not missed runs). An active schedule is 409 invalid_transition. Starts the schedule workflow again if it is not running.',
  from: ['paused', 'error'],
  to: 'active',
  action: 'schedule.resumed',
});

export const triggerAuditSchedule = defineOperation({
  operationId: 'triggerAuditSchedule',
  ...route.post('/v1/workspaces/{workspace_id}/audit-schedules/{schedule_id}/trigger'),
  summary: 'Run one audit of a schedule now',
  description:
    "Starts one audit now with the schedule's repository and branch (origin `schedule`, origin_ref the schedule id), whatever the schedule's state; the calendar is unchanged. A deleted repository is 409 repository_deleted.",
  ...SCHEDULES.scope('audits:write'),
  params: ScheduleParams,
  idempotent: true,
  errors: [409, 503],
  success: started('The queued audit.', AuditResponse),
  handler: async ({ services, db, params, principal, requestId, koa, newId }) => {
    const schedule = await loadSchedule(db, params.workspace_id, params.schedule_id);
    if (!(await findRepository(db, schedule.workspace_id, schedule.repository_id))) {
      throw problems.conflict(
        'repository_deleted',
        `The repository of audit schedule ${schedule.id} was deleted.`,
        'Point the schedule at another repository (updateAuditSchedule) or delete it.',
      );
    }
    const audit = await startAudit(services, principal, requestId, newId(), {
      repository_id: schedule.repository_id,
      upload_id: null,
      audit_type: 'repository',
      branch_ref: schedule.branch_ref,
      commit_sha: null,
      deep_review: false,
      source_scope: {},
      profile_snapshot: null,
      origin: 'schedule',
      origin_ref: schedule.id,
      trigger_reason: `triggered now by ${principal.memberLogin}`,
    });
    await db.transaction(async (trx) => {
      await markScheduleTriggered(trx, schedule.id, audit.created_at);
      await recordPrincipalWrite(trx, principal, requestId, {
        action: 'schedule.triggered',
        resourceType: 'audit_schedule',
        resourceId: schedule.id,
        details: { name: schedule.name, audit_id: audit.id },
      });
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/audits/${audit.id}`);
    return presentAudit(audit, (await stagesOf(db, [audit.id])).get(audit.id) ?? []);
  },
});
