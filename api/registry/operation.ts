/**
 * The operation registry's shape. Each operation is declared once, with its id, method, path,
 * access rule, schemas and handler; routing, scope checks, validation and the OpenAPI document
 * are all derived from these declarations (see router.ts and openapi.ts).
 */
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import type { AppServices } from '../services';
import type { Config } from '../../platform/config';
import type { ScopeName } from '../../domain/contract/values';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Who may call an operation. */
export type Access =
  /** No token needed (contract, scopes, health). */
  | { kind: 'public' }
  /** A valid token holding `scope`. */
  | { kind: 'scope'; scope: ScopeName }
  /** Any valid token; the handler applies a finer rule described by `rule`. */
  | { kind: 'token'; rule: string };

/** The authenticated caller: a token acting for a member of one workspace. */
export interface Principal {
  tokenId: string;
  prefix: string;
  workspaceId: string;
  memberId: string;
  memberLogin: string;
  scopes: ReadonlySet<ScopeName>;
  expiresAt: Date;
  /** The token's workspace, read with the token (saves listWorkspaces a query); ISO 8601 times. */
  workspace: { id: string; name: string; slug: string; createdAt: string; updatedAt: string };
  /** No token: a tokenless read of the demo workspace (api/demo-read.ts); GET operations only. */
  anonymous?: true;
  /**
   * An MCP client's OAuth access token (api/mcp/auth.ts): `tokenId` is then `oauth:<grant id>`,
   * no API token row; audit events name the client instead (auditTokenId, recordPrincipalWrite).
   */
  oauth?: { clientId: string; grantId: string };
  /**
   * A member's signed-in session (api/sessions/principal.ts): `tokenId` is then
   * `session:<session id>`, no API token row; the member's role and every workspace they belong to.
   */
  session?: {
    id: string;
    role: string;
    expiresAt: Date;
    workspaces: Array<Principal['workspace'] & { role: string }>;
  };
}

/** The API token id an audit event may reference (none for an OAuth client's token). */
export function auditTokenId(principal: Principal): string | null {
  return principal.oauth || principal.session ? null : principal.tokenId;
}

export interface OperationContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Set for every operation that is not public. */
  principal: Principal;
  services: AppServices;
  db: Knex;
  requestId: string;
  log: Logger;
  koa: Context;
  /**
   * The id of the resource this request creates. Under an Idempotency-Key it is the one reserved
   * with the key, so a retry after a crash finds (and finishes) the same resource instead of
   * creating a second; otherwise a fresh UUID.
   */
  newId(): string;
  /** Whether newId() is the id an Idempotency-Key reserved (a retry with the key gets it again). */
  readonly keyed: boolean;
}

/**
 * The operations of one tag (a family's section of the contract): the tag is named once, and
 * each operation spreads its tag with its access, e.g. `...AUDITS.scope('audits:read')`.
 */
export function operationGroup(tag: string) {
  const as = (access: Access): { tag: string; access: Access } => ({ tag, access });
  return {
    /** A valid token holding `scope`. */
    scope: (scope: ScopeName) => as({ kind: 'scope', scope }),
    /** Any valid token; the handler applies the finer `rule`. */
    token: (rule: string) => as({ kind: 'token', rule }),
    /** No token needed. */
    public: () => as({ kind: 'public' }),
    /** An access built elsewhere (an approval's). */
    access: as,
  };
}

const at = (method: HttpMethod) => (path: string) => ({ method, path });

/** An operation's method and path, spread into its declaration: `...route.get('/v1/...')`. */
export const route = {
  get: at('get'),
  post: at('post'),
  put: at('put'),
  patch: at('patch'),
  delete: at('delete'),
};

/** A response header an operation declares (documented in the contract, checked in tests). */
export interface HeaderSpec {
  description: string;
  schema?: Record<string, unknown>;
}

/** `Location` of a created or started resource. */
export const LOCATION_HEADER: HeaderSpec = {
  description: 'Path of the created (or started) resource.',
};

/** 200: `schema`, described. */
export function ok<R extends TSchema>(description: string, schema: R): SuccessSpec<R> {
  return { status: 200, description, schema };
}

/** 201 with the created resource's `Location`. */
export function created<R extends TSchema>(description: string, schema: R): SuccessSpec<R> {
  return { status: 201, description, schema, headers: { Location: LOCATION_HEADER } };
}

/** 202 with the started (queued) resource's `Location`. */
export function started<R extends TSchema>(description: string, schema: R): SuccessSpec<R> {
  return { status: 202, description, schema, headers: { Location: LOCATION_HEADER } };
}

export interface SuccessSpec<R extends TSchema | undefined> {
  status: 200 | 201 | 202 | 204;
  description: string;
  schema: R;
  /**
   * Defaults to application/json. With several, the handler picks one by setting `koa.type`;
   * the first is the default.
   */
  contentType?: string | readonly string[];
  /** Headers this response may carry beyond the common ones (documented in the contract). */
  headers?: Readonly<Record<string, HeaderSpec>>;
  /**
   * Other representations, each with its own schema, that the handler picks by setting
   * `koa.type` (e.g. a SARIF or XML rendering of a JSON resource).
   */
  alternates?: Readonly<Record<string, TSchema>>;
}

export interface OperationSpec<
  P extends TObject | undefined = TObject | undefined,
  Q extends TObject | undefined = TObject | undefined,
  B extends TSchema | undefined = TSchema | undefined,
  R extends TSchema | undefined = TSchema | undefined,
> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style path (`/v1/workspaces/{workspace_id}`). */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  success: SuccessSpec<R>;
  /** Problem statuses beyond the ones every operation of its kind has (e.g. 409). */
  errors?: number[];
  /** Accepts `Idempotency-Key`. */
  idempotent?: boolean;
  /** A raw (non-JSON) request body, streamed to the handler through `koa.req`. */
  rawBody?: { contentTypes: string[]; description: string; limitBytes: (config: Config) => number };
  /** Accepts `If-Match: "<version>"`. */
  conditional?: boolean;
  // NoInfer: the generics come from the schemas only; inferring them back through Static<>
  // from the handler makes TypeScript recurse without end.
  handler: (
    ctx: OperationContext<NoInfer<Value<P>>, NoInfer<Value<Q>>, NoInfer<Value<B>>>,
  ) => Promise<NoInfer<Value<R>>>;
}

/** The static type of an optional schema (handlers see `undefined` where there is none). */
type Value<S> = S extends TSchema ? Static<S> : undefined;

/** Declares one operation; the generics give the handler typed params, query, body and result. */
export function defineOperation<
  P extends TObject | undefined = undefined,
  Q extends TObject | undefined = undefined,
  B extends TSchema | undefined = undefined,
  R extends TSchema | undefined = undefined,
>(spec: OperationSpec<P, Q, B, R>): OperationSpec<P, Q, B, R> {
  return spec;
}

/**
 * Any declared operation, as the router and document builder see it. The handler is typed
 * loosely here on purpose: comparing against Static<any> makes TypeScript recurse forever.
 */
export type AnyOperation = Omit<OperationSpec, 'handler'> & {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handler: (ctx: OperationContext<any, any, any>) => Promise<unknown>;
};

/** The problem statuses an operation documents and can answer with. */
export function problemStatuses(op: AnyOperation): number[] {
  const statuses = new Set<number>([400, 429, 500]);
  if (op.access.kind !== 'public') {
    [401, 403].forEach((s) => statuses.add(s));
  }
  if (op.access.kind !== 'public' || op.path.includes('{')) statuses.add(404);
  if (op.body || op.rawBody) [413, 415].forEach((s) => statuses.add(s));
  if (op.idempotent || op.conditional) statuses.add(409);
  if (op.idempotent) statuses.add(422);
  (op.errors ?? []).forEach((s) => statuses.add(s));
  return [...statuses].sort((a, b) => a - b);
}
