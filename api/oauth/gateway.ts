/**
 * The MCP gateway's web side, in the API process: the authorization server under /oauth (its
 * interaction pages — sign-in and consent — are ours), the discovery documents under
 * /.well-known, the customer session under /session, and the MCP endpoint /mcp. The provider is
 * made on the first request that needs it: its issuer is PUBLIC_BASE_URL, else the address the
 * server listens on (read from the socket, never from a Host header).
 */
import crypto from 'node:crypto';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import {
  ensureKey,
  findGrant,
  insertGrant,
  liveGrantsOf,
  sweepExpiredModels,
} from '../../db/oauth';
import { revokeGrant } from './revoke';
import { membershipsOf } from '../../db/sessions';
import { SCOPES, type ScopeName } from '../../domain/contract/values';
import { roleScopes } from '../../domain/tokens/roles';
import { MemberSessions, safeReturnTo } from '../sessions/manager';
import { messagePage, sessionPage, signInPage } from '../sessions/render';
import { consentPage } from './render';
import { createProvider, type OidcProvider, type ProviderUrls } from './provider';

export interface ReadyProvider {
  provider: OidcProvider;
  urls: ProviderUrls;
}

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

export class OAuthGateway {
  readonly sessions: MemberSessions;
  private ready: Promise<ReadyProvider> | undefined;
  private cookieKeys: Promise<string[]> | undefined;

  constructor(
    private readonly db: Knex,
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    this.sessions = new MemberSessions(db, config, async () => (await this.keys())[0]!);
  }

  private keys(): Promise<string[]> {
    this.cookieKeys ??= (async () =>
      this.config.oauthCookieKeys.length > 0
        ? this.config.oauthCookieKeys
        : ensureKey(this.db, 'cookie_keys', () => [
            crypto.randomBytes(32).toString('base64url'),
          ]))();
    return this.cookieKeys;
  }

  /** The public base URL: PUBLIC_BASE_URL, else this connection's local address. */
  baseUrl(ctx: Context): string {
    if (this.config.publicBaseUrl) return this.config.publicBaseUrl.replace(/\/+$/, '');
    const socket = ctx.req.socket;
    const address = socket.localAddress ?? '127.0.0.1';
    const host = address.includes(':') ? `[${address}]` : address;
    return `${ctx.protocol}://${host}:${socket.localPort}`;
  }

  /** The provider (made once; the first request's base URL is the issuer's). */
  provider(ctx: Context): Promise<ReadyProvider> {
    this.ready ??= (async () => {
      const base = this.baseUrl(ctx);
      const urls = { issuer: `${base}/oauth`, resource: `${base}/mcp` };
      const { provider } = await createProvider({
        db: this.db,
        config: this.config,
        log: this.log,
        urls,
        cookieKeys: await this.keys(),
      });
      // Expired codes, tokens and interactions are never read; drop them now and then.
      const sweep = () =>
        sweepExpiredModels(this.db).catch((err: unknown) =>
          this.log.warn({ err }, 'could not sweep expired OAuth artifacts'),
        );
      void sweep();
      setInterval(sweep, 3_600_000).unref();
      return { provider, urls };
    })().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /** Runs the provider on this request, its path relative to /oauth (Express-style mount). */
  async runProvider(ctx: Context, path: string): Promise<void> {
    const { provider } = await this.provider(ctx);
    const req = ctx.req as typeof ctx.req & { originalUrl?: string };
    // Express-style mount: oidc-provider finds its mount path by comparing the two.
    req.originalUrl = `/oauth${path}`;
    req.url = path;
    ctx.respond = false;
    await provider.callback()(req, ctx.res);
  }

  /** The RFC 9728 protected resource metadata of /mcp. */
  async resourceMetadata(ctx: Context): Promise<Record<string, unknown>> {
    const { urls } = await this.provider(ctx);
    return {
      resource: urls.resource,
      authorization_servers: [urls.issuer],
      scopes_supported: [...SCOPES],
      bearer_methods_supported: ['header'],
      resource_name: 'archaudit MCP gateway',
      resource_documentation: `${this.baseUrl(ctx)}/v1/openapi.json`,
    };
  }

  resourceMetadataUrl(ctx: Context): string {
    return `${this.baseUrl(ctx)}/.well-known/oauth-protected-resource/mcp`;
  }

  private html(ctx: Context, status: number, body: string): void {
    ctx.set(SECURITY_HEADERS);
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = body;
  }

  // ---- /session ----

  async signInForm(ctx: Context): Promise<void> {
    const returnTo = safeReturnTo(ctx.query.return_to as string | undefined);
    if (await this.sessions.current(ctx)) return ctx.redirect(returnTo);
    this.html(ctx, 200, signInPage({ csrf: await this.sessions.csrfToken(ctx), returnTo }));
  }

  async signIn(ctx: Context): Promise<void> {
    const form = await this.sessions.readForm(ctx);
    const returnTo = safeReturnTo(form.get('return_to'));
    const login = (form.get('login') ?? '').trim();
    const again = async (status: number, error: string) =>
      this.html(
        ctx,
        status,
        signInPage({ csrf: await this.sessions.csrfToken(ctx), returnTo, login, error }),
      );
    if (!(await this.sessions.csrfValid(ctx, form.get('csrf')))) {
      return again(403, 'The form expired or did not come from this site. Please sign in again.');
    }
    const result = await this.sessions.signIn(ctx, login, form.get('password') ?? '');
    if (!result.ok && result.reason === 'rate_limited') {
      ctx.set('Retry-After', String(result.retryAfterSeconds ?? 60));
      return again(
        429,
        `Too many sign-in attempts for this login or from this address. Try again in ${Math.ceil((result.retryAfterSeconds ?? 60) / 60)} minute(s).`,
      );
    }
    if (!result.ok) return again(401, 'Wrong login or password.');
    this.log.info({ login, session_id: result.session.id }, 'member signed in');
    ctx.status = 303;
    ctx.redirect(returnTo);
  }

  async sessionHome(ctx: Context): Promise<void> {
    const session = await this.sessions.current(ctx);
    if (!session) return ctx.redirect('/session/sign-in');
    const memberships = await membershipsOf(this.db, session.login);
    const grants = await liveGrantsOf(
      this.db,
      memberships.map((m) => m.id),
    );
    this.html(
      ctx,
      200,
      sessionPage({
        login: session.login,
        expiresAt: session.expires_at,
        csrf: await this.sessions.csrfToken(ctx),
        grants: grants.map((g) => ({
          id: g.id,
          clientName: g.client_name ?? g.client_id,
          workspaceName: g.workspace_name,
          scopes: g.scopes,
          createdAt: g.created_at,
        })),
      }),
    );
  }

  /** POST /session/grants/:id/revoke: a member ends one of their grants from the browser. */
  async revokeFromSession(ctx: Context, grantId: string): Promise<void> {
    const form = await this.checkedForm(ctx, 'Not revoked', 'reload the page and try again.');
    if (!form) return;
    const session = await this.sessions.current(ctx);
    if (!session) return this.toSignIn(ctx);
    const memberships = await membershipsOf(this.db, session.login);
    const grant = await findGrant(this.db, grantId);
    const member = memberships.find((m) => m.id === grant?.member_id);
    if (!grant || !member) {
      return this.html(ctx, 404, messagePage('Not found', 'You have no such grant.'));
    }
    await revokeGrant(this.db, grant, {
      actorId: member.id,
      actorLogin: member.login,
      tokenId: null,
      requestId: null,
      via: 'session',
    });
    ctx.status = 303;
    ctx.redirect('/session');
  }

  async signOut(ctx: Context): Promise<void> {
    const form = await this.checkedForm(ctx, 'Not signed out', 'reload the page and try again.');
    if (!form) return;
    await this.sessions.signOut(ctx);
    ctx.status = 303;
    ctx.redirect('/session/sign-in');
  }

  /** A posted form whose CSRF token holds; otherwise a 403 page and undefined. */
  private async checkedForm(ctx: Context, title: string, next: string) {
    const form = await this.sessions.readForm(ctx);
    if (await this.sessions.csrfValid(ctx, form.get('csrf'))) return form;
    this.html(
      ctx,
      403,
      messagePage(title, `The form expired or did not come from this site; ${next}`),
    );
    return undefined;
  }

  private toSignIn(ctx: Context): void {
    ctx.status = 303;
    ctx.redirect(`/session/sign-in?return_to=${encodeURIComponent(ctx.path)}`);
  }

  // ---- /oauth/interaction/:uid (consent) ----

  private async interaction(ctx: Context) {
    const { provider, urls } = await this.provider(ctx);
    try {
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      return { provider, urls, details };
    } catch {
      this.html(
        ctx,
        400,
        messagePage(
          'Authorization expired',
          'This authorization request is unknown or has expired. Start again from the application.',
        ),
      );
      return undefined;
    }
  }

  async consent(ctx: Context, error?: { status: number; message: string }): Promise<void> {
    const found = await this.interaction(ctx);
    if (!found) return;
    const session = await this.sessions.current(ctx);
    if (!session) return this.toSignIn(ctx);
    const { provider, details, urls } = found;
    const client = await provider.Client.find(details.params.client_id ?? '');
    if (!client)
      return this.html(ctx, 400, messagePage('Unknown client', 'The client is not registered.'));
    const memberships = await membershipsOf(this.db, session.login);
    const redirect = details.params.redirect_uri ?? client.redirectUris[0] ?? '';
    this.html(
      ctx,
      error?.status ?? 200,
      consentPage({
        uid: details.uid,
        csrf: await this.sessions.csrfToken(ctx),
        login: session.login,
        clientName: client.clientName ?? client.clientId,
        clientId: client.clientId,
        redirectHost: hostOf(redirect),
        resource: urls.resource,
        workspaces: memberships.map((m) => ({
          memberId: m.id,
          name: m.workspace.name,
          slug: m.workspace.slug,
          role: m.role,
          allowed: roleScopes(m.role),
        })),
        requested: requestedScopes(details.params.scope),
        error: error?.message,
      }),
    );
  }

  async decide(ctx: Context): Promise<void> {
    const form = await this.checkedForm(ctx, 'Not authorized', 'start again from the application.');
    if (!form) return;
    const session = await this.sessions.current(ctx);
    if (!session) return this.toSignIn(ctx);
    const found = await this.interaction(ctx);
    if (!found) return;
    const { provider, details, urls } = found;
    ctx.respond = false;
    if (form.get('decision') !== 'allow') {
      return provider.interactionFinished(
        ctx.req,
        ctx.res,
        { error: 'access_denied', error_description: 'The member declined the authorization.' },
        { mergeWithLastSubmission: false },
      );
    }
    ctx.respond = true;
    const refuse = (message: string) => this.consent(ctx, { status: 400, message });
    const membership = (await membershipsOf(this.db, session.login)).find(
      (m) => m.id === form.get('member_id'),
    );
    if (!membership) return refuse('Pick one of your workspaces.');
    const allowed = new Set(roleScopes(membership.role));
    const requested = new Set(requestedScopes(details.params.scope));
    const chosen = [...new Set(form.getAll('scope'))];
    const beyond = chosen.filter(
      (s) => !requested.has(s as ScopeName) || !allowed.has(s as ScopeName),
    );
    if (beyond.length > 0)
      return refuse(
        `Not grantable in ${membership.workspace.name} with your role ${membership.role}: ${beyond.join(', ')}.`,
      );
    if (chosen.length === 0) return refuse('Pick at least one scope.');
    const resource = details.params.resource ?? urls.resource;
    if (resource !== urls.resource) return refuse(`Unknown resource ${resource}.`);
    const clientId = details.params.client_id!;
    const client = await provider.Client.find(clientId);
    if (!client) return refuse('The client is no longer registered.');

    const grant = new provider.Grant({ accountId: membership.id, clientId });
    grant.addResourceScope(resource, chosen.join(' '));
    grant.addOIDCScope(chosen.join(' '));
    // Everything else asked for is marked refused, so the provider does not ask again.
    const rejected = (details.params.scope ?? '')
      .split(' ')
      .filter((s) => s && !chosen.includes(s));
    if (rejected.length > 0) {
      grant.rejectResourceScope(resource, rejected.join(' '));
      grant.rejectOIDCScope(rejected.join(' '));
    }
    const grantId = await grant.save();
    const redirect = details.params.redirect_uri ?? client.redirectUris[0] ?? '';
    await insertGrant(this.db, {
      id: grantId,
      workspace_id: membership.workspace_id,
      member_id: membership.id,
      client_id: clientId,
      client_name: client.clientName ?? null,
      redirect_host: hostOf(redirect),
      resource,
      scopes: chosen,
      expires_at: new Date(Date.now() + this.config.oauthRefreshTokenTtlDays * 86_400_000),
    });
    this.log.info(
      {
        grant_id: grantId,
        client_id: clientId,
        workspace_id: membership.workspace_id,
        scopes: chosen,
      },
      'member granted an OAuth client',
    );
    ctx.respond = false;
    await provider.interactionFinished(
      ctx.req,
      ctx.res,
      { login: { accountId: membership.id }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }
}

function hostOf(uri: string): string {
  return URL.canParse(uri) ? new URL(uri).host : uri;
}

/** The known scopes among a space-separated `scope` parameter. */
function requestedScopes(scope: string | undefined): ScopeName[] {
  const known = new Set<string>(SCOPES);
  return [...new Set((scope ?? '').split(' ').filter((s) => known.has(s)))] as ScopeName[];
}
