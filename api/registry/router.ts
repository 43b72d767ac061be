/**
 * Builds the Koa router from the operation registry. For each operation, in order: credentials
 * and scope (401/403), path parameters, workspace tenancy (another workspace answers 404),
 * query, body (415/413/400), handler, and optionally response validation.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import compose from 'koa-compose';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { TSchema } from '@sinclair/typebox';
import { ApiError, problems } from '../errors';
import { isDatabaseUnavailable } from '../../db/errors';
import type { AppServices } from '../services';
import type { RequestState } from '../middleware';
import { compileResponseValidator, compileValidator, type Validator } from './validation';
import type { AnyOperation, OperationContext, Principal } from './operation';
import type { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import crypto from 'node:crypto';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
} from '../../db/idempotency';

/** `/v1/workspaces/{workspace_id}` -> `/v1/workspaces/:workspace_id`. */
export function koaPath(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ':$1');
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('Content-Length');
  return ctx.get('Transfer-Encoding') !== '' || (length !== '' && length !== '0');
}

async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  if (!ctx.is('application/json')) {
    throw problems.unsupportedMediaType(ctx.get('Content-Type') || undefined, ['application/json']);
  }
  const declared = Number(ctx.get('Content-Length'));
  if (Number.isFinite(declared) && declared > limit) throw problems.payloadTooLarge(limit);
  const text = await getRawBody(ctx.req, { limit, encoding: 'utf8' });
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw problems.malformedJson((err as Error).message);
  }
}

function authorize(op: AnyOperation, state: RequestState): Principal | undefined {
  if (op.access.kind === 'public') return undefined;
  if (!state.principal) throw state.authError ?? problems.missingToken();
  // The demo's anonymous reader: plain reads under a scope, nothing else.
  if (
    state.principal.anonymous &&
    (op.method !== 'get' ||
      op.access.kind !== 'scope' ||
      !state.principal.scopes.has(op.access.scope))
  ) {
    throw problems.missingToken();
  }
  if (op.access.kind === 'scope' && !state.principal.scopes.has(op.access.scope)) {
    throw problems.insufficientScope([op.access.scope]);
  }
  return state.principal;
}

interface Compiled {
  params?: Validator;
  query?: Validator;
  body?: Validator;
  response?: Validator;
  /** Validators of the alternate representations, by content type. */
  alternates: Map<string, Validator>;
}

function compile(op: AnyOperation): Compiled {
  return {
    params: op.params ? compileValidator(op.params, 'path') : undefined,
    query: op.query ? compileValidator(op.query, 'query') : undefined,
    body: op.body ? compileValidator(op.body as TSchema, 'body') : undefined,
    response: op.success.schema
      ? compileResponseValidator(op.success.schema as TSchema)
      : undefined,
    alternates: new Map(
      Object.entries(op.success.alternates ?? {}).map(([type, schema]) => [
        type,
        compileValidator(schema, 'body'),
      ]),
    ),
  };
}

function check(validator: Validator | undefined, value: unknown): void {
  if (!validator) return;
  const errors = validator(value);
  if (errors.length > 0) throw problems.validationFailed(errors);
}

/**
 * Headers any response may carry without declaring them: the common ones every operation
 * documents (request id, rate limit) and plain HTTP representation and safety headers. With
 * response validation on (tests), a handler that sets anything else fails, so the contract
 * lists every header a client can see.
 */
const GENERIC_HEADERS = new Set([
  'x-request-id',
  'ratelimit-policy',
  'ratelimit',
  'content-type',
  'content-length',
  'cache-control',
  'content-security-policy',
  'x-content-type-options',
  'vary',
]);

/**
 * What a handler receives. A class, so that `log` is a getter on the prototype: the request's
 * child logger is made only when a handler logs (an accessor in an object literal instead costs
 * V8's slow path on every request: +20 % CPU per request in bench:api).
 */
class HandlerContext implements OperationContext<unknown, unknown, unknown> {
  readonly db: Knex;
  readonly requestId: string;

  constructor(
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
    readonly principal: Principal,
    readonly services: AppServices,
    private readonly state: RequestState,
    readonly koa: Context,
    private readonly reservedId: string | undefined,
  ) {
    this.db = services.db;
    this.requestId = state.requestId;
  }

  // An arrow property, not a method: handlers destructure their context.
  readonly newId = (): string => this.reservedId ?? crypto.randomUUID();

  get keyed(): boolean {
    return this.reservedId !== undefined;
  }

  get log(): Logger {
    return this.state.log;
  }
}

/** Number of segments of a path: `/v1/workspaces` -> 2 (a trailing slash counts as one more). */
function segmentCount(path: string): number {
  let n = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) n++;
  return n;
}

export interface Routes {
  /** Every operation in one @koa/router (its `stack` is the route table; 404 and 405 come from it). */
  router: Router;
  /** Koa middleware that dispatches a request to its operation. */
  middleware: Koa.Middleware;
}

/**
 * Routes the registry's operations with @koa/router. @koa/router tests a request against every
 * route's regular expression in turn, so routes are also kept in small routers bucketed by
 * method and number of path segments (at most 11 routes each instead of all of them): a request
 * is tried in its bucket first and falls through to the full router, which answers 404 and 405
 * (with `Allow`). Both hold the same handler functions. bench:api measured the bucketing at
 * ~4 us less CPU per request.
 */
export function buildRoutes(operations: readonly AnyOperation[], services: AppServices): Routes {
  const router = new Router();
  const buckets = new Map<string, Router>();
  for (const op of operations) {
    const handler = operationHandler(op, services);
    router[op.method](op.operationId, koaPath(op.path), handler);
    const key = `${op.method.toUpperCase()} ${segmentCount(op.path)}`;
    let bucket = buckets.get(key);
    if (!bucket) buckets.set(key, (bucket = new Router()));
    bucket[op.method](op.operationId, koaPath(op.path), handler);
  }
  const fallback = compose([
    router.routes() as Koa.Middleware,
    router.allowedMethods() as Koa.Middleware,
  ]);
  const dispatchers = new Map(
    [...buckets].map(([key, r]) => [key, r.routes() as Koa.Middleware] as const),
  );
  return {
    router,
    middleware: (ctx, next) => {
      const bucket = dispatchers.get(`${ctx.method} ${segmentCount(ctx.path)}`);
      return bucket ? bucket(ctx, () => fallback(ctx, next)) : fallback(ctx, next);
    },
  };
}

/** The Koa handler of one operation. */
function operationHandler(op: AnyOperation, services: AppServices): Koa.Middleware {
  const v = compile(op);
  const documentedHeaders = new Set(
    [
      ...Object.keys(op.success.headers ?? {}),
      ...(op.idempotent ? ['Idempotent-Replayed'] : []),
    ].map((h) => h.toLowerCase()),
  );
  return async (ctx: Context) => {
    const state = ctx.state as RequestState;
    state.operationId = op.operationId;
    const principal = authorize(op, state);

    const params: Record<string, unknown> = { ...ctx.params };
    check(v.params, params);
    if (principal && 'workspace_id' in params && params.workspace_id !== principal.workspaceId) {
      throw problems.notFound(`Workspace ${String(params.workspace_id)}`);
    }

    const query: Record<string, unknown> = { ...ctx.query };
    if (v.query) check(v.query, query);
    else if (Object.keys(query).length > 0) {
      throw problems.validationFailed(
        Object.keys(query).map((k) => ({
          in: 'query',
          path: `/${k}`,
          message: 'is not a known property',
        })),
      );
    }

    let body: unknown = undefined;
    if (op.rawBody) {
      if (!ctx.is(...op.rawBody.contentTypes)) {
        throw problems.unsupportedMediaType(
          ctx.get('Content-Type') || undefined,
          op.rawBody.contentTypes,
        );
      }
      const limit = op.rawBody.limitBytes(services.config);
      const declared = Number(ctx.get('Content-Length'));
      if (Number.isFinite(declared) && declared > limit) throw problems.payloadTooLarge(limit);
    }
    if (op.body) {
      body = await readJsonBody(ctx, services.config.bodyLimitBytes);
      if (body === undefined) {
        throw problems.validationFailed([
          { in: 'body', path: '', message: 'a JSON request body is required' },
        ]);
      }
      check(v.body, body);
    }

    const run = (resourceId?: string) =>
      op.handler(
        new HandlerContext(
          params,
          query,
          body,
          principal as Principal,
          services,
          state,
          ctx,
          resourceId,
        ),
      );
    const idempotencyKey = ctx.get('Idempotency-Key');
    const result =
      op.idempotent && principal && idempotencyKey
        ? await idempotently(
            services,
            op,
            principal,
            idempotencyKey,
            { params, query, body },
            ctx,
            run,
          )
        : await run();
    if (state.replayed) {
      ctx.status = state.replayed;
      ctx.body = result;
      return;
    }

    if (services.config.validateResponses) {
      const undocumented = Object.keys(ctx.response.headers).filter(
        (h) => !GENERIC_HEADERS.has(h) && !documentedHeaders.has(h),
      );
      if (undocumented.length > 0) {
        state.log.error({ operation: op.operationId, undocumented }, 'undocumented header');
        throw new ApiError({
          ...problemsInternal(),
          detail: `${op.operationId} set headers its contract does not declare: ${undocumented.join(', ')}.`,
        });
      }
    }
    const responseValidator = v.alternates.get(ctx.response.type) ?? v.response;
    if (services.config.validateResponses && responseValidator) {
      const errors = responseValidator(result);
      if (errors.length > 0) {
        state.log.error(
          { operation: op.operationId, errors },
          'response does not match its schema',
        );
        throw new ApiError({
          ...problemsInternal(),
          detail: `Response of ${op.operationId} broke its schema.`,
        });
      }
    }
    ctx.status = op.success.status;
    if (op.success.status !== 204) {
      const types = [op.success.contentType ?? []].flat();
      if (types[0] && !ctx.response.get('Content-Type')) ctx.type = types[0];
      ctx.body = result;
    }
  };
}

/**
 * Runs `run` at most once per (workspace, operation, Idempotency-Key). The key is claimed first
 * (its own statement), the work runs holding no connection, and its response is stored on the
 * claim. A repeat with the same request replays the stored response; while the first is still at
 * work a repeat waits up to IDEMPOTENCY_WAIT_MS, then gets 409 idempotency_in_progress; a
 * different request with the same key is 422. A failed request releases its claim.
 */
async function idempotently(
  services: AppServices,
  op: AnyOperation,
  principal: Principal,
  key: string,
  request: unknown,
  ctx: Context,
  run: (resourceId: string) => Promise<unknown>,
): Promise<unknown> {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw problems.validationFailed([
      {
        in: 'header',
        path: '/Idempotency-Key',
        message: 'must be 1..255 visible ASCII characters',
      },
    ]);
  }
  const { db, config } = services;
  const requestSha256 = crypto.createHash('sha256').update(JSON.stringify(request)).digest('hex');
  const scope = { workspaceId: principal.workspaceId, operationId: op.operationId, key };
  const deadline = Date.now() + config.idempotencyWaitMs;
  for (;;) {
    const claim = await claimIdempotencyKey(
      db,
      scope,
      requestSha256,
      config.idempotencyClaimTimeoutSeconds,
      config.idempotencyKeyTtlHours,
    );
    if (claim.kind === 'mismatch') throw problems.idempotencyKeyReused(key);
    if (claim.kind === 'completed') {
      ctx.set('Idempotent-Replayed', 'true');
      (ctx.state as RequestState).replayed = claim.status;
      return claim.response;
    }
    if (claim.kind === 'claimed') {
      if (claim.takenOver) {
        (ctx.state as RequestState).log.warn(
          { operation: op.operationId, resource_id: claim.resourceId },
          'took over an idempotency key whose request did not finish',
        );
      }
      let result: unknown;
      try {
        result = await run(claim.resourceId);
      } catch (err) {
        // A dependency outage (503) keeps the key's resource id for the retry, which takes the
        // claim over at once: it finishes the same resource (an audit recorded before Temporal
        // went away is started by it) instead of creating a second. A database that went away
        // mid-request counts too, raw: its COMMIT may have landed although the answer was lost,
        // and a retry under a new id would then make a second resource. Any other failure frees
        // the key.
        const outage =
          (err instanceof ApiError && err.status === 503) || isDatabaseUnavailable(err);
        settleClaim(services, () =>
          releaseIdempotencyKey(db, scope, claim.claimId, { keepResource: outage }),
        );
        throw err;
      }
      // The answer is stored even if the database blinks now: otherwise the key would stay
      // in_progress and every retry would wait, then get 409, until the claim went stale.
      const stored = completeIdempotencyKey(db, scope, claim.claimId, {
        status: op.success.status,
        response: result,
      });
      await stored.catch(() => {
        settleClaim(services, () =>
          completeIdempotencyKey(db, scope, claim.claimId, {
            status: op.success.status,
            response: result,
          }),
        );
        throw problems.unavailable(
          'database',
          'The request was done but its answer could not be stored; retry with the same Idempotency-Key to get it.',
        );
      });
      return result;
    }
    if (Date.now() >= deadline) throw problems.idempotencyInProgress(key);
    await new Promise((resolve) => setTimeout(resolve, IDEMPOTENCY_POLL_MS));
  }
}

/**
 * Settles a claim (release or completion) now, or, while the database is unreachable, every
 * 250 ms in the background until it answers (at most IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS, when a
 * retry would take the claim over anyway): a retry arriving once the database is back finds the
 * key settled instead of waiting on a claim nobody will finish.
 */
function settleClaim(services: AppServices, settle: () => Promise<void>): void {
  const until = Date.now() + services.config.idempotencyClaimTimeoutSeconds * 1000;
  const attempt = (): void => {
    settle().catch((err: unknown) => {
      if (Date.now() >= until) {
        services.log.warn({ err }, 'could not settle an idempotency key; it goes stale instead');
        return;
      }
      setTimeout(attempt, 250).unref();
    });
  };
  attempt();
}

/** How often a request waiting on another with the same key looks again. */
const IDEMPOTENCY_POLL_MS = 100;

function problemsInternal() {
  const p = problems.internal();
  return { status: p.status, code: p.code, title: p.title, hint: p.hint };
}
