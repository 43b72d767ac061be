/**
 * Moving a decision, in one place. Approving and rejecting are their own operations
 * (approveDecision / rejectDecision, scope decisions:approve); the other moves go through
 * transitionDecision.
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
  const path = { workspace_id: ws, decision_id: id };
  if (to === 'approved') {
    if (!selectedOptionId) throw new Error('Choose the option to approve.');
    return unwrap(
      await api.POST('/v1/workspaces/{workspace_id}/decisions/{decision_id}/approval', {
        params: { path },
        body: { rationale, selected_option_id: selectedOptionId },
      }),
    );
  }
  if (to === 'rejected') {
    return unwrap(
      await api.POST('/v1/workspaces/{workspace_id}/decisions/{decision_id}/rejection', {
        params: { path },
        body: { rationale },
      }),
    );
  }
  return unwrap(
    await api.POST('/v1/workspaces/{workspace_id}/decisions/{decision_id}/transitions', {
      params: { path },
      body: { status: to, rationale },
    }),
  );
}
