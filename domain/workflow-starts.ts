/**
 * How durable runs are started: the search attributes operators filter by in the Temporal UI, and
 * an AuditWorkflow's start (API: createAudit, retryAudit, triggers; ScheduleWorkflow: a child
 * start): workflow id, input and search attributes. Pure data.
 */
import {
  defineSearchAttributeKey,
  SearchAttributeType,
  type SearchAttributePair,
  type TypedSearchAttributes,
} from '@temporalio/common';

export interface AuditWorkflowInput {
  auditId: string;
  /** Activity timing, fixed at start so replays see the same values. */
  heartbeatTimeoutSeconds: number;
  maxAttempts: number;
  /** Wait in line for a running slot first (MAX_RUNNING_AUDITS*); absent in older histories. */
  admission?: boolean;
}

export const WORKSPACE_ID = defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD);
export const REPOSITORY_ID = defineSearchAttributeKey('RepositoryId', SearchAttributeType.KEYWORD);
export const AUDIT_STATUS = defineSearchAttributeKey('AuditStatus', SearchAttributeType.KEYWORD);

export interface AuditStart {
  auditId: string;
  workflowId: string;
  workspaceId: string;
  repositoryId: string | null;
  heartbeatTimeoutSeconds: number;
  maxAttempts: number;
  admission: boolean;
}

export function auditStartOptions(start: AuditStart): {
  workflowId: string;
  args: [AuditWorkflowInput];
  typedSearchAttributes: SearchAttributePair[] | TypedSearchAttributes;
} {
  return {
    workflowId: start.workflowId,
    args: [
      {
        auditId: start.auditId,
        heartbeatTimeoutSeconds: start.heartbeatTimeoutSeconds,
        maxAttempts: start.maxAttempts,
        ...(start.admission ? { admission: true } : {}),
      },
    ],
    typedSearchAttributes: [
      { key: WORKSPACE_ID, value: start.workspaceId },
      { key: REPOSITORY_ID, value: start.repositoryId ?? '' },
      { key: AUDIT_STATUS, value: 'queued' },
    ],
  };
}
