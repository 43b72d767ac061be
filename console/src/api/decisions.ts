/**
 * Moving a decision, in one place: today transitionDecision (approve and reject are moves to
 * `approved` / `rejected` under decisions:approve). When the registry gains approveDecision /
 * rejectDecision, only this function changes.
 */
import { api, unwrap } from './client';

export type DecisionMove = 'in_review' | 'approved' | 'rejected' | 'proposed' | 'implemented';

export async function moveDecision(
  ws: string,
  id: string,
  to: DecisionMove,
  rationale: string,
  selectedOptionId?: string,
) {
  return unwrap(
    await api.POST('/v1/workspaces/{workspace_id}/decisions/{decision_id}/transitions', {
      params: { path: { workspace_id: ws, decision_id: id } },
      body: {
        status: to,
        rationale,
        ...(selectedOptionId ? { selected_option_id: selectedOptionId } : {}),
      },
    }),
  );
}
