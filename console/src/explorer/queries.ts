/** The explorer's own reads: a repository's snapshots and the changes between two of them. */
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';

export function useSnapshots(workspace: string, repository: string | null) {
  return useQuery({
    queryKey: ['ws', workspace, 'repositories', repository ?? '', 'snapshots'],
    enabled: repository !== null,
    queryFn: async () =>
      unwrap(
        await api.GET(
          '/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/snapshots',
          {
            params: {
              path: { workspace_id: workspace, repository_id: repository! },
              query: { limit: 50 },
            },
          },
        ),
      ),
  });
}

/** What changed from snapshot `from` to snapshot `to` (null while nothing is compared). */
export function useChanges(
  workspace: string,
  repository: string | null,
  from: string | null,
  to: string | null,
) {
  return useQuery({
    queryKey: ['ws', workspace, 'repositories', repository ?? '', 'changes', from, to],
    enabled: repository !== null && from !== null && to !== null,
    queryFn: async () =>
      unwrap(
        await api.GET(
          '/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/changes',
          {
            params: {
              path: { workspace_id: workspace, repository_id: repository! },
              query: { from_snapshot_id: from!, to_snapshot_id: to! },
            },
          },
        ),
      ),
    staleTime: Infinity,
  });
}

/** An entity across the repository's snapshots (getEntityHistory), newest first. */
export function useEntityHistory(workspace: string, repository: string | null, key: string) {
  return useQuery({
    queryKey: ['ws', workspace, 'repositories', repository ?? '', 'entity-history', key],
    enabled: repository !== null,
    queryFn: async () =>
      unwrap(
        await api.GET(
          '/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/entity-history',
          {
            params: {
              path: { workspace_id: workspace, repository_id: repository! },
              query: { key, limit: 20 },
            },
          },
        ),
      ),
    staleTime: 60_000,
  });
}

/** The findings this audit observed (one bounded page: the panel filters it by entity). */
export function useAuditFindings(workspace: string, audit: string) {
  return useQuery({
    queryKey: ['ws', workspace, 'audit', audit, 'findings'],
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/findings', {
          params: { path: { workspace_id: workspace, audit_id: audit }, query: { limit: 200 } },
        }),
      ),
    staleTime: 60_000,
  });
}

/** The decisions about a repository (one bounded page: the panel filters it by entity). */
export function useRepositoryDecisions(workspace: string, repository: string | null) {
  return useQuery({
    queryKey: ['ws', workspace, 'decisions', 'repository', repository ?? 'all'],
    queryFn: async () =>
      unwrap(
        await api.GET('/v1/workspaces/{workspace_id}/decisions', {
          params: {
            path: { workspace_id: workspace },
            query: repository ? { repository_id: repository, limit: 100 } : { limit: 100 },
          },
        }),
      ),
    staleTime: 30_000,
  });
}
