/**
 * The grants a member gave MCP clients through the consent page: listed and revoked by the
 * member (any of their tokens). Revoking ends the grant's access and refresh tokens at once.
 */
import { findGrant, memberGrantsQuery, type OAuthGrantRow } from '../../db/oauth';
import { problems } from '../errors';
import { auditTokenId, defineOperation, ok, operationGroup, route } from '../registry/operation';
import { revokeGrant } from './revoke';
import { PageQuery, WorkspaceParams } from '../schema-kit';
import { OAuthGrantPage, OAuthGrantParams, OAuthGrantResponse } from './schemas';
import { listOperation } from '../registry/parts';
import { columns, isoColumns } from '../registry/columns';

function present(row: OAuthGrantRow): OAuthGrantResponse {
  return {
    ...columns(row, ['id', 'workspace_id', 'member_id', 'client_id', 'client_name']),
    ...columns(row, ['redirect_host', 'resource', 'scopes']),
    ...isoColumns(row, ['expires_at', 'revoked_at', 'created_at']),
  };
}

const OWN = "a member's own grants: any token acting for the member.";

const OAUTH_GRANTS = operationGroup('OAuth grants');

export const listOAuthGrants = listOperation({
  operationId: 'listOAuthGrants',
  ...route.get('/v1/workspaces/{workspace_id}/oauth-grants'),
  summary: 'List the OAuth grants you gave MCP clients',
  description:
    'The authorizations the calling member gave MCP clients for this workspace on the consent page, newest first, revoked ones included (revoked_at set).',
  ...OAUTH_GRANTS.token(OWN),
  params: WorkspaceParams,
  query: PageQuery,
  success: ok('A page of grants.', OAuthGrantPage),
  rows: ({ db, params, principal }) =>
    memberGrantsQuery(db, params.workspace_id, principal.memberId),
  present: present,
});

export const revokeOAuthGrant = defineOperation({
  operationId: 'revokeOAuthGrant',
  ...route.delete('/v1/workspaces/{workspace_id}/oauth-grants/{grant_id}'),
  summary: 'Revoke an OAuth grant',
  description:
    "Ends the grant: its access tokens stop working at once and its refresh tokens cannot be used. Idempotent: a second call answers the grant with its first revoked_at. Another member's grant is 404.",
  ...OAUTH_GRANTS.token(OWN),
  params: OAuthGrantParams,
  success: ok('The revoked grant.', OAuthGrantResponse),
  handler: async ({ db, params, principal, requestId }) => {
    const grant = await findGrant(db, params.grant_id);
    if (
      !grant ||
      grant.workspace_id !== params.workspace_id ||
      grant.member_id !== principal.memberId
    )
      throw problems.notFound(`OAuth grant ${params.grant_id}`);
    const row = await revokeGrant(db, grant, {
      actorId: principal.memberId,
      actorLogin: principal.memberLogin,
      tokenId: auditTokenId(principal),
      requestId,
      via: 'api',
    });
    return present(row);
  },
});
