/**
 * Starting an audit from another workflow (a schedule's dispatch, an approved workflow action):
 * a child that outlives its starter (ABANDON), and an audit id that runs once, even if the start
 * is seen again after a restart (REJECT_DUPLICATE: WorkflowExecutionAlreadyStartedError).
 */
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import { WORKFLOW_TYPES } from '../domain/contract/workflows';
import { auditStartOptions, type AuditStart } from '../domain/workflow-starts';
import type { AuditWorkflow } from './audits';

export async function startAuditChild(start: AuditStart): Promise<void> {
  await startChild<typeof AuditWorkflow>(WORKFLOW_TYPES.audit, {
    ...auditStartOptions(start),
    taskQueue: workflowInfo().taskQueue,
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}
