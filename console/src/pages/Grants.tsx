/**
 * OAuth grants: the AI clients (MCP) this member authorized for the workspace on the consent
 * page, their scopes and expiry; revoking one ends its access tokens at once.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { pageKeys, useOAuthGrants } from '../api/pages';
import { Loading, Problem, When, Table } from '../components';
import { useTitle } from '../router';

export function Grants({ ws }: { ws: string }) {
  useTitle('OAuth grants');
  const client = useQueryClient();
  const grants = useOAuthGrants(ws);
  const revoke = useMutation({
    mutationFn: async (id: string) =>
      unwrap(
        await api.DELETE('/v1/workspaces/{workspace_id}/oauth-grants/{grant_id}', {
          params: { path: { workspace_id: ws, grant_id: id } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: pageKeys.grants(ws) }),
  });
  return (
    <>
      <h1>OAuth grants</h1>
      <p className="muted">
        The AI clients you allowed to act for you in this workspace (through MCP). Revoking a grant
        stops its access at once; the client must ask you again.
      </p>
      {revoke.isError && <Problem error={revoke.error} />}
      {grants.isPending ? (
        <Loading />
      ) : grants.isError ? (
        <Problem error={grants.error} />
      ) : grants.data.items.length === 0 ? (
        <p className="muted">You have not authorized any client.</p>
      ) : (
        <Table
          label="OAuth grants table"
          columns={['Client', 'Redirects to', 'Scopes', 'Granted', 'Expires', 'State']}
        >
          {grants.data.items.map((g) => {
            const name = g.client_name ?? g.client_id;
            return (
              <tr key={g.id} data-grant={g.id}>
                <th scope="row">{name}</th>
                <td>
                  <code>{g.redirect_host}</code>
                </td>
                <td>{g.scopes.join(', ')}</td>
                <td>
                  <When at={g.created_at} />
                </td>
                <td>
                  <When at={g.expires_at} />
                </td>
                <td>
                  {g.revoked_at ? (
                    <>
                      revoked <When at={g.revoked_at} />
                    </>
                  ) : (
                    <button
                      type="button"
                      className="secondary"
                      disabled={revoke.isPending}
                      onClick={() => revoke.mutate(g.id)}
                    >
                      Revoke <span className="sr-only">{name}</span>
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </Table>
      )}
    </>
  );
}
