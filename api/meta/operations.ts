/** Public meta operations: the contract, the scope list, health; and the calling token. */
import { Type } from '@sinclair/typebox';
import { pingDatabase } from '../../db/connection';
import { findToken } from '../../db/tokens';
import { SCOPES } from '../../domain/contract/values';
import { SCOPE_DESCRIPTIONS } from '../../domain/tokens/scope-descriptions';
import { CONTRACT_VERSION, contractDocument } from '../contract';
import { problems } from '../errors';
import { defineOperation, ok, operationGroup, route } from '../registry/operation';
import { presentToken } from '../tokens/present';
import { CurrentTokenResponse } from '../tokens/schemas';
import { Health, ScopeList } from './schemas';
import { found } from '../registry/parts';

const META = operationGroup('Meta');

export const getContract = defineOperation({
  operationId: 'getContract',
  ...route.get('/v1/openapi.json'),
  summary: 'The OpenAPI 3.1 contract of this API',
  ...META.public(),
  success: {
    status: 200,
    description: 'The OpenAPI 3.1 document, generated from the operation registry.',
    schema: Type.Object({}, { additionalProperties: true }),
  },
  handler: async ({ services }) => contractDocument(services.config.publicBaseUrl),
});

export const listScopes = defineOperation({
  operationId: 'listScopes',
  ...route.get('/v1/scopes'),
  summary: 'The 25 scopes a token can carry',
  ...META.public(),
  success: ok('Every scope with what it allows.', ScopeList),
  handler: async () => ({
    items: SCOPES.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] })),
  }),
});

export const getHealth = defineOperation({
  operationId: 'getHealth',
  ...route.get('/v1/health'),
  summary: 'Health of the API and its dependencies',
  description:
    'Answers 200 while the database works (status degraded when Temporal is down) and 503 when it does not.',
  ...META.public(),
  errors: [503],
  success: ok('The API can serve requests.', Health),
  handler: async ({ services }) => {
    const [db, temporal] = await Promise.all([
      pingDatabase(services.db).then(
        () => 'ok' as const,
        () => 'down' as const,
      ),
      services.temporal.healthy().then((up) => (up ? ('ok' as const) : ('down' as const))),
    ]);
    const health = {
      status: temporal === 'ok' ? ('ok' as const) : ('degraded' as const),
      db,
      temporal,
      version: CONTRACT_VERSION,
    };
    if (db === 'down')
      throw problems.unavailable('database', 'The database does not answer.', {
        health: { ...health, status: 'down' },
      });
    return health;
  },
});

export const getCurrentToken = defineOperation({
  operationId: 'getCurrentToken',
  ...route.get('/v1/token'),
  summary: 'The token making this request',
  ...META.token('a token can always read itself.'),
  success: ok('The calling token, without its secret.', CurrentTokenResponse),
  handler: async ({ db, principal }) => {
    const row = await found(findToken(db, principal.workspaceId, principal.tokenId), 'Token');
    return { ...presentToken(row), workspace_id: row.workspace_id, member_id: row.member_id };
  },
});
