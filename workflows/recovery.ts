/**
 * AuditRecoveryWorkflow: one sweep for audits left `queued` without a workflow (the API process
 * died between committing the audit and starting its workflow), started by the `audit-recovery`
 * Temporal Schedule. Each such audit's AuditWorkflow is started as an abandoned child with the
 * audit's own workflow id; one that exists already is left alone (it waits for a worker), and an
 * audit whose start fails otherwise ends failed (stages skipped, a log line with the cause).
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import { ParentClosePolicy, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import type { RecoveryActivities } from '../activities/audits/recovery';
import type { ScheduleActivities } from '../activities/schedules';
import { WORKFLOW_TYPES } from '../domain/contract/workflows';
import { auditStartOptions } from '../domain/workflow-starts';
import type { AuditWorkflow } from './audits';

const act = proxyActivities<RecoveryActivities & Pick<ScheduleActivities, 'failUnstartedAudit'>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 10 },
});

export interface AuditRecoveryInput {
  /** How long an audit may stay queued before the sweep acts. */
  graceSeconds: number;
  /** Audits handled per run (the next run continues). */
  limit?: number;
}

export async function AuditRecoveryWorkflow(
  input: AuditRecoveryInput,
): Promise<{ started: number; running: number; failed: number }> {
  const audits = await act.findUnstartedAudits({
    graceSeconds: input.graceSeconds,
    limit: input.limit ?? 100,
  });
  const counts = { started: 0, running: 0, failed: 0 };
  for (const audit of audits) {
    try {
      await startChild<typeof AuditWorkflow>(WORKFLOW_TYPES.audit, {
        ...auditStartOptions(audit),
        taskQueue: workflowInfo().taskQueue,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      });
      counts.started += 1;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        counts.running += 1;
        continue;
      }
      await act.failUnstartedAudit(audit.auditId, err instanceof Error ? err.message : String(err));
      counts.failed += 1;
    }
  }
  return counts;
}
