/**
 * The `retention-sweep` Temporal Schedule: starts a RetentionWorkflow every
 * RETENTION_SWEEP_INTERVAL_MINUTES. Created at worker / `npm start` boot; when it exists already,
 * its interval, task queue and policies are brought to the configured ones (a pause set by an
 * operator is kept).
 */
import { RETENTION_SCHEDULE_ID, WORKFLOW_TYPES } from '../domain/contract/workflows';
import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleHandle,
} from '@temporalio/client';
import type { RetentionWorkflow } from '../workflows/retention';

export async function ensureRetentionSchedule(
  client: Client,
  options: { taskQueue: string; intervalMinutes: number; scheduleId?: string },
): Promise<ScheduleHandle> {
  const scheduleId = options.scheduleId ?? RETENTION_SCHEDULE_ID;
  const spec = { intervals: [{ every: `${options.intervalMinutes}m` as const }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: WORKFLOW_TYPES.retention,
    workflowId: scheduleId,
    taskQueue: options.taskQueue,
    args: [{}] as Parameters<typeof RetentionWorkflow>,
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
