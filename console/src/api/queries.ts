/**
 * Every read of the console, one hook each, with one query-key factory (mutations invalidate
 * exactly these keys). Pages never call fetch themselves.
 */
import { useQuery } from '@tanstack/react-query';
import { api, ProblemError, unwrap, type Schemas } from './client';

export const keys = {
  caller: ['caller'] as const,
  workspaces: ['workspaces'] as const,
  repositories: (ws: string) => ['ws', ws, 'repositories'] as const,
  repository: (ws: string, id: string) => ['ws', ws, 'repositories', id] as const,
  audits: (ws: string, repo?: string) => ['ws', ws, 'audits', repo ?? 'all'] as const,
  audit: (ws: string, id: string) => ['ws', ws, 'audit', id] as const,
  logs: (ws: string, id: string) => ['ws', ws, 'audit', id, 'logs'] as const,
  gate: (ws: string, id: string) => ['ws', ws, 'audit', id, 'gate'] as const,
  architecture: (ws: string, id: string) => ['ws', ws, 'audit', id, 'architecture'] as const,
  evidence: (ws: string, audit: string, id: string) =>
    ['ws', ws, 'audit', audit, 'evidence', id] as const,
  findings: (ws: string) => ['ws', ws, 'findings'] as const,
  decisions: (ws: string) => ['ws', ws, 'decisions'] as const,
  uncertainty: (ws: string) => ['ws', ws, 'uncertainty'] as const,
  tokens: (ws: string) => ['ws', ws, 'tokens'] as const,
  scopes: ['scopes'] as const,
  members: (ws: string) => ['ws', ws, 'members'] as const,
};

const ws = (workspace_id: string) => ({ params: { path: { workspace_id } } });

/** The signed-in member, or null when the browser has no session (401). */
export function useCaller() {
  return useQuery({
    queryKey: keys.caller,
    queryFn: async () => {
      try {
        return unwrap(await api.GET('/v1/caller'));
      } catch (err) {
        if (err instanceof ProblemError && err.status === 401) return null;
        throw err;
      }
    },
    staleTime: 60_000,
  });
}

export function useRepositories(workspace: string) {
  return useQuery({
    queryKey: keys.repositories(workspace),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/repositories', {
          params: { path: { workspace_id: workspace }, query: { limit: 100 } },
        }),
      ),
  });
}

export function useWorkspace(workspace: string) {
  return useQuery({
    queryKey: ['ws', workspace],
    queryFn: async () => unwrap(await api.GET('/v1/workspaces/{workspace_id}', ws(workspace))),
  });
}

export function useRepository(workspace: string, id: string) {
  return useQuery({
    queryKey: keys.repository(workspace, id),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/repositories/{repository_id}', {
          params: { path: { workspace_id: workspace, repository_id: id } },
        }),
      ),
  });
}

export function useAudits(workspace: string, repository?: string) {
  return useQuery({
    queryKey: keys.audits(workspace, repository),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/audits', {
          params: {
            path: { workspace_id: workspace },
            query: { limit: 100, ...(repository ? { repository_id: repository } : {}) },
          },
        }),
      ),
  });
}

const LIVE = new Set(['queued', 'running']);

/** An audit, polled every 1.5 s while it is queued or running. */
export function useAudit(workspace: string, id: string) {
  return useQuery({
    queryKey: keys.audit(workspace, id),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}', {
          params: { path: { workspace_id: workspace, audit_id: id } },
        }),
      ),
    refetchInterval: (q) => (q.state.data && LIVE.has(q.state.data.status) ? 1500 : false),
  });
}

export function useAuditLogs(workspace: string, id: string, live: boolean) {
  return useQuery({
    queryKey: keys.logs(workspace, id),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/logs', {
          params: { path: { workspace_id: workspace, audit_id: id } },
        }),
      ),
    refetchInterval: live ? 1500 : false,
  });
}

/** The gate, or null while the audit has none (404). */
export function useGate(workspace: string, id: string, enabled: boolean) {
  return useQuery({
    queryKey: keys.gate(workspace, id),
    enabled,
    queryFn: async () => {
      try {
        const gate = unwrap(
          await api.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/gate', {
            params: { path: { workspace_id: workspace, audit_id: id } },
          }),
        );
        // JSON is the default representation (the others are asked for by Accept).
        return gate as Schemas['AuditGateResponse'];
      } catch (err) {
        if (err instanceof ProblemError && (err.status === 404 || err.status === 409)) return null;
        throw err;
      }
    },
  });
}

/** An audit's architecture snapshot as a query (the explorer's hook, and its early start). */
export const architectureQuery = (workspace: string, id: string) => ({
  queryKey: keys.architecture(workspace, id),
  queryFn: async () =>
    unwrap(
      await api.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/architecture', {
        params: { path: { workspace_id: workspace, audit_id: id } },
      }),
    ),
  staleTime: Infinity,
});

export function useArchitecture(workspace: string, id: string) {
  return useQuery({ ...architectureQuery(workspace, id), enabled: id !== '' });
}

export function useEvidence(workspace: string, audit: string, id: string | null) {
  return useQuery({
    queryKey: keys.evidence(workspace, audit, id ?? ''),
    enabled: id !== null,
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/evidence/{evidence_id}', {
          params: { path: { workspace_id: workspace, audit_id: audit, evidence_id: id! } },
        }),
      ),
    staleTime: Infinity,
  });
}

export function useFindings(workspace: string) {
  return useQuery({
    queryKey: keys.findings(workspace),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/findings', {
          params: { path: { workspace_id: workspace }, query: { limit: 200 } },
        }),
      ),
  });
}

export function useDecisions(workspace: string) {
  return useQuery({
    queryKey: keys.decisions(workspace),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/decisions', {
          params: { path: { workspace_id: workspace }, query: { limit: 100 } },
        }),
      ),
  });
}

export function useUncertaintyCases(workspace: string) {
  return useQuery({
    queryKey: keys.uncertainty(workspace),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/uncertainty-cases', {
          params: { path: { workspace_id: workspace }, query: { limit: 100 } },
        }),
      ),
  });
}

export function useTokens(workspace: string) {
  return useQuery({
    queryKey: keys.tokens(workspace),
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/tokens', {
          params: { path: { workspace_id: workspace }, query: { limit: 100 } },
        }),
      ),
  });
}

export function useScopes() {
  return useQuery({
    queryKey: keys.scopes,
    queryFn: async () => unwrap(await api.GET('/v1/scopes')),
    staleTime: Infinity,
  });
}
