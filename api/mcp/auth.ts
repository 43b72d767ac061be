/**
 * Bearer authentication of /mcp: an opaque access token of our authorization server, bound to
 * this MCP resource (audience), under a grant the member has not revoked, for a membership that
 * still exists. It maps to the same Principal a REST token gives, with the workspace of the
 * grant and the scopes the token holds that the member's role still allows.
 */
import type { Knex } from 'knex';
import { findGrant } from '../../db/oauth';
import { memberById, findWorkspace } from '../../db/workspaces';
import type { ScopeName } from '../../domain/contract/values';
import { roleScopes } from '../../domain/tokens/roles';
import type { Principal } from '../registry/operation';
import type { ReadyProvider } from '../oauth/gateway';

export interface McpPrincipal extends Principal {
  oauth: { clientId: string; grantId: string };
}

export type McpAuth =
  | { ok: true; principal: McpPrincipal }
  | { ok: false; error: 'invalid_request' | 'invalid_token'; description: string };

export async function authenticateMcp(
  db: Knex,
  ready: ReadyProvider,
  header: string | undefined,
): Promise<McpAuth> {
  if (!header) return { ok: false, error: 'invalid_request', description: 'No bearer token.' };
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
  if (!match)
    return {
      ok: false,
      error: 'invalid_request',
      description: 'Authorization is not `Bearer <token>`.',
    };
  const refuse = (description: string): McpAuth => ({
    ok: false,
    error: 'invalid_token',
    description,
  });
  const token = await ready.provider.AccessToken.find(match[1]!);
  if (!token) return refuse('The access token is unknown, expired or revoked.');
  const audiences = [token.aud ?? []].flat();
  if (!audiences.includes(ready.urls.resource))
    return refuse(`The access token was not issued for ${ready.urls.resource}.`);
  const [oidcGrant, grant] = await Promise.all([
    ready.provider.Grant.find(token.grantId),
    findGrant(db, token.grantId),
  ]);
  if (!oidcGrant || !grant || grant.revoked_at)
    return refuse('The grant of this token was revoked.');
  const member = await memberById(db, token.accountId);
  if (!member || member.removed_at || member.id !== grant.member_id)
    return refuse('The member of this grant is gone.');
  const workspace = await findWorkspace(db, member.workspace_id);
  if (!workspace) return refuse('The workspace of this grant is gone.');
  const role = new Set(roleScopes(member.role));
  const granted = new Set(grant.scopes);
  const scopes = (token.scope ?? '')
    .split(' ')
    .filter((s) => granted.has(s) && role.has(s as ScopeName)) as ScopeName[];
  return {
    ok: true,
    principal: {
      tokenId: `oauth:${grant.id}`,
      prefix: `oauth:${grant.client_id}`,
      workspaceId: workspace.id,
      memberId: member.id,
      memberLogin: member.login,
      scopes: new Set(scopes),
      expiresAt: new Date(token.exp * 1000),
      workspace: {
        id: workspace.id,
        name: workspace.name,
        slug: workspace.slug,
        createdAt: workspace.created_at.toISOString(),
        updatedAt: workspace.updated_at.toISOString(),
      },
      oauth: { clientId: grant.client_id, grantId: grant.id },
    },
  };
}
