/**
 * DecisionWorkflow owns one architecture decision's lifecycle (`decision-<id>`). Moves arrive as
 * the `transition` Update: its validator checks the state machine before the Update is accepted
 * (a refused move never enters history), the handler persists it through an activity and answers
 * the API synchronously. In review it waits durably for the approval quorum or a rejection,
 * noting a reminder whenever the review has waited longer than the policy's interval. Once
 * implemented it verifies the success criteria against each new completed snapshot of the
 * repository (the AuditWorkflow signals `snapshotCompleted`) until all are met.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  currentUpdateInfo,
  defineQuery,
  defineSignal,
  defineUpdate,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { asUpdateFailure, refuse } from './refusals';
import { awaitMove, type Completions } from './verification';
import type { DecisionActivities } from '../activities/decisions';
import {
  checkMove,
  TERMINAL,
  type DecisionStatus,
  type TransitionRequest,
} from '../domain/decisions/rules';

export interface DecisionWorkflowInput {
  decisionId: string;
  createdBy: string;
  optionIds: string[];
  /** The state a run that continued as new handed over. */
  resume?: { status: DecisionStatus; reviewRound: number; votedThisRound: string[] };
  /**
   * Continue as new once the history holds this many events (or the server suggests it). A
   * decision can wait for months: every snapshot of its repository while it is implemented, and
   * every reminder while it is in review, adds events. Default 10,000.
   */
  historyLimit?: number;
}

export interface TransitionResult {
  status: DecisionStatus;
  version: number;
}

export const transitionUpdate = defineUpdate<TransitionResult, [TransitionRequest]>('transition');
/** A snapshot of the repository completed; an implemented decision re-verifies. */
export const snapshotCompletedSignal = defineSignal<[string]>('snapshotCompleted');
/** Another decision superseded this one (the database already says so). */
export const supersededSignal = defineSignal('superseded');
/** What the workflow waits for, for operators (Temporal UI "Queries" tab) and tests. */
export const stateQuery = defineQuery<{
  status: DecisionStatus;
  reviewRound: number;
  votedThisRound: string[];
}>('state');

export async function DecisionWorkflow(input: DecisionWorkflowInput): Promise<DecisionStatus> {
  const act = proxyActivities<DecisionActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
  });

  let status = input.resume?.status ?? ('proposed' as DecisionStatus);
  let reviewRound = input.resume?.reviewRound ?? 0;
  let voted: string[] = [...(input.resume?.votedThisRound ?? [])];
  const snapshots: Completions = { pending: 0 };
  let busy = false;

  setHandler(
    transitionUpdate,
    async (req) => {
      // One move at a time: the next waits for the previous to be persisted.
      await condition(() => !busy);
      busy = true;
      try {
        const key = currentUpdateInfo()?.id ?? `${req.actor.id}:${req.to}`;
        const out = await act.applyDecisionTransition(input.decisionId, key, req);
        status = out.status;
        reviewRound = out.reviewRound;
        voted = out.voted;
        if (out.supersededWorkflowId) {
          try {
            await getExternalWorkflowHandle(out.supersededWorkflowId).signal(supersededSignal);
          } catch {
            // Its workflow has ended already: the database records the supersession.
          }
        }
        return { status: out.status, version: out.version };
      } catch (err) {
        throw asUpdateFailure(err);
      } finally {
        busy = false;
      }
    },
    {
      validator: (req) => {
        const refused = checkMove(
          { status, createdBy: input.createdBy, optionIds: input.optionIds, votedThisRound: voted },
          { to: req.to, selectedOptionId: req.selectedOptionId, actorId: req.actor.id },
        );
        if (refused) refuse(refused);
      },
    },
  );
  setHandler(snapshotCompletedSignal, () => {
    snapshots.pending++;
  });
  setHandler(stateQuery, () => ({ status, reviewRound, votedThisRound: [...voted] }));
  setHandler(supersededSignal, () => {
    status = 'superseded';
  });

  /**
   * A long wait continues as new before its history grows too long, carrying the state over
   * (once no move is being applied).
   */
  const maybeContinueAsNew = async (): Promise<void> => {
    const info = workflowInfo();
    if (!info.continueAsNewSuggested && info.historyLength < (input.historyLimit ?? 10_000)) return;
    await condition(() => !busy && allHandlersFinished());
    await continueAsNew<typeof DecisionWorkflow>({
      ...input,
      resume: { status, reviewRound, votedThisRound: [...voted] },
    });
  };

  for (;;) {
    if (TERMINAL.includes(status)) return status;
    await maybeContinueAsNew();
    if (status === 'in_review') {
      const round = reviewRound;
      const { reminderSeconds } = await act.decisionReviewPolicy(input.decisionId);
      const stillWaiting = () => status === 'in_review' && reviewRound === round;
      while (stillWaiting()) {
        await maybeContinueAsNew();
        const moved = await condition(() => !stillWaiting(), `${reminderSeconds} seconds`);
        if (!moved && !busy) await act.recordDecisionReminder(input.decisionId, round);
      }
      continue;
    }
    status = await awaitMove(
      () => status,
      'implemented',
      snapshots,
      () => act.verifyDecision(input.decisionId),
    );
  }
}
