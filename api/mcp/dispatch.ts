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
    return { status: ctx.status, type: ctx.response.type, body: ctx.body };
  };
}
