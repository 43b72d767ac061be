/**
 * Reads of the triage and approval pages (remediations, workflow actions, OAuth grants, the
 * assistant, profiles and schedules, an audit's cost, agent runs and report), one hook each,
 * with their query keys (mutations invalidate exactly these). Same rules as queries.ts.
 */
import { useQuery } from '@tanstack/react-query';
import { api, ProblemError, unwrap, type Schemas } from './client';

export const pageKeys = {
  remediations: (ws: string) => ['ws', ws, 'remediations'] as const,
  remediation: (ws: string, id: string) => ['ws', ws, 'remediations', id] as const,
  actions: (ws: string) => ['ws', ws, 'workflow-actions'] as const,
  grants: (ws: string) => ['ws', ws, 'oauth-grants'] as const,
  conversations: (ws: string) => ['ws', ws, 'assistant', 'conversations'] as const,
  messages: (ws: string, id: string) => ['ws', ws, 'assistant', 'messages', id] as const,
  run: (ws: string, id: string) => ['ws', ws, 'assistant', 'run', id] as const,
  profiles: (ws: string, repo: string) => ['ws', ws, 'repositories', repo, 'profiles'] as const,
  schedules: (ws: string, repo: string) => ['ws', ws, 'repositories', repo, 'schedules'] as const,
  cost: (ws: string, audit: string) => ['ws', ws, 'audit', audit, 'cost'] as const,
  agentRuns: (ws: string, audit: string) => ['ws', ws, 'audit', audit, 'agent-runs'] as const,
  report: (ws: string, audit: string) => ['ws', ws, 'audit', audit, 'report'] as const,
};

export function useRemediations(workspace: string) {
  return useQuery({
    queryKey: pageKeys.remediations(workspace),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/remediations', {
          params: { path: { workspace_id: workspace }, query: { limit: 100 } },
        }),
      ),
  });
}

/** A remediation, polled every 1.5 s while its plan is being written (no steps yet). */
export function useRemediation(workspace: string, id: string) {
  return useQuery({
    queryKey: pageKeys.remediation(workspace, id),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/remediations/{remediation_id}', {
          params: { path: { workspace_id: workspace, remediation_id: id } },
        }),
      ),
    refetchInterval: (q) => (q.state.data && q.state.data.steps.length === 0 ? 1500 : false),
  });
}

export function useWorkflowActions(workspace: string) {
  return useQuery({
    queryKey: pageKeys.actions(workspace),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/workflow-actions', {
          params: { path: { workspace_id: workspace }, query: { limit: 100 } },
        }),
      ),
  });
}

export function useOAuthGrants(workspace: string) {
  return useQuery({
    queryKey: pageKeys.grants(workspace),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/oauth-grants', {
          params: { path: { workspace_id: workspace }, query: { limit: 100 } },
        }),
      ),
  });
}

export function useConversations(workspace: string) {
  return useQuery({
    queryKey: pageKeys.conversations(workspace),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/assistant/conversations', {
          params: { path: { workspace_id: workspace }, query: { limit: 100 } },
        }),
      ),
  });
}

export function useMessages(workspace: string, conversation: string | null) {
  return useQuery({
    queryKey: pageKeys.messages(workspace, conversation ?? ''),
    enabled: conversation !== null,
    queryFn: async () =>
      unwrap(
        await api.GET(
          '/v1/workspaces/{workspace_id}/assistant/conversations/{conversation_id}/messages',
          {
            params: {
              path: { workspace_id: workspace, conversation_id: conversation! },
              query: { limit: 200 },
            },
          },
        ),
      ),
  });
}

const RUNNING = new Set(['queued', 'running']);

/** An assistant run, polled every second until it ends. */
export function useAssistantRun(workspace: string, id: string | null) {
  return useQuery({
    queryKey: pageKeys.run(workspace, id ?? ''),
    enabled: id !== null,
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/assistant/runs/{run_id}', {
          params: { path: { workspace_id: workspace, run_id: id! } },
        }),
      ),
    refetchInterval: (q) => (q.state.data && RUNNING.has(q.state.data.status) ? 1000 : false),
  });
}

export function useProfiles(workspace: string, repository: string) {
  return useQuery({
    queryKey: pageKeys.profiles(workspace, repository),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/repositories/{repository_id}/audit-profiles', {
          params: {
            path: { workspace_id: workspace, repository_id: repository },
            query: { limit: 100 },
          },
        }),
      ),
  });
}

export function useSchedules(workspace: string, repository: string) {
  return useQuery({
    queryKey: pageKeys.schedules(workspace, repository),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/audit-schedules', {
          params: {
            path: { workspace_id: workspace },
            query: { limit: 100, repository_id: repository },
          },
        }),
      ),
  });
}

export function useAuditCost(workspace: string, audit: string, live: boolean) {
  return useQuery({
    queryKey: pageKeys.cost(workspace, audit),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/cost', {
          params: { path: { workspace_id: workspace, audit_id: audit } },
        }),
      ),
    refetchInterval: live ? 1500 : false,
  });
}

export function useAgentRuns(workspace: string, audit: string, live: boolean) {
  return useQuery({
    queryKey: pageKeys.agentRuns(workspace, audit),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/agent-runs', {
          params: { path: { workspace_id: workspace, audit_id: audit } },
        }),
      ),
    refetchInterval: live ? 1500 : false,
  });
}

/** The report of a completed audit (JSON), or null when it has none yet (404/409). */
export function useReport(workspace: string, audit: string, enabled: boolean) {
  return useQuery({
    queryKey: pageKeys.report(workspace, audit),
    enabled,
    queryFn: () => fetchReport(workspace, audit),
  });
}

/** Member logins by id (to name approvers); empty without members:read (the public demo). */
export function useMemberNames(workspace: string, enabled: boolean) {
  return useQuery({
    queryKey: ['ws', workspace, 'members'],
    enabled,
    queryFn: async () => {
      const page = unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/members', {
          params: { path: { workspace_id: workspace }, query: { limit: 100 } },
        }),
      );
      return new Map(page.items.map((m) => [m.id, m.login]));
    },
    staleTime: 60_000,
  });
}

/** A repository's snapshots (to open the audit of the snapshot an answer was read from). */
export function useSnapshots(workspace: string, repository: string | null) {
  return useQuery({
    queryKey: ['ws', workspace, 'repositories', repository ?? '', 'snapshots'],
    enabled: repository !== null,
    queryFn: async () =>
      unwrap(
        await api.GET(
          '/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/snapshots',
          { params: { path: { workspace_id: workspace, repository_id: repository! } } },
        ),
      ),
  });
}

async function fetchReport(workspace: string, audit: string) {
  try {
    const report = unwrap(
      await api.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/report', {
        params: { path: { workspace_id: workspace, audit_id: audit }, query: { format: 'json' } },
      }),
    );
    // format=json answers AuditReportResponse (the others are documents).
    return report as Schemas['AuditReportResponse'];
  } catch (err) {
    if (err instanceof ProblemError && (err.status === 404 || err.status === 409)) return null;
    throw err;
  }
}
