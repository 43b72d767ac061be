/**
 * Publishing an audit back to GitHub or GitLab, durably: IntegrationPublishWorkflow posts the
 * commit status, then the pull request's one comment, each an activity retried with backoff for
 * up to a day while the forge is down or throttles (a refusal such as a revoked token ends it at
 * once). The audit workflow starts it as an abandoned child when the audit ends (publishToForge),
 * so the audit never waits on the forge; IntegrationPendingWorkflow posts `pending` meanwhile.
 * Deterministic: all I/O is in the activities.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  proxyActivities,
  proxyLocalActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { IntegrationActivities } from '../activities/integrations';
import { WORKFLOW_TYPES } from '../domain/contract/workflows';

const bookkeeping = () =>
  proxyLocalActivities<IntegrationActivities>({
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
  });

export async function IntegrationPublishWorkflow(input: {
  auditId: string;
}): Promise<{ state: 'published' | 'failed'; error: string | null }> {
  const forge = proxyActivities<IntegrationActivities>({
    startToCloseTimeout: '2 minutes',
    scheduleToCloseTimeout: '24 hours',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
  });
  const book = bookkeeping();
  try {
    await forge.publishIntegrationStatus(input.auditId);
    await forge.publishIntegrationComment(input.auditId);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const code =
      cause instanceof ApplicationFailure && cause.type ? cause.type : 'publication_failed';
    await book.finishIntegrationPublication(input.auditId, 'failed', code);
    return { state: 'failed', error: code };
  }
  await book.finishIntegrationPublication(input.auditId, 'published', null);
  return { state: 'published', error: null };
}

/**
 * The `pending` status of an audit a webhook just started (started by the webhook receiver). Best
 * effort: retried for 30 minutes at most, and skipped once the final status is there.
 */
export async function IntegrationPendingWorkflow(input: { auditId: string }): Promise<void> {
  const forge = proxyActivities<IntegrationActivities>({
    startToCloseTimeout: '1 minute',
    scheduleToCloseTimeout: '30 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });
  try {
    await forge.publishIntegrationPending(input.auditId);
  } catch {
    // The final status follows when the audit ends; a missing pending one loses nothing.
  }
}

/**
 * A pull request closed (merged or not): its one comment says so (what it showed stays, under a
 * closing line). Retried like the final publication; nothing to do when it has no comment.
 */
export async function IntegrationClosedWorkflow(input: {
  integrationId: string;
  number: number;
}): Promise<void> {
  const forge = proxyActivities<IntegrationActivities>({
    startToCloseTimeout: '2 minutes',
    scheduleToCloseTimeout: '24 hours',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
  });
  await forge.publishIntegrationClosed(input.integrationId, input.number);
}

/** Called by AuditWorkflow when an audit ends: starts its publication, if it has one. */
export async function publishToForge(auditId: string): Promise<void> {
  const workflowId = await bookkeeping().integrationPublicationOf(auditId);
  if (!workflowId) return;
  try {
    await startChild(WORKFLOW_TYPES.integrationPublish, {
      workflowId,
      args: [{ auditId }],
      taskQueue: workflowInfo().taskQueue,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
