/**
 * The middleware every request passes through (frontDoor): request id, credential resolution,
 * rate limiting, problem rendering and the access log. Operation-specific checks (scope,
 * tenancy, validation) happen in registry/router.ts.
 */
import crypto from 'node:crypto';
import type { Context, Next } from 'koa';
import { ApiError, problemBody, problems } from './errors';
import { compileResponseValidator } from './registry/validation';
import { ProblemDetails } from './schema-kit';
import type { AppServices } from './services';
import { RateLimiter } from './rate-limit';
import type { Principal } from './registry/operation';
import type { Logger } from '../platform/logger';
import { isDatabaseUnavailable } from '../db/errors';
import { httpDuration, httpRequests } from '../platform/metrics';
import { activeTracing } from '../platform/tracing';
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { SessionPrincipals } from './sessions/principal';

export interface RequestState {
  requestId: string;
  log: Logger;
  principal?: Principal;
  authError?: ApiError;
  replayed?: number;
  /** The operation the request was routed to (set by the router). */
  operationId?: string;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;

/**
 * Where an in-process request (an MCP tool call, api/mcp/dispatch.ts) carries the principal its
 * gateway authenticated. A symbol on the Node request object: nothing that arrives over the
 * network can set it.
 */
export const INJECTED_PRINCIPAL = Symbol('injected principal');

/**
 * Koa's `ctx.state` for our requests. The request's child logger is made on first use: most
 * requests log one line, at the end, and an access log at `warn` logs none.
 */
class RequestStateImpl implements RequestState {
  principal?: Principal;
  authError?: ApiError;
  replayed?: number;
  operationId?: string;
  private child: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly root: Logger,
  ) {}

  get log(): Logger {
    return (this.child ??= this.root.child({ request_id: this.requestId }));
  }
}

/** Accepts the client's X-Request-ID when well-formed, else generates one; echoes it. */
function assignRequestId(ctx: Context, services: AppServices): RequestState {
  const given = ctx.get('X-Request-ID');
  const id = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
  const state = new RequestStateImpl(id, services.log);
  ctx.state = state;
  ctx.set('X-Request-ID', id);
  return state;
}

/**
 * The one global middleware, in order: request id, credentials, rate limit, then the route; every
 * error rendered as application/problem+json, and one access-log line per request. (One
 * middleware rather than four: each Koa middleware level costs a promise and a closure on every
 * request, measured by bench:api.)
 */
export function frontDoor(services: AppServices) {
  const limiter = services.rateLimiter;
  const policy = limiter.policyHeader;
  const checkProblem = services.config.validateResponses
    ? compileResponseValidator(ProblemDetails)
    : undefined;
  const sessions = new SessionPrincipals(services.db, services.oauth.sessions);
  const handle = async (ctx: Context, next: Next) => {
    const state = assignRequestId(ctx, services);
    const started = process.hrtime.bigint();
    try {
      // Credentials: failures are kept and raised only by operations that need a token.
      const injected = (ctx.req as { [INJECTED_PRINCIPAL]?: Principal })[INJECTED_PRINCIPAL];
      const result = injected
        ? ({ ok: true, principal: injected } as const)
        : await services.auth.authenticate(ctx.get('Authorization') || undefined);
      if (result?.ok) state.principal = result.principal;
      else if (result) state.authError = result.error;
      // No Authorization header: a member's session cookie (the console), whose unsafe methods
      // must carry the CSRF header.
      const session = result === null ? await sessions.principalFor(ctx) : null;
      if (session) {
        state.principal = session;
        await sessions.checkCsrf(ctx);
      }
      // No credentials at all: a read of the demo workspace, when the operator allows it, is
      // made as its anonymous reader and counts against the demo's per-IP quota.
      const demo =
        result === null && !session && services.demoRead
          ? await services.demoRead.principalFor(ctx.method, ctx.path)
          : null;
      if (demo) state.principal = demo;

      // The request counts against its token's (or IP's) quota.
      const decision = demo
        ? services.demoRead!.limiter.hit(`ip:${ctx.ip}`)
        : limiter.hit(state.principal ? `token:${state.principal.tokenId}` : `ip:${ctx.ip}`);
      ctx.set('RateLimit-Policy', demo ? services.demoRead!.limiter.policyHeader : policy);
      ctx.set('RateLimit', RateLimiter.header(decision));
      if (!decision.allowed) throw problems.rateLimited(decision.resetSeconds);

      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw problems.routeNotFound(ctx.method, ctx.path);
        if (ctx.status === 405 || ctx.status === 501) {
          throw problems.methodNotAllowed(
            ctx.method,
            ctx.response.get('Allow').split(/,\s*/).filter(Boolean),
          );
        }
      }
    } catch (err) {
      let problem = toApiError(err, state, ctx);
      let body = problemBody(problem, state.requestId);
      // With response validation on (tests), an error body is held to the contract too.
      const broken = checkProblem?.(body) ?? [];
      if (broken.length > 0) {
        state.log.error({ problem: body, errors: broken }, 'problem does not match its schema');
        problem = problems.internal();
        body = problemBody(problem, state.requestId);
      }
      ctx.status = problem.status;
      ctx.set(problem.headers);
      ctx.type = 'application/problem+json';
      ctx.body = body;
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const operation = state.operationId ?? 'unmatched';
    const status = String(ctx.status);
    httpRequests.inc({ operation, method: ctx.method, status });
    httpDuration.observe({ operation, status }, ms / 1000);
    // A client that went away gets no response: its request is logged at debug only.
    // (The socket, not the request: a request stream is destroyed once fully read.)
    const aborted = ctx.req.socket?.destroyed === true;
    const level = aborted ? 'debug' : 'info';
    // Checked on the root logger: reading state.log would make the request's child logger.
    if (!services.log.isLevelEnabled(level)) return;
    state.log[level](
      {
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(ms * 10) / 10,
        token_prefix: state.principal?.prefix,
        workspace_id: state.principal?.workspaceId,
      },
      aborted ? 'request aborted by the client' : 'request',
    );
  };
  const tracing = activeTracing();
  if (!tracing) return handle;
  // Tracing on: one server span per request, a child of the caller's `traceparent` when sent;
  // the workflow start a handler makes is its child (Temporal's client interceptor).
  return (ctx: Context, next: Next) =>
    tracing.tracer.startActiveSpan(
      ctx.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method } },
      propagation.extract(context.active(), ctx.req.headers),
      async (span) => {
        try {
          await handle(ctx, next);
        } finally {
          const state = ctx.state as RequestState;
          if (state.operationId) span.updateName(`${ctx.method} ${state.operationId}`);
          span.setAttributes({
            'http.response.status_code': ctx.status,
            'url.path': ctx.path,
            'archaudit.request_id': state.requestId,
            'archaudit.operation_id': state.operationId ?? 'unmatched',
          });
          if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
      },
    );
}

function toApiError(err: unknown, state: RequestState, ctx: Context): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { status?: number; expose?: boolean; type?: string; message?: string };
  // Errors raised by raw-body and similar libraries carry an HTTP status.
  if (e?.type === 'entity.too.large')
    return problems.payloadTooLarge((err as { limit: number }).limit);
  // The client hung up (mid-body, or before we read it): nobody reads the answer.
  if (e?.type === 'request.aborted' || e?.type === 'stream.not.readable' || ctx.req.aborted) {
    state.log.debug({ err: e?.message }, 'client closed the request');
    return clientClosed();
  }
  if (e?.status === 415) return problems.unsupportedMediaType(undefined, ['application/json']);
  if (e?.status && e.status >= 400 && e.status < 500 && e.expose) {
    return new ApiError({
      status: e.status,
      code: 'bad_request',
      title: 'Bad request',
      detail: e.message ?? 'The request could not be read.',
      hint: 'Check the request against the contract.',
    });
  }
  // The connection failed under the request (client abort, a body the HTTP parser refused): a
  // client fault; Node's clientError handling (api/server.ts) answers where it still can.
  const code = (err as { code?: unknown })?.code;
  if (
    e?.type === 'stream.not.readable' ||
    (typeof code === 'string' && (code.startsWith('HPE_') || code === 'ECONNRESET'))
  ) {
    state.log.debug({ code, type: e?.type }, 'request body unreadable');
    return problems.badRequest('The request body could not be read.');
  }
  if (isDatabaseUnavailable(err)) {
    state.log.warn({ err: e?.message }, 'database unavailable');
    return problems.unavailable('database', 'The database does not answer.');
  }
  state.log.error({ err }, 'unhandled error');
  return problems.internal();
}

/** What a request whose client left is logged with (nginx's 499); never sent. */
function clientClosed(): ApiError {
  return new ApiError({
    status: 499,
    code: 'client_closed_request',
    title: 'Client closed request',
    detail: 'The client closed the connection before the request was read.',
    hint: 'Nothing to do: the client is gone.',
  });
}
