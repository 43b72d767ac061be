/**
 * AuditWorkflow owns one audit from start to end: stages in order (code, cloud and cicd in
 * parallel), each agent as its own activity with a retry policy, and a final state written even
 * when the run is cancelled (in a non-cancellable scope). Deterministic: all I/O is in activities.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { AuditActivities } from '../activities/audit';
import type { PlannedStage } from '../activities/audit-types';
import { AUDIT_STATUS } from './search-attributes';
import { notifyDecisions } from './decision-notify';

export interface AuditWorkflowInput {
  auditId: string;
  /** Activity timing, fixed at start so replays see the same values. */
  heartbeatTimeoutSeconds: number;
  maxAttempts: number;
}

export const AUDIT_WORKFLOW = 'AuditWorkflow';

/** The stable error code carried by a failed activity (its ApplicationFailure type). */
function errorCodeOf(err: unknown): string {
  if (err instanceof ActivityFailure) {
    if (err.cause instanceof ApplicationFailure && err.cause.type) return err.cause.type;
    if (err.cause instanceof TimeoutFailure) return 'activity_timeout';
  }
  if (err instanceof ApplicationFailure && err.type) return err.type;
  return 'internal_error';
}

class StageFailed extends Error {
  constructor(
    readonly stage: string,
    readonly code: string,
  ) {
    super(`stage ${stage} failed: ${code}`);
  }
}

export async function AuditWorkflow(
  input: AuditWorkflowInput,
): Promise<{ status: string; errorCode: string | null }> {
  // Bookkeeping (audit and stage rows, logs) is quick database work: local activities run in
  // the workflow's worker without a task-queue round trip, which keeps orchestration overhead low.
  const book = proxyLocalActivities<AuditActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
  });
  const work = proxyActivities<AuditActivities>({
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: `${input.heartbeatTimeoutSeconds} seconds`,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: input.maxAttempts,
    },
  });
  const setStatus = (status: string) =>
    upsertSearchAttributes([{ key: AUDIT_STATUS, value: status }]);

  const { auditId } = input;
  const plan = await book.beginAudit(auditId);
  setStatus('running');

  const runStage = async (stage: PlannedStage): Promise<void> => {
    if (stage.skip) {
      await book.stageFinished(auditId, stage.key, {
        status: 'skipped',
        summary: stage.skip,
        errorCode: null,
      });
      return;
    }
    await book.stageStarted(auditId, stage.key);
    const summaries: string[] = [];
    try {
      if (stage.key === 'source') summaries.push((await work.acquireSource(auditId)).summary);
      for (const agent of stage.agents)
        summaries.push((await work.runAgent(auditId, agent)).summary);
      if (stage.key === 'reconcile')
        summaries.push((await work.persistArchitecture(auditId)).summary);
      if (stage.key === 'controls' && patched('persist-controls'))
        summaries.push((await work.persistControls(auditId)).summary);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const code = errorCodeOf(err);
      await book.stageFinished(auditId, stage.key, {
        status: 'failed',
        summary: summaries.join('; ') || null,
        errorCode: code,
      });
      throw new StageFailed(stage.key, code);
    }
    await book.stageFinished(auditId, stage.key, {
      status: 'completed',
      summary: summaries.join('; ') || 'nothing to do',
      errorCode: null,
    });
  };

  const byKey = new Map(plan.stages.map((s) => [s.key, s]));
  const stage = (key: PlannedStage['key']) => byKey.get(key)!;

  try {
    await runStage(stage('source'));
    await runStage(stage('inventory'));
    // The three analysis stages run side by side; the audit fails if any of them failed.
    const parallel = await Promise.allSettled([
      runStage(stage('code')),
      runStage(stage('cloud')),
      runStage(stage('cicd')),
    ]);
    const rejected = parallel.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    const cancelled = rejected.find((r) => isCancellation(r.reason));
    if (cancelled ?? rejected[0]) throw (cancelled ?? rejected[0])!.reason;
    for (const key of ['reconcile', 'controls', 'changes', 'report'] as const)
      await runStage(stage(key));
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() =>
        book.finishAudit(auditId, 'cancelled', 'cancelled'),
      );
      setStatus('cancelled');
      throw err;
    }
    const code = err instanceof StageFailed ? err.code : errorCodeOf(err);
    await book.finishAudit(auditId, 'failed', code);
    setStatus('failed');
    return { status: 'failed', errorCode: code };
  }
  await book.finishAudit(auditId, 'completed', null);
  setStatus('completed');
  // Decisions waiting for this repository's next snapshot re-evaluate their criteria.
  if (patched('notify-decisions')) await notifyDecisions(auditId);
  return { status: 'completed', errorCode: null };
}
