/**
 * The sweeps' Temporal Schedules: `retention-sweep` starts a RetentionWorkflow every
 * RETENTION_SWEEP_INTERVAL_MINUTES, `audit-recovery` an AuditRecoveryWorkflow every
 * AUDIT_RECOVERY_INTERVAL_MINUTES. Created at worker / `npm start` boot; when one exists already,
 * its interval, task queue, arguments and policies are brought to the configured ones (a pause
 * set by an operator is kept).
 */
import {
  AUDIT_RECOVERY_SCHEDULE_ID,
  RETENTION_SCHEDULE_ID,
  WORKFLOW_TYPES,
} from '../domain/contract/workflows';
import {
  isGrpcDeadlineError,
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleHandle,
} from '@temporalio/client';
import type { Config } from './config';
import type { AuditRecoveryWorkflow } from '../workflows/recovery';
import type { RetentionWorkflow } from '../workflows/retention';

export async function ensureRetentionSchedule(
  client: Client,
  options: { taskQueue: string; intervalMinutes: number; scheduleId?: string },
): Promise<ScheduleHandle> {
  return ensureSweepSchedule(client, {
    scheduleId: options.scheduleId ?? RETENTION_SCHEDULE_ID,
    workflowType: WORKFLOW_TYPES.retention,
    args: [{}] as Parameters<typeof RetentionWorkflow>,
    taskQueue: options.taskQueue,
    intervalMinutes: options.intervalMinutes,
  });
}

/** Creates (or brings up to date) both sweeps' schedules, as the configuration says. */
export async function ensureSweepSchedules(
  client: Client,
  config: Pick<
    Config,
    | 'taskQueue'
    | 'retentionSweepIntervalMinutes'
    | 'auditRecoveryIntervalMinutes'
    | 'auditStartGraceSeconds'
  >,
): Promise<void> {
  await ensureRetentionSchedule(client, {
    taskQueue: config.taskQueue,
    intervalMinutes: config.retentionSweepIntervalMinutes,
  });
  await ensureSweepSchedule(client, {
    scheduleId: AUDIT_RECOVERY_SCHEDULE_ID,
    workflowType: WORKFLOW_TYPES.auditRecovery,
    args: [{ graceSeconds: config.auditStartGraceSeconds }] as Parameters<
      typeof AuditRecoveryWorkflow
    >,
    taskQueue: config.taskQueue,
    intervalMinutes: config.auditRecoveryIntervalMinutes,
  });
}

async function ensureSweepSchedule(
  client: Client,
  options: {
    scheduleId: string;
    workflowType: string;
    args: unknown[];
    taskQueue: string;
    intervalMinutes: number;
  },
): Promise<ScheduleHandle> {
  const { scheduleId } = options;
  const spec = { intervals: [{ every: `${options.intervalMinutes}m` as const }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: options.workflowType,
    workflowId: scheduleId,
    taskQueue: options.taskQueue,
    args: options.args,
  };
  // A sweep still running when the next is due makes the next one pointless: skip it.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' };
  return withDeadlineRetry(async () => {
    try {
      return await client.schedule.create({ scheduleId, spec, action, policies });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      const handle = client.schedule.getHandle(scheduleId);
      await handle.update((previous) => ({
        spec,
        action,
        policies,
        state: { paused: previous.state.paused, note: previous.state.note },
      }));
      return handle;
    }
  });
}

/** Attempts of a schedule call that ran out of time, and the first wait between them (doubled). */
const SCHEDULE_ATTEMPTS = 5;
const SCHEDULE_RETRY_MS = 1_000;

/**
 * A Temporal server that has just restarted on kept data (a second `npm start`) can answer a
 * schedule's describe or update with DEADLINE_EXCEEDED until it has loaded the schedule's
 * internal workflow; the call is idempotent (create, else update to the configured values), so
 * it is tried again a few times (1, 2, 4, 8 s apart) before boot fails. Other errors fail at once.
 */
async function withDeadlineRetry<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= SCHEDULE_ATTEMPTS || !isGrpcDeadlineError(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, SCHEDULE_RETRY_MS * 2 ** (attempt - 1)));
    }
  }
}
