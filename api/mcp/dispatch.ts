/**
 * Runs an operation of the registry in process, as the REST API would run it: the request goes
 * through the same front door (request id, rate limit per token, problem rendering, access log)
 * and the same route (scope, tenancy, validation, handler, audit events), with the principal the
 * MCP gateway authenticated already attached (INJECTED_PRINCIPAL). Nothing is written to a socket:
 * the answer is read from the Koa context.
 */
import http from 'node:http';
import net from 'node:net';
import type Koa from 'koa';
import { Readable } from 'node:stream';
import { problemBody, problems } from '../errors';
import { INJECTED_PRINCIPAL } from '../middleware';
import type { Principal } from '../registry/operation';

export interface DispatchRequest {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  requestId?: string;
}

export interface DispatchResult {
  status: number;
  /** The media type without parameters (application/json, application/problem+json, text/...). */
  type: string;
  body: unknown;
}

/** Largest file body (a downloaded export, say) read into a tool result. */
export const MAX_DISPATCH_BODY_BYTES = 16 * 1024 * 1024;

/**
 * A streamed body (a blob served from disk) read into a Buffer, since nothing reads the socket
 * here; undefined past MAX_DISPATCH_BODY_BYTES (the stream is dropped).
 */
async function settled(body: Readable): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
      size += b.length;
      if (size > MAX_DISPATCH_BODY_BYTES) return undefined;
      chunks.push(b);
    }
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks);
}

export type Dispatch = (principal: Principal, request: DispatchRequest) => Promise<DispatchResult>;

export function inProcessDispatcher(app: Koa, handle: Koa.Middleware): Dispatch {
  return async (principal, request) => {
    const req = new http.IncomingMessage(new net.Socket());
    const qs = new URLSearchParams(request.query ?? {}).toString();
    req.method = request.method.toUpperCase();
    req.url = qs ? `${request.path}?${qs}` : request.path;
    const payload =
      request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body), 'utf8');
    req.headers = {
      host: 'mcp.internal',
      ...(request.requestId ? { 'x-request-id': request.requestId } : {}),
      ...(payload
        ? { 'content-type': 'application/json', 'content-length': String(payload.length) }
        : {}),
    };
    if (payload) req.push(payload);
    req.push(null);
    (req as { [INJECTED_PRINCIPAL]?: Principal })[INJECTED_PRINCIPAL] = principal;
    const res = new http.ServerResponse(req);
    const ctx = app.createContext(req, res);
    await handle(ctx, async () => undefined);
    if (!(ctx.body instanceof Readable))
      return { status: ctx.status, type: ctx.response.type, body: ctx.body };
    const bytes = await settled(ctx.body);
    if (bytes) return { status: ctx.status, type: ctx.response.type, body: bytes };
    // Too big to hand a model whole: the problem REST answers for a body over its limit.
    const problem = problems.payloadTooLarge(MAX_DISPATCH_BODY_BYTES);
    return {
      status: problem.status,
      type: 'application/problem+json',
      body: {
        ...problemBody(problem, ctx.response.get('X-Request-ID') || request.requestId || ''),
        detail: `The file is over ${MAX_DISPATCH_BODY_BYTES} bytes, more than a tool result carries.`,
        hint: `Download it over REST: GET ${request.path}.`,
      },
    };
  };
}
