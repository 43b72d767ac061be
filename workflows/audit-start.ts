/**
 * How an AuditWorkflow is started, shared by the API (createAudit, retryAudit, triggers) and the
 * ScheduleWorkflow (a child start): workflow id, input and search attributes. Pure data.
 */
import type { TypedSearchAttributes, SearchAttributePair } from '@temporalio/common';
import type { AuditWorkflowInput } from './audits';
import { AUDIT_STATUS, REPOSITORY_ID, WORKSPACE_ID } from './search-attributes';

export interface AuditStart {
  auditId: string;
  workflowId: string;
  workspaceId: string;
  repositoryId: string | null;
  heartbeatTimeoutSeconds: number;
  maxAttempts: number;
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
      },
    ],
    typedSearchAttributes: [
      { key: WORKSPACE_ID, value: start.workspaceId },
      { key: REPOSITORY_ID, value: start.repositoryId ?? '' },
      { key: AUDIT_STATUS, value: 'queued' },
    ],
  };
}
