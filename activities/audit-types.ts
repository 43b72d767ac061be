/** Types shared by the audit workflow and its activities (no runtime code: safe for workflows). */
import type { StageKeyName } from '../api/schemas/spec';

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
}

export type AuditFinalStatus = 'completed' | 'failed' | 'cancelled';
