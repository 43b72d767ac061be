/**
 * Schemas of ours (the spec names them in italics in API.md or not at all): problem bodies,
 * pagination parameters, workspaces, members, repositories, scope list, health.
 */
import { Type, type Static } from '@sinclair/typebox';
import { CursorPage, DateTime, Nullable, Strict, Uuid, pageFields } from '../schema-kit';
import { ActivityFeedItem, ApiTokenResponse, AuditEventResponse, Scope } from '../schemas';

export const FieldError = Strict('FieldError', {
  in: Type.Union([
    Type.Literal('body'),
    Type.Literal('query'),
    Type.Literal('path'),
    Type.Literal('header'),
  ]),
  path: Type.String({ description: 'JSON Pointer to the offending value within its location.' }),
  message: Type.String(),
});

export const ProblemDetails = Type.Object(
  {
    type: Type.String({
      description: 'URI reference naming the problem type: /v1/problems/<code>.',
    }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    code: Type.String({
      description:
        'Stable snake_case code: validation_failed, unknown_property, malformed_json, authentication_required, invalid_token, insufficient_scope, expiry_exceeds_creator, not_found, method_not_allowed, conflict, version_mismatch, payload_too_large, unsupported_media_type, rate_limited, service_unavailable, internal.',
    }),
    hint: Type.String({ description: 'What to do next.' }),
    request_id: Type.String({ description: 'The X-Request-ID of the request.' }),
    errors: Type.Optional(
      Type.Array(FieldError, { description: 'Every validation problem, with its location.' }),
    ),
  },
  {
    'x-name': 'ProblemDetails',
    additionalProperties: true,
    description:
      'RFC 9457 problem details; some problems add extension members (e.g. required_scopes).',
  },
);

// Parameters ---------------------------------------------------------------------------------

export const PageQuery = Type.Object(
  {
    ...pageFields(),
  },
  { additionalProperties: false },
);
export type PageQuery = Static<typeof PageQuery>;

export const WorkspaceParams = Type.Object(
  { workspace_id: Uuid({ description: 'The workspace.' }) },
  { additionalProperties: false },
);

export const TokenParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    token_id: Uuid({ description: 'The API token.' }),
  },
  { additionalProperties: false },
);

export const RepositoryParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    repository_id: Uuid({ description: 'The repository.' }),
  },
  { additionalProperties: false },
);

// Meta ---------------------------------------------------------------------------------------

export const ScopeDescription = Strict('ScopeDescription', {
  name: Scope,
  description: Type.String(),
});

export const ScopeList = Strict('ScopeList', {
  items: Type.Array(ScopeDescription, { minItems: 25, maxItems: 25 }),
});

const Up = Type.Union([Type.Literal('ok'), Type.Literal('down')]);
export const Health = Strict('Health', {
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
    description:
      'ok when every dependency answers; degraded when Temporal is down (reads still work).',
  }),
  db: Up,
  temporal: Up,
  version: Type.String(),
});

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

// Workspaces and members ---------------------------------------------------------------------

export const WorkspaceResponse = Strict('WorkspaceResponse', {
  id: Uuid(),
  name: Type.String(),
  slug: Type.String(),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export const WorkspacePage = CursorPage('WorkspacePage', WorkspaceResponse);

export const MemberResponse = Strict('MemberResponse', {
  id: Uuid(),
  workspace_id: Uuid(),
  login: Type.String(),
  display_name: Nullable(Type.String()),
  role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
  created_at: DateTime(),
});
export const MemberPage = CursorPage('MemberPage', MemberResponse);
export const ApiTokenPage = CursorPage('ApiTokenPage', ApiTokenResponse);

// Repositories -------------------------------------------------------------------------------

const RepositoryName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._/-]*$',
  description: 'Unique in the workspace (case-insensitive): letters, digits, `.`, `_`, `-`, `/`.',
});
const RepositoryUrl = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'Git URL: https://, ssh:// or scp-like `git@host:path`. Local paths and file:// URLs only when the operator allows them (ALLOW_LOCAL_REPOSITORIES).',
});
const BranchName = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Branch audited by default.',
});
const Description = Type.String({ maxLength: 2000 });

export const RepositoryCreate = Strict('RepositoryCreate', {
  name: RepositoryName,
  url: RepositoryUrl,
  default_branch: Type.Optional({ ...BranchName, default: 'main' }),
  description: Type.Optional(Nullable(Description)),
});
export type RepositoryCreate = Static<typeof RepositoryCreate>;

export const RepositoryUpdate = Strict(
  'RepositoryUpdate',
  {
    name: Type.Optional(RepositoryName),
    url: Type.Optional(RepositoryUrl),
    default_branch: Type.Optional(BranchName),
    description: Type.Optional(Nullable(Description)),
  },
  { minProperties: 1, description: 'The fields to change; at least one.' },
);
export type RepositoryUpdate = Static<typeof RepositoryUpdate>;

export const RepositoryResponse = Strict('RepositoryResponse', {
  id: Uuid(),
  workspace_id: Uuid(),
  name: Type.String(),
  url: Type.String(),
  default_branch: Type.String(),
  description: Nullable(Type.String()),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export const RepositoryPage = CursorPage('RepositoryPage', RepositoryResponse);

// Activity -----------------------------------------------------------------------------------

export const ActivityPage = CursorPage('ActivityPage', ActivityFeedItem);
export const AuditEventPage = CursorPage('AuditEventPage', AuditEventResponse);
