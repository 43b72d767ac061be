/** The grants members gave MCP clients (not in the spec: documented as our extension). */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, Strict, Uuid } from '../schema-kit';
import { CursorPage } from '../schema-parts';

export const OAuthGrantResponse = Strict(
  'OAuthGrantResponse',
  {
    id: Type.String({ description: 'Grant id (also the id its tokens carry).' }),
    workspace_id: Uuid(),
    member_id: Uuid({ description: 'The membership the client acts as.' }),
    client_id: Type.String({ description: 'The MCP client, as it registered.' }),
    client_name: Nullable(Type.String()),
    redirect_host: Type.String({ description: 'Where the client received the authorization.' }),
    resource: Type.String({ description: 'The MCP resource its access tokens are bound to.' }),
    scopes: Type.Array(Type.String(), { description: 'Scopes the member consented to.' }),
    expires_at: DateTime({ description: 'When the grant and its refresh tokens end.' }),
    revoked_at: Nullable(DateTime({ description: 'Set when the grant was revoked.' })),
    created_at: DateTime(),
  },
  { description: 'An authorization a member gave an MCP client for one workspace.' },
);

export const OAuthGrantPage = CursorPage('OAuthGrantPage', OAuthGrantResponse);

export const OAuthGrantParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    grant_id: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'The grant.',
    }),
  },
  { additionalProperties: false },
);

// The static types of the schemas that code elsewhere names.
export type OAuthGrantResponse = Static<typeof OAuthGrantResponse>;
