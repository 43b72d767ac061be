/**
 * Activities of the audit workflow: bookkeeping (audit and stage rows, logs), source
 * acquisition, and agent runs. Every function is safe to retry: each writes absolute states,
 * keyed by the audit, stage, agent and attempt.
 */
import { type StageKeyName } from '../../domain/contract/values';
import { recordChangeGate } from '../changes';
import { auditFinished, ensureBaselineAudit } from '../changes/baseline';
import type { AuditStart } from '../../domain/workflow-starts';
import { persistControls } from '../controls';
import type { AuditFinalStatus, StageEnd, StageMark, StageOutcome, StepMarks } from './types';
import { createRunAgent } from './run-agent';
import { createPersistArchitecture } from './snapshot';
import { createAcquireSource } from './source';
import { createSteps, withHeartbeat, type AuditActivityDeps } from './steps';

export type { AuditActivityDeps } from './steps';

export function createAuditActivities(deps: AuditActivityDeps) {
  const { db, blobs, config } = deps;
  const steps = createSteps(deps);
  const { markFinished, applyMarks, finish, step } = steps;

  return {
    async stageFinished(auditId: string, key: StageKeyName, outcome: StageEnd): Promise<void> {
      await markFinished(auditId, key, outcome);
    },

    /** Stage marks the workflow could not hand to a step (e.g. an empty last stage). */
    async applyStageMarks(auditId: string, marks: StageMark[]): Promise<void> {
      await applyMarks(auditId, marks, null);
    },

    /** Stage `source`: fetch the exact commit (or unpack the upload), store files by content. */
    acquireSource: createAcquireSource(deps, steps),

    /** One attempt of one agent: cached artifact, or a run recorded with timings, tokens and cost. */
    runAgent: createRunAgent(deps, steps),

    /** The reconcile stage's snapshot: written once, whole or absent. */
    persistArchitecture: createPersistArchitecture(deps, steps),

    /** Stage `controls`: stores the controls agent's assessments and findings. */
    async persistControls(auditId: string, marks?: StepMarks): Promise<StageOutcome> {
      return step(auditId, marks, () =>
        withHeartbeat(() =>
          persistControls(db, auditId, { staleAfterDays: config.evidenceStaleAfterDays }),
        ),
      );
    },

    /**
     * Before the `changes` stage of an audit of another branch: the default branch's audit at
     * the merge-base to run first, or null (activities/changes/baseline.ts).
     */
    async ensureBaselineAudit(auditId: string): Promise<AuditStart | null> {
      return ensureBaselineAudit(db, auditId, {
        heartbeatTimeoutSeconds: config.agentHeartbeatTimeoutSeconds,
        maxAttempts: config.agentMaxAttempts,
      });
    },

    /** Whether an audit has ended (the baseline a gate waits for). */
    async auditFinished(auditId: string): Promise<boolean> {
      return auditFinished(db, auditId);
    },

    /** Stage `changes`: the gate against the previous snapshot of the repository and branch. */
    async evaluateChanges(auditId: string, marks?: StepMarks): Promise<StageOutcome> {
      return step(auditId, marks, () => recordChangeGate(db, blobs, auditId));
    },

    /** Ends the audit: final status, pending stages skipped, running ones cancelled. */
    async finishAudit(
      auditId: string,
      status: AuditFinalStatus,
      errorCode: string | null,
    ): Promise<void> {
      await finish(auditId, status, errorCode);
    },
  };
}

export type AuditActivities = ReturnType<typeof createAuditActivities>;
