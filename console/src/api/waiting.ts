/**
 * What waits for this member (the home page): one light list read per kind, filtered by the
 * list operation itself and at most 20 items each (decisions in review, proposed remediations,
 * pending workflow actions, completed audits whose report is a draft, open or investigated
 * blocking questions), asked only for what the member may approve. No report is read whole.
 * The keys extend the lists' own keys, so the mutations that invalidate a list refresh these.
 */
import { useQueries } from '@tanstack/react-query';
import { api, unwrap } from './client';
import { pageKeys } from './pages';
import { keys } from './queries';

const LIMIT = 20;

/** The member's approvals and questions that wait, each list filtered by the API. */
export function useWaiting(
  workspace: string,
  viewer: { canWrite: boolean; memberId: string | null; scopes: ReadonlySet<string> },
) {
  const may = (scope: string) => viewer.canWrite && viewer.scopes.has(scope);
  const path = { workspace_id: workspace };
  const blockingCases = (state: 'open' | 'investigating') => ({
    queryKey: [...keys.uncertainty(workspace), 'waiting', state],
    enabled: viewer.canWrite,
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/uncertainty-cases', {
          params: { path, query: { state, blocking: true, limit: LIMIT } },
        }),
      ).items,
  });
  const [decisions, remediations, actions, reports, open, investigating] = useQueries({
    queries: [
      {
        queryKey: [...keys.decisions(workspace), 'waiting'],
        enabled: may('decisions:approve'),
        queryFn: async () =>
          unwrap(
            await api.GET('/v1/workspaces/{workspace_id}/decisions', {
              params: { path, query: { status: 'in_review', limit: LIMIT } },
            }),
          ).items,
      },
      {
        queryKey: [...pageKeys.remediations(workspace), 'waiting'],
        enabled: may('remediations:approve'),
        queryFn: async () =>
          unwrap(
            await api.GET('/v1/workspaces/{workspace_id}/remediations', {
              params: { path, query: { status: 'proposed', limit: LIMIT } },
            }),
          ).items,
      },
      {
        queryKey: [...pageKeys.actions(workspace), 'waiting'],
        enabled: may('workflow_actions:approve'),
        queryFn: async () =>
          unwrap(
            await api.GET('/v1/workspaces/{workspace_id}/workflow-actions', {
              params: { path, query: { status: 'pending', limit: LIMIT } },
            }),
          ).items,
      },
      {
        queryKey: ['ws', workspace, 'audits', 'draft-reports'],
        enabled: may('reports:approve'),
        queryFn: async () =>
          unwrap(
            await api.GET('/v1/workspaces/{workspace_id}/audits', {
              params: { path, query: { report_status: 'draft', limit: LIMIT } },
            }),
          ).items,
      },
      blockingCases('open'),
      blockingCases('investigating'),
    ],
  });
  // The newest draft report of each repository (an upload audit's report has no repository).
  const seen = new Set<string>();
  const draftReports = (reports?.data ?? []).filter((a) => {
    const key = a.repository_id ?? a.id;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return {
    // Never the member's own: the API refuses self-approval.
    decisions: (decisions?.data ?? []).filter((d) => d.created_by !== viewer.memberId),
    // A plan still being written (no step yet) is not ready to approve.
    remediations: (remediations?.data ?? []).filter(
      (r) => r.steps.length > 0 && r.created_by !== viewer.memberId,
    ),
    actions: (actions?.data ?? []).filter((a) => a.requested_by !== viewer.memberId),
    reports: draftReports,
    blocking: [...(open?.data ?? []), ...(investigating?.data ?? [])],
  };
}
