/**
 * WorkflowActionWorkflow owns one privileged request (`workflow-action-<id>`): it waits for a
 * second member's decision (the `decide` Update; the requester cannot approve) or for its time to
 * run out (a Temporal timer, no polling), then executes an approved action exactly once through
 * an activity keyed by the action id. A deep-review audit it creates is started as an abandoned
 * child AuditWorkflow.
 */
import {
  allHandlersFinished,
  condition,
  currentUpdateInfo,
  defineUpdate,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { asUpdateFailure, refuse } from './refusals';
import type { WorkflowActionActivities } from '../activities/workflow-actions';
import {
  checkDecision,
  type WorkflowActionDecision,
  type WorkflowActionStatus,
} from '../domain/workflow-actions/rules';
import { startAuditChild } from './audit-child';

export interface WorkflowActionWorkflowInput {
  actionId: string;
  requestedBy: string;
  /** When the action expires (ISO instant, fixed at request time). */
  expiresAt: string;
}

export const decideUpdate = defineUpdate<
  { status: WorkflowActionStatus },
  [WorkflowActionDecision]
>('decide');

export async function WorkflowActionWorkflow(
  input: WorkflowActionWorkflowInput,
): Promise<WorkflowActionStatus> {
  const act = proxyActivities<WorkflowActionActivities>({
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
  });
  let status: WorkflowActionStatus = 'pending';
  let deciding = false;

  setHandler(
    decideUpdate,
    async (req) => {
      deciding = true;
      try {
        const key = currentUpdateInfo()?.id ?? `${req.actor.id}:${req.outcome}`;
        const out = await act.decideWorkflowAction(input.actionId, key, req);
        status = out.status;
        return out;
      } catch (err) {
        throw asUpdateFailure(err);
      } finally {
        deciding = false;
      }
    },
    {
      validator: (req) => {
        // Workflow time, so a replay decides the same way.
        const refused = deciding
          ? { code: 'already_decided' as const, current: status }
          : checkDecision(
              { status, requestedBy: input.requestedBy, expiresAt: new Date(input.expiresAt) },
              { outcome: req.outcome, actorId: req.actor.id },
              new Date(),
            );
        if (refused) refuse(refused);
      },
    },
  );

  // Waits for a decision or the expiry, whichever comes first. A decision being recorded when
  // the timer fires still counts (the activity checks the expiry under the row lock); a refused
  // one leaves the action pending until its time is up.
  const expiresAt = Date.parse(input.expiresAt);
  while (status === 'pending') {
    const remaining = expiresAt - Date.now();
    if (remaining <= 0) break;
    const decided = await condition(() => status !== 'pending' || deciding, remaining);
    if (!decided) break;
    await condition(() => !deciding);
  }
  if (status === 'pending') status = (await act.expireWorkflowAction(input.actionId)).status;
  if (status === 'approved') {
    const result = await act.executeWorkflowAction(input.actionId);
    status = result.status;
    if (result.audit) {
      try {
        await startAuditChild(result.audit);
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError))
          await act.failWorkflowActionAudit(
            result.audit.auditId,
            err instanceof Error ? err.message : String(err),
          );
      }
    }
  }
  await condition(allHandlersFinished);
  return status;
}
