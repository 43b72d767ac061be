/**
 * Called by the AuditWorkflow once an audit completed: tells each done remediation of the audit's
 * repository that an audit completed, so it checks whether its findings are resolved.
 */
import { getExternalWorkflowHandle, proxyLocalActivities } from '@temporalio/workflow';
import type { RemediationActivities } from '../activities/remediations';
import { auditCompletedSignal } from './remediations';

export async function notifyRemediations(auditId: string): Promise<void> {
  const book = proxyLocalActivities<RemediationActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
  });
  const workflowIds = await book.doneRemediationsOfAudit(auditId);
  await Promise.all(
    workflowIds.map(async (id) => {
      try {
        await getExternalWorkflowHandle(id).signal(auditCompletedSignal, auditId);
      } catch {
        // The remediation's workflow is gone (verified and ended, or terminated).
      }
    }),
  );
}
