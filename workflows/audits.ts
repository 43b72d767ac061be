/**
 * AuditWorkflow owns one audit from start to end: stages in order (code, cloud and cicd in
 * parallel), each agent as its own activity with a retry policy, and a final state written even
 * when the run is cancelled (in a non-cancellable scope). Deterministic: all I/O is in activities.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  startChild,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { AuditActivities } from '../activities/audits';
import type { AdmissionActivities } from '../activities/audits/admission';
import type {
  AuditPlan,
  PlannedStage,
  StageMark,
  StageOutcome,
  StepMarks,
} from '../activities/audits/types';
import { WORKFLOW_TYPES } from '../domain/contract/workflows';
import {
  AUDIT_STATUS,
  auditStartOptions,
  type AuditWorkflowInput,
} from '../domain/workflow-starts';
import { notifyDecisions } from './decision-notify';
import { notifyRemediations } from './remediation-notify';
import { publishToForge } from './integrations';

/** The stable error code carried by a failed activity (its ApplicationFailure type). */
export function errorCodeOf(err: unknown): string {
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
  setStatus('running');

  try {
    // Admission (MAX_RUNNING_AUDITS*): wait in line on a durable timer, holding no worker slot.
    // Audits recorded before admission existed never asked (docs/decisions.md, versioning).
    if (input.admission && patched('audit-admission')) await waitForAdmission(auditId);
    await runStages(auditId, book, work);
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
    if (patched('integration-publish')) await publishToForge(auditId);
    return { status: 'failed', errorCode: code };
  }
  setStatus('completed');
  // Decisions waiting for this repository's next snapshot re-evaluate their criteria.
  await notifyDecisions(auditId);
  // Done remediations of the repository check whether their findings are resolved (audits
  // recorded before remediations existed did not: docs/decisions.md, workflow versioning).
  if (patched('notify-remediations')) await notifyRemediations(auditId);
  // An audit a webhook started publishes its gate back to the forge (a child left running).
  if (patched('integration-publish')) await publishToForge(auditId);
  return { status: 'completed', errorCode: null };
}

/** Asks for a running slot until given one, every 2 s (a local activity: no queue round trip). */
async function waitForAdmission(auditId: string): Promise<void> {
  const admission = proxyLocalActivities<AdmissionActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
  });
  for (let first = true; ; first = false) {
    if ((await admission.admitAudit(auditId, first)).admitted) return;
    await sleep('2 seconds');
  }
}

type Book = ReturnType<typeof proxyLocalActivities<AuditActivities>>;
type Work = ReturnType<typeof proxyActivities<AuditActivities>>;

/** The StageFailed for a step's error; a cancellation is rethrown as it is. */
function stageFailure(err: unknown, stage: string): StageFailed {
  if (isCancellation(err)) throw err;
  return new StageFailed(stage, errorCodeOf(err));
}

/**
 * The values of stages that ran side by side, or the failure that ends the audit: a
 * cancellation first, else the first failure in stage order.
 */
function allOrFirstFailure<T>(results: PromiseSettledResult<T>[]): T[] {
  const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  const failure = rejected.find((r) => isCancellation(r.reason)) ?? rejected[0];
  if (failure) throw failure.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** One work step of a stage, given the marks it applies. */
type Step = (marks: StepMarks) => Promise<StageOutcome>;

function stepsOf(
  auditId: string,
  stage: PlannedStage,
  work: Work,
  book: Book,
  needsBaseline: boolean,
): Step[] {
  const steps: Step[] = [];
  if (stage.key === 'source') steps.push((m) => work.acquireSource(auditId, m));
  for (const agent of stage.agents) steps.push((m) => work.runAgent(auditId, agent, m));
  if (stage.key === 'reconcile') steps.push((m) => work.persistArchitecture(auditId, m));
  if (stage.key === 'controls') steps.push((m) => work.persistControls(auditId, m));
  // Audits recorded before the gate existed ran no step here (docs/decisions.md, versioning).
  if (stage.key === 'changes' && patched('changes-gate')) {
    // An audit of another branch is gated against the default branch at the merge-base, audited
    // first when it never was (audits recorded before this ran no such step).
    const baseline = needsBaseline && patched('baseline-audit');
    steps.push(async (m) => {
      if (baseline) await runBaseline(auditId, work, book);
      return work.evaluateChanges(auditId, m);
    });
  }
  return steps;
}

/** How long a gate waits for a baseline audit another workflow runs, polling every 10 s. */
const BASELINE_POLLS = 360;

/**
 * Runs the default branch's audit at the merge-base as a child (its own workflow, left running
 * if this one ends), or waits for it when another branch's audit already started it. Its failure
 * is not this audit's: the gate then says it has no baseline at the merge-base.
 */
async function runBaseline(auditId: string, work: Work, book: Book): Promise<void> {
  const start = await work.ensureBaselineAudit(auditId);
  if (!start) return;
  try {
    const child = await startChild<typeof AuditWorkflow>(WORKFLOW_TYPES.audit, {
      ...auditStartOptions(start),
      taskQueue: workflowInfo().taskQueue,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
    await child.result().catch((err: unknown) => {
      if (isCancellation(err)) throw err;
    });
    return;
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  for (let i = 0; i < BASELINE_POLLS; i += 1) {
    if (await book.auditFinished(start.auditId)) return;
    await sleep('10 seconds');
  }
}

/**
 * The stages with their bookkeeping inside the work activities (StepMarks): a stage's first step
 * marks it running, its last step completes it, and the report's last step ends the audit, so a
 * workflow task between two steps runs no activity of its own. The source step also begins the
 * audit and marks the skipped stages; a stage with nothing to run is marked by the next step that
 * runs (or, at the end, by one local activity). A failed step's stage is marked failed by a
 * local activity.
 */
async function runStages(auditId: string, book: Book, work: Work): Promise<void> {
  // The first step begins the audit: no local activity before it, so the first workflow task
  // only schedules it. It returns the plan (which stages and agents run).
  let plan: AuditPlan;
  let needsBaseline = false;
  try {
    const first = await work.acquireSource(auditId, {
      beginAudit: true,
      before: [{ key: 'source', status: 'running' }],
      after: [{ key: 'source', status: 'completed', summaries: [] }],
    });
    plan = first.plan!;
    needsBaseline = first.baseline === true;
  } catch (err) {
    const failed = stageFailure(err, 'source');
    await book.stageFinished(auditId, 'source', {
      status: 'failed',
      summary: null,
      errorCode: failed.code,
    });
    throw failed;
  }
  const byKey = new Map(plan.stages.map((s) => [s.key, s]));
  const stage = (key: PlannedStage['key']) => byKey.get(key)!;

  /** Runs a stage; returns the marks still to apply (those of a stage with nothing to run). */
  const runStage = async (
    s: PlannedStage,
    carried: StageMark[],
    endsAudit: boolean,
  ): Promise<{ carry: StageMark[]; ended: boolean }> => {
    if (s.skip) return { carry: carried, ended: false };
    const steps = stepsOf(auditId, s, work, book, needsBaseline);
    if (steps.length === 0) {
      const empty: StageMark[] = [
        { key: s.key, status: 'running' },
        { key: s.key, status: 'completed', summaries: [] },
      ];
      return { carry: [...carried, ...empty], ended: false };
    }
    const summaries: string[] = [];
    for (const [i, run] of steps.entries()) {
      const last = i === steps.length - 1;
      const marks: StepMarks = {
        before: i === 0 ? [...carried, { key: s.key, status: 'running' }] : [],
        after: last ? [{ key: s.key, status: 'completed', summaries: [...summaries] }] : [],
        finishAudit: last && endsAudit,
      };
      try {
        summaries.push((await run(marks)).summary);
      } catch (err) {
        const failed = stageFailure(err, s.key);
        // The marks the first step carried may not have been applied (applying twice is safe).
        if (i === 0 && carried.length > 0) await book.applyStageMarks(auditId, carried);
        await book.stageFinished(auditId, s.key, {
          status: 'failed',
          summary: summaries.join('; ') || null,
          errorCode: failed.code,
        });
        throw failed;
      }
    }
    return { carry: [], ended: endsAudit };
  };

  let { carry } = await runStage(stage('inventory'), [], false);
  if (carry.length > 0) await book.applyStageMarks(auditId, carry);

  // The three analysis stages run side by side; the audit fails if any of them failed.
  const parallel = allOrFirstFailure(
    await Promise.allSettled(
      (['code', 'cloud', 'cicd'] as const).map((key) => runStage(stage(key), [], false)),
    ),
  );
  carry = parallel.flatMap((r) => r.carry);

  let ended = false;
  for (const key of ['reconcile', 'controls', 'changes', 'report'] as const)
    ({ carry, ended } = await runStage(stage(key), carry, key === 'report'));
  if (!ended) {
    if (carry.length > 0) await book.applyStageMarks(auditId, carry);
    await book.finishAudit(auditId, 'completed', null);
  }
}
