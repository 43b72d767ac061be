/**
 * RemediationWorkflow owns one remediation's lifecycle (`remediation-<id>`). A plan the
 * remediation agent wrote from templates is first offered to the model (when the worker has one).
 * Moves arrive as the `move` Update: its validator checks the state machine and the
 * no-self-approval rule before the Update is accepted, the handler persists the move through an
 * activity keyed by the Update id. Once done, it checks each completed audit of the repository
 * (the AuditWorkflow signals `auditCompleted`) until the findings are verified resolved or an
 * audit still observes one (not_verified, which may go back to in_progress).
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  currentUpdateInfo,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { asUpdateFailure, refuse } from './refusals';
import { awaitMove, type Completions } from './verification';
import type { RemediationActivities } from '../activities/remediations';
import {
  checkRemediationMove,
  TERMINAL,
  type RemediationMoveRequest,
  type RemediationStatus,
} from '../domain/remediations/rules';

export interface RemediationWorkflowInput {
  remediationId: string;
  createdBy: string;
  /** The plan came from a template: offer it to the model first. */
  draft: boolean;
  /** The state a run that continued as new handed over. */
  resume?: { status: RemediationStatus };
}

export const moveUpdate = defineUpdate<
  { status: RemediationStatus; version: number },
  [RemediationMoveRequest]
>('move');
/** An audit of the repository completed; a done remediation checks its findings. */
export const auditCompletedSignal = defineSignal<[string]>('auditCompleted');
export const remediationStateQuery = defineQuery<{ status: RemediationStatus; drafting: boolean }>(
  'state',
);

/** Continue as new past this many history events (each audit of the repository adds some). */
const HISTORY_LIMIT = 10_000;

export async function RemediationWorkflow(
  input: RemediationWorkflowInput,
): Promise<RemediationStatus> {
  const act = proxyActivities<RemediationActivities>({
    startToCloseTimeout: '3 minutes',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
  });
  // The model gets a few tries; after that the template plan stands.
  const drafter = proxyActivities<RemediationActivities>({
    startToCloseTimeout: '3 minutes',
    retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 3 },
  });

  let status: RemediationStatus = input.resume?.status ?? 'proposed';
  let drafting = input.draft && !input.resume;
  let busy = false;
  const audits: Completions = { pending: 0 };

  setHandler(
    moveUpdate,
    async (req) => {
      // A plan is approved as it will stay: wait for the draft, then one move at a time.
      await condition(() => !busy && !drafting);
      busy = true;
      try {
        const key = currentUpdateInfo()?.id ?? `${req.actor.id}:${req.to}`;
        const out = await act.applyRemediationMove(input.remediationId, key, req);
        status = out.status;
        return out;
      } catch (err) {
        throw asUpdateFailure(err);
      } finally {
        busy = false;
      }
    },
    {
      validator: (req) => {
        const refused = checkRemediationMove(
          { status, createdBy: input.createdBy },
          { to: req.to, actorId: req.actor.id },
        );
        if (refused) refuse(refused);
      },
    },
  );
  setHandler(auditCompletedSignal, () => {
    audits.pending++;
  });
  setHandler(remediationStateQuery, () => ({ status, drafting }));

  if (drafting) {
    try {
      await drafter.draftRemediationPlan(input.remediationId);
    } catch {
      // The model kept failing: its runs are recorded, the template plan stands.
    }
    drafting = false;
  }

  for (;;) {
    if (TERMINAL.includes(status)) {
      await condition(() => !busy && allHandlersFinished());
      return status;
    }
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > HISTORY_LIMIT) {
      await condition(() => !busy && allHandlersFinished());
      await continueAsNew<typeof RemediationWorkflow>({ ...input, resume: { status } });
    }
    status = await awaitMove(
      () => status,
      'done',
      audits,
      () => act.verifyRemediation(input.remediationId),
    );
  }
}
