import type { StageKeyName } from '../../domain/contract/values';

export interface PlannedStage {
  key: StageKeyName;
  /** Why the stage will not run, or null. */
  skip: string | null;
  /** Agent keys, run in this order. */
  agents: string[];
}

export interface AuditPlan {
  auditId: string;
  workspaceId: string;
  repositoryId: string | null;
  stages: PlannedStage[];
}

export interface StageOutcome {
  summary: string;
  /**
   * The source step of an audit of another branch than the default, with a merge-base: its gate
   * waits for the default branch's audit there (workflows/audits.ts, runBaseline).
   */
  baseline?: boolean;
}

export type AuditFinalStatus = 'completed' | 'failed' | 'cancelled';

export interface StageEnd {
  status: 'completed' | 'failed' | 'skipped' | 'cancelled';
  summary: string | null;
  errorCode: string | null;
}

/** A stage transition applied by an activity (see StepMarks). */
export type StageMark =
  | { key: StageKeyName; status: 'running' }
  | { key: StageKeyName; status: 'skipped'; summary: string }
  /** The summary is `summaries` plus the summary of the step that applies it, joined. */
  | { key: StageKeyName; status: 'completed'; summaries: string[] };

/**
 * Stage bookkeeping a work activity does around its work: the first step of a stage starts it,
 * the last one completes it, and the last step of the audit ends the audit.
 */
export interface StepMarks {
  /**
   * The audit's first step (acquireSource only): marks the audit running, decides its plan
   * (beginAudit), marks the skipped stages, and returns the plan with its outcome.
   */
  beginAudit?: boolean;
  before?: StageMark[];
  after?: StageMark[];
  finishAudit?: boolean;
}
