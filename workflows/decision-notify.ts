/**
 * Called by the AuditWorkflow once an audit completed: tells each implemented decision of the
 * audit's repository that a new snapshot exists, so it verifies its success criteria.
 */
import { getExternalWorkflowHandle, proxyLocalActivities } from '@temporalio/workflow';
import type { DecisionActivities } from '../activities/decisions';
import { snapshotCompletedSignal } from './decisions';

export async function notifyDecisions(auditId: string): Promise<void> {
  const book = proxyLocalActivities<DecisionActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
  });
  const workflowIds = await book.implementedDecisionsOfAudit(auditId);
  await Promise.all(
    workflowIds.map(async (id) => {
      try {
        await getExternalWorkflowHandle(id).signal(snapshotCompletedSignal, auditId);
      } catch {
        // The decision's workflow is gone (verified and ended, or terminated): nothing to tell.
      }
    }),
  );
}
