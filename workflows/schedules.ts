/**
 * ScheduleWorkflow owns one audit schedule (workflow id `schedule-<id>`, the schedule's
 * scheduler_schedule_id). It sleeps on a Temporal timer until the next occurrence, asks an
 * activity what is due (the calendar function that serves previews, and the missed-run policy),
 * dispatches each due occurrence exactly once (an idempotent activity creates the audit row keyed
 * by occurrence, then the AuditWorkflow starts as an abandoned child, recorded in history) and
 * moves its cursor. The schedule row is the state: pause, resume, update and delete change it and
 * signal `scheduleChanged`, and the workflow re-plans. The memo and the current details show the
 * next wake-up in the Temporal UI.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { DueRun, ScheduleActivities } from '../activities/schedules';
import { REPOSITORY_ID } from '../domain/workflow-starts';
import { startAuditChild } from './audit-child';

export interface ScheduleWorkflowInput {
  scheduleId: string;
}

/** The schedule row changed (pause, resume, update, delete): plan again now. */
export const scheduleChangedSignal = defineSignal('scheduleChanged');

export interface ScheduleStatus {
  state: string;
  nextRunAt: string | null;
  dispatched: number;
  /** Plans made by this run (it continues as new after TICKS_PER_RUN). */
  ticks: number;
}
/** What the workflow is waiting for. */
export const scheduleStatusQuery = defineQuery<ScheduleStatus>('scheduleStatus');

/** Ticks per run before continue-as-new keeps the history short. */
const TICKS_PER_RUN = 100;

function errorCodeOf(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type)
    return err.cause.type;
  return 'dispatch_failed';
}

export async function ScheduleWorkflow(input: ScheduleWorkflowInput): Promise<void> {
  // Bookkeeping retries until the database is back: giving up would end the schedule.
  const act = proxyActivities<ScheduleActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  // A dispatch gives up after a few attempts; the failure is recorded and the cadence goes on.
  const dispatcher = proxyActivities<ScheduleActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
  });
  let changed = false;
  const status: ScheduleStatus = { state: 'active', nextRunAt: null, dispatched: 0, ticks: 0 };
  setHandler(scheduleChangedSignal, () => {
    changed = true;
  });
  setHandler(scheduleStatusQuery, () => status);

  const dispatch = async (run: DueRun): Promise<void> => {
    let result;
    try {
      result = await dispatcher.dispatchScheduledRun(
        input.scheduleId,
        run.occurrence,
        run.kind,
        run.reason,
      );
    } catch (err) {
      // Retries exhausted (database unreachable...): record it; this schedule goes on.
      await act.recordScheduleFailure(input.scheduleId, errorCodeOf(err));
      return;
    }
    if (result.outcome !== 'dispatched') return;
    try {
      // An audit id runs once, even if this dispatch is seen again after a restart.
      await startAuditChild(result.audit);
      status.dispatched += 1;
    } catch (err) {
      // Already started: this dispatch was seen before (the audit runs once).
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      await act.failUnstartedAudit(
        result.audit.auditId,
        err instanceof Error ? err.message : String(err),
      );
      await act.recordScheduleFailure(input.scheduleId, 'audit_start_failed');
    }
  };

  let repositoryId: string | null = null;
  for (let tick = 0; ; tick += 1) {
    changed = false;
    const plan = await act.planScheduleTick(input.scheduleId);
    if (plan.kind === 'deleted') return;
    for (const run of plan.runs) await dispatch(run);
    if (plan.kind === 'active') {
      await act.completeScheduleTick(
        input.scheduleId,
        plan.cursorTo,
        plan.missed,
        plan.runs.some((r) => r.kind === 'catch_up'),
      );
    }
    if (plan.repositoryId !== repositoryId) {
      // An update may point the schedule at another repository: keep the filter true.
      repositoryId = plan.repositoryId;
      upsertSearchAttributes([{ key: REPOSITORY_ID, value: repositoryId }]);
    }
    status.state = plan.state;
    status.nextRunAt = plan.kind === 'paused' ? null : plan.nextRunAt;
    status.ticks = tick + 1;
    upsertMemo({ state: plan.state, next_run_at: status.nextRunAt, timezone: plan.timezone });
    setCurrentDetails(
      plan.kind === 'paused'
        ? 'Paused: waiting for resume.'
        : `Next run ${plan.nextRunAt} (UTC), schedule time zone ${plan.timezone}.`,
    );
    if (tick + 1 >= TICKS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof ScheduleWorkflow>(input);
    }
    if (plan.kind === 'paused') {
      // Re-read now and then too, in case a resume's signal was lost (the row is the truth).
      await condition(() => changed, '1 hour');
    } else {
      // The timer is the wake-up operators see; a change signal wakes earlier to re-plan.
      const wait = Date.parse(plan.nextRunAt) - Date.now();
      await condition(() => changed, Math.max(wait, 1000));
    }
  }
}
