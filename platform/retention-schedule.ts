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
}
