/** API tokens and the current token. */
import { Type, type Static } from '@sinclair/typebox';
import { SCOPES } from '../../domain/contract/values';
import { DateTime, Nullable, Strict, Uuid, NamedUnion } from '../schema-kit';
import { CursorPage, ResourceParams } from '../schema-parts';

export const Scope = NamedUnion('Scope', SCOPES, 'A permission an API token can carry.');

export const ApiTokenCreate = Strict(
  'ApiTokenCreate',
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: 'Label of the token.' }),
    scopes: Type.Array(Scope, {
      minItems: 1,
      maxItems: 25,
      description: 'Scopes the token carries.',
    }),
    expires_at: DateTime({ description: 'When the token stops working.' }),
  },
  { description: 'Request to create an API token.' },
);

export const ApiTokenCreated = Strict(
  'ApiTokenCreated',
  {
    id: Uuid(),
    name: Type.String(),
    prefix: Type.String({ description: 'Visible, non-secret part of the token.' }),
    token: Type.String({ description: 'The full secret token; shown only in this response.' }),
    scopes: Type.Array(Type.String()),
    expires_at: DateTime(),
  },
  { description: 'A newly created API token, including its secret.' },
);

export const ApiTokenResponse = Strict(
  'ApiTokenResponse',
  {
    id: Uuid(),
    name: Type.String(),
    prefix: Type.String({ description: 'Visible, non-secret part of the token.' }),
    scopes: Type.Array(Type.String()),
    expires_at: DateTime(),
    last_used_at: Nullable(DateTime()),
    revoked_at: Nullable(DateTime({ description: 'Set when the token was revoked.' })),
    created_at: DateTime(),
    // Beyond the spec's fields: documented so clients can rely on it.
    created_by_token_id: Type.Optional(
      Nullable(
        Uuid({
          description:
            'The token that minted this one (null for tokens an operator issued); revoking that token revokes this one.',
        }),
      ),
    ),
  },
  { description: 'An API token without its secret.' },
);

// Parameters ---------------------------------------------------------------------------------
export const TokenParams = ResourceParams('token_id', 'The API token.');

export const CurrentTokenResponse = Strict(
  'CurrentTokenResponse',
  {
    ...ApiTokenResponse.properties,
    workspace_id: Uuid(),
    member_id: Uuid({ description: 'The member the token acts for (actor_id in audit events).' }),
  },
  {
    description: 'The calling token (ApiTokenResponse) with the workspace and member it acts for.',
  },
);
export const ApiTokenPage = CursorPage('ApiTokenPage', ApiTokenResponse);

// The static types of the schemas that code elsewhere names.
export type ApiTokenResponse = Static<typeof ApiTokenResponse>;
