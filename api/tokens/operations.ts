/**
 * API tokens. Creation cannot escalate: the new token's scopes must all be held by the caller and
 * it cannot outlive the caller's token. The secret is returned once, by createApiToken only.
 */
import {
  findToken,
  insertToken,
  lockLiveToken,
  revokeDescendants,
  revokeToken,
  tokensQuery,
} from '../../db/tokens';
import { type ScopeName } from '../../domain/contract/values';
import {
  generateToken,
  grantRefusal,
  MAX_TOKEN_DAYS,
  scopesLacking,
} from '../../domain/tokens/rules';
import { problems } from '../errors';
import {
  auditTokenId,
  defineOperation,
  created,
  ok,
  operationGroup,
  route,
} from '../registry/operation';
import { PageQuery, WorkspaceParams } from '../schema-kit';
import { iso, recordPrincipalWrite } from '../shared';
import { presentToken } from './present';
import {
  ApiTokenCreate,
  ApiTokenCreated,
  ApiTokenPage,
  ApiTokenResponse,
  TokenParams,
} from './schemas';
import { found, listOperation, recordedWrite } from '../registry/parts';

const TOKENS = operationGroup('Tokens');

export const listApiTokens = listOperation({
  operationId: 'listApiTokens',
  ...route.get('/v1/workspaces/{workspace_id}/tokens'),
  summary: 'List the API tokens of a workspace',
  ...TOKENS.scope('members:read'),
  params: WorkspaceParams,
  query: PageQuery,
  success: ok('A page of tokens, newest first; no secrets.', ApiTokenPage),
  rows: ({ db, params }) => tokensQuery(db, params.workspace_id),
  present: presentToken,
});

export const createApiToken = defineOperation({
  operationId: 'createApiToken',
  ...route.post('/v1/workspaces/{workspace_id}/tokens'),
  summary: 'Create an API token',
  description:
    "The caller must hold every requested scope (403 insufficient_scope naming the missing ones) and the new token cannot expire after the caller's own (403 expiry_exceeds_creator). expires_at must be in the future and at most 366 days ahead. The secret `token` appears only in this response.",
  ...TOKENS.token('the caller must hold every scope it grants.'),
  params: WorkspaceParams,
  body: ApiTokenCreate,
  success: created('The token, with its secret (shown once).', ApiTokenCreated),
  handler: async ({ db, params, body, principal, requestId, koa }) => {
    const scopes = [...new Set(body.scopes)] as ScopeName[];
    const expiresAt = new Date(body.expires_at);
    const refused = grantRefusal({ scopes, expiresAt }, principal, Date.now());
    switch (refused?.code) {
      case 'expiry_not_in_future':
        throw problems.validationFailed([
          { in: 'body', path: '/expires_at', message: 'must be in the future' },
        ]);
      case 'expiry_too_far':
        throw problems.validationFailed([
          {
            in: 'body',
            path: '/expires_at',
            message: `must be at most ${MAX_TOKEN_DAYS} days ahead`,
          },
        ]);
      case 'scopes_not_held':
        throw problems.insufficientScope(
          refused.missing,
          `A token cannot grant scopes its creator lacks: ${refused.missing.join(', ')}.`,
        );
      case 'expiry_exceeds_creator':
        throw problems.forbidden(
          'expiry_exceeds_creator',
          `expires_at ${body.expires_at} is later than the creating token's expiry ${principal.expiresAt.toISOString()}.`,
          "Choose an expires_at no later than your own token's.",
        );
    }
    const secret = generateToken();
    const row = await db.transaction(async (trx) => {
      // The creator may have been revoked since it authenticated (or be revoked meanwhile).
      // (A session has no token row: it was checked live when the request arrived.)
      if (!principal.session && !(await lockLiveToken(trx, principal.tokenId))) {
        throw problems.invalidToken('The token making this request was revoked or has expired.');
      }
      const created = await insertToken(trx, {
        workspaceId: params.workspace_id,
        memberId: principal.memberId,
        createdByTokenId: auditTokenId(principal),
        name: body.name,
        prefix: secret.prefix,
        secretSha256: secret.secretSha256,
        scopes,
        expiresAt,
      });
      return recordedWrite(trx, principal, requestId, created, {
        action: 'api_token.created',
        details: {
          name: created.name,
          prefix: created.prefix,
          scopes,
          expires_at: iso(created.expires_at),
        },
      });
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/tokens/${row.id}`);
    koa.set('Cache-Control', 'no-store');
    return {
      id: row.id,
      name: row.name,
      prefix: row.prefix,
      token: secret.token,
      scopes: row.scopes,
      expires_at: iso(row.expires_at),
    };
  },
});

export const getApiToken = defineOperation({
  operationId: 'getApiToken',
  ...route.get('/v1/workspaces/{workspace_id}/tokens/{token_id}'),
  summary: 'Get an API token',
  ...TOKENS.scope('members:read'),
  params: TokenParams,
  success: ok('The token, without its secret.', ApiTokenResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findToken(db, params.workspace_id, params.token_id),
      `Token ${params.token_id}`,
    );
    return presentToken(row);
  },
});

export const revokeApiToken = defineOperation({
  operationId: 'revokeApiToken',
  ...route.delete('/v1/workspaces/{workspace_id}/tokens/{token_id}'),
  summary: 'Revoke an API token',
  description:
    'Revoking is permanent and idempotent: a second call answers the token with its first revoked_at. The tokens it minted (created_by_token_id), and the tokens they minted, are revoked with it, each with its own audit event (details.cascade_from names the token revoked here).',
  tag: 'Tokens',
  access: {
    kind: 'token',
    rule: 'a token may revoke itself; revoking another needs members:read and every scope that token holds.',
  },
  params: TokenParams,
  success: ok('The revoked token.', ApiTokenResponse),
  handler: async ({ db, params, principal, requestId, services }) => {
    // Only a token reading tokens may learn about another one (its existence, its scopes).
    if (params.token_id !== principal.tokenId && !principal.scopes.has('members:read')) {
      throw problems.insufficientScope(
        ['members:read'],
        'Revoking another token requires members:read.',
      );
    }
    const target = await found(
      findToken(db, params.workspace_id, params.token_id),
      `Token ${params.token_id}`,
    );
    const missing = scopesLacking(principal.scopes, target.scopes);
    if (target.id !== principal.tokenId && missing.length > 0) {
      throw problems.insufficientScope(
        missing,
        `Revoking another token needs every scope it holds; missing: ${missing.join(', ')}.`,
      );
    }
    const { row, lineage } = await db.transaction(async (trx) => {
      const revoked = await revokeToken(trx, params.workspace_id, params.token_id);
      if (!target.revoked_at) {
        await recordPrincipalWrite(trx, principal, requestId, {
          action: 'api_token.revoked',
          resourceType: 'api_token',
          resourceId: target.id,
          details: { name: target.name, prefix: target.prefix },
        });
      }
      // Every token it minted, and theirs, goes with it (also on a repeat: a lineage minted
      // before revocation cascaded is cleaned up then), each with its own audit event.
      const descendants = await revokeDescendants(trx, params.workspace_id, target.id);
      for (const child of descendants) {
        await recordPrincipalWrite(trx, principal, requestId, {
          action: 'api_token.revoked',
          resourceType: 'api_token',
          resourceId: child.id,
          details: {
            name: child.name,
            prefix: child.prefix,
            cascade_from: target.id,
            created_by_token_id: child.created_by_token_id,
          },
        });
      }
      return { row: revoked!, lineage: descendants };
    });
    for (const revoked of [row, ...lineage]) services.auth.evict(revoked.prefix);
    return presentToken(row);
  },
});
