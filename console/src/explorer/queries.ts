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
