/**
 * Routes of the MCP gateway that are not operations of the registry (they speak OAuth, HTML
 * forms and JSON-RPC, not the REST contract): /mcp, /oauth/*, /session/*, /.well-known/*.
 * Everything else goes on to the REST API.
 */
import crypto from 'node:crypto';
import type Koa from 'koa';
import type { Context } from 'koa';
import type { AppServices } from './services';
import type { McpGateway } from './mcp/server';
import { messagePage } from './sessions/render';

const PROTECTED_RESOURCE = new Set([
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
]);
/** RFC 8414 (path-inserted and plain) and the OIDC discovery location MCP clients also try. */
const AUTHORIZATION_SERVER = new Set([
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-authorization-server/oauth',
  '/.well-known/openid-configuration/oauth',
]);
const INTERACTION = /^\/oauth\/interaction\/([A-Za-z0-9_-]{1,64})$/;
const REVOKE_GRANT = /^\/session\/grants\/([A-Za-z0-9_-]{1,64})\/revoke$/;

export function gatewayMiddleware(services: AppServices, mcp: McpGateway): Koa.Middleware {
  const oauth = services.oauth;
  const route = async (ctx: Context, next: Koa.Next): Promise<void> => {
    const p = ctx.path;
    if (p === '/mcp') return mcp.handle(ctx);
    if (PROTECTED_RESOURCE.has(p) && ctx.method === 'GET') {
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.body = await oauth.resourceMetadata(ctx);
      return;
    }
    if (AUTHORIZATION_SERVER.has(p))
      return oauth.runProvider(ctx, '/.well-known/openid-configuration');
    if (p === '/session' && ctx.method === 'GET') return oauth.sessionHome(ctx);
    if (p === '/session/sign-in' && ctx.method === 'GET') return oauth.signInForm(ctx);
    if (p === '/session/sign-in' && ctx.method === 'POST') return oauth.signIn(ctx);
    if (p === '/session/sign-out' && ctx.method === 'POST') return oauth.signOut(ctx);
    const revoke = REVOKE_GRANT.exec(p);
    if (revoke && ctx.method === 'POST') return oauth.revokeFromSession(ctx, revoke[1]!);
    if (INTERACTION.test(p) && ctx.method === 'GET') return oauth.consent(ctx);
    if (INTERACTION.test(p) && ctx.method === 'POST') return oauth.decide(ctx);
    if (p.startsWith('/oauth/')) return oauth.runProvider(ctx, ctx.url.slice('/oauth'.length));
    return next();
  };
  return async (ctx, next) => {
    // The REST API first: one check on its hot path.
    if (ctx.path.startsWith('/v1/')) return next();
    const requestId = crypto.randomUUID();
    ctx.set('X-Request-ID', requestId);
    try {
      await route(ctx, next);
    } catch (err) {
      // A client's fault (a form over its size limit, a body that is not one: raw-body's
      // http-errors) is its 4xx, logged as what it is, not as a server error.
      const status = clientErrorStatus(err);
      if (status) {
        services.log.info(
          { path: ctx.path, request_id: requestId, status, reason: (err as Error).message },
          'gateway request refused',
        );
        // `respond` is undefined unless a handler gave the response away (set it to false).
        if (ctx.respond === false || ctx.res.headersSent) return;
        ctx.status = status;
        ctx.type = 'html';
        ctx.body = messagePage(
          status === 413 ? 'Request too large' : 'Bad request',
          status === 413
            ? 'The form is larger than this page accepts.'
            : 'The request could not be read.',
        );
        return;
      }
      services.log.error({ err, path: ctx.path, request_id: requestId }, 'gateway error');
      if (ctx.respond === false || ctx.res.headersSent) return;
      ctx.status = 500;
      ctx.type = 'html';
      ctx.body = messagePage('Something went wrong', `The server failed (request ${requestId}).`);
    }
  };
}

/** The 4xx of an error that exposes one (http-errors, as raw-body throws), else undefined. */
function clientErrorStatus(err: unknown): number | undefined {
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown };
  const status = typeof e?.status === 'number' ? e.status : e?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 && e.expose === true
    ? status
    : undefined;
}
