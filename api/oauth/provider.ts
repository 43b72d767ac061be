/**
 * The OAuth 2.1 authorization server of the MCP gateway: oidc-provider (certified, Koa-native),
 * configured for public clients registered dynamically (RFC 7591), authorization code with PKCE
 * S256 only, refresh tokens rotated on every use, and RFC 8707 resource indicators binding each
 * access token to the MCP resource. Its artifacts live in Postgres (KnexAdapter); its signing
 * key and cookie keys are generated on first start and kept in the database.
 */
import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Knex } from 'knex';
import {
  consumeModel,
  destroyByGrant,
  destroyModel,
  ensureKey,
  findModel,
  findModelByUid,
  findModelByUserCode,
  markGrantRevoked,
  upsertModel,
} from '../../db/oauth';
import { memberById } from '../../db/workspaces';
import { SCOPES } from '../../domain/contract/values';
import { UNSTORABLE_TEXT } from '../../domain/text';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { isAllowedRedirectUri } from '../../domain/tokens/redirects';
import { renderOAuthError } from './render';

type Payload = Record<string, unknown>;

/** The parts of oidc-provider's objects this code uses. */
export interface OidcGrant {
  jti: string;
  accountId: string;
  clientId: string;
  addResourceScope(resource: string, scope: string): void;
  rejectResourceScope(resource: string, scope: string): void;
  addOIDCScope(scope: string): void;
  rejectOIDCScope(scope: string): void;
  save(ttl?: number): Promise<string>;
  destroy(): Promise<void>;
}
export interface OidcAccessToken {
  jti: string;
  accountId: string;
  clientId: string;
  grantId: string;
  aud?: string | string[];
  scope?: string;
  exp: number;
  isExpired: boolean;
  save(): Promise<string>;
}
export interface OidcClient {
  clientId: string;
  clientName?: string;
  redirectUris: string[];
}
export interface InteractionDetails {
  uid: string;
  prompt: { name: string };
  params: Record<string, string | undefined>;
  returnTo: string;
}
export interface OidcProvider {
  issuer: string;
  proxy: boolean;
  callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  on(event: string, listener: (...args: unknown[]) => void): void;
  Grant: {
    new (init: { accountId: string; clientId: string }): OidcGrant;
    find(id: string): Promise<OidcGrant | undefined>;
  };
  AccessToken: {
    new (init: Record<string, unknown>): OidcAccessToken;
    find(value: string): Promise<OidcAccessToken | undefined>;
  };
  Client: { find(id: string): Promise<OidcClient | undefined> };
}

/** Whether a value (any depth) holds a string PostgreSQL cannot store (NUL, lone surrogate). */
function unstorable(value: unknown): boolean {
  if (typeof value === 'string') return UNSTORABLE_TEXT.test(value);
  if (Array.isArray(value)) return value.some(unstorable);
  if (value && typeof value === 'object')
    return Object.entries(value).some(([k, v]) => UNSTORABLE_TEXT.test(k) || unstorable(v));
  return false;
}

/**
 * The oidc-provider adapter over db/oauth.ts: one class per model name. An id PostgreSQL cannot
 * store (a NUL in `client_id`, say) names nothing: found as nothing, so the provider answers its
 * own 4xx (invalid_client, invalid_grant...) instead of a database error; a payload it cannot
 * store is the client's invalid request.
 */
function knexAdapter(db: Knex, refuse: (message: string) => Error) {
  return class KnexAdapter {
    constructor(private readonly model: string) {}
    async upsert(id: string, payload: Payload, expiresIn?: number) {
      if (unstorable(id) || unstorable(payload))
        throw refuse('a parameter holds a NUL character or an unpaired UTF-16 surrogate');
      await upsertModel(db, this.model, id, payload, expiresIn);
    }
    async find(id: string) {
      return unstorable(id) ? undefined : findModel(db, this.model, id);
    }
    async findByUid(uid: string) {
      return unstorable(uid) ? undefined : findModelByUid(db, this.model, uid);
    }
    async findByUserCode(userCode: string) {
      return unstorable(userCode) ? undefined : findModelByUserCode(db, this.model, userCode);
    }
    async consume(id: string) {
      if (!unstorable(id)) await consumeModel(db, this.model, id);
    }
    async destroy(id: string) {
      if (!unstorable(id)) await destroyModel(db, this.model, id);
    }
    async revokeByGrantId(grantId: string) {
      if (!unstorable(grantId)) await destroyByGrant(db, grantId);
    }
  };
}

/** Bounds of dynamic client registration (RFC 7591): a registration is a row anyone can add. */
export const REGISTRATION_BOUNDS = {
  redirectUris: 10,
  uriLength: 2000,
  nameLength: 200,
  /** Any other string of the metadata (contacts, software_id, software_version...). */
  textLength: 2000,
  /** Entries of any other list (contacts, grant_types...). */
  listLength: 10,
} as const;

/** The first registration rule `metadata` breaks, or null. */
export function registrationProblem(metadata: Payload): string | null {
  const b = REGISTRATION_BOUNDS;
  for (const [key, value] of Object.entries(metadata)) {
    if (unstorable(value)) return `${key} holds a NUL character or an unpaired UTF-16 surrogate`;
    const limit =
      key === 'client_name' ? b.nameLength : key.endsWith('_uri') ? b.uriLength : b.textLength;
    if (typeof value === 'string' && value.length > limit)
      return `${key} is longer than ${limit} characters`;
    if (Array.isArray(value) && key !== 'redirect_uris' && value.length > b.listLength)
      return `${key} lists more than ${b.listLength} entries`;
  }
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.some((u) => typeof u !== 'string'))
    return 'redirect_uris must be an array of strings';
  if (uris.length === 0) return 'redirect_uris must name at least one URI';
  if (uris.length > b.redirectUris) return `redirect_uris lists more than ${b.redirectUris} URIs`;
  const long = (uris as string[]).find((u) => u.length > b.uriLength);
  if (long !== undefined) return `a redirect URI is longer than ${b.uriLength} characters`;
  return null;
}

export interface ProviderUrls {
  /** `<base>/oauth` */
  issuer: string;
  /** `<base>/mcp`: the one resource indicator access tokens may name. */
  resource: string;
}

/** The signing key (ID tokens, should a client ask for one), made once per installation. */
function signingKey(db: Knex) {
  return ensureKey(db, 'signing_jwk', () => {
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return {
      ...privateKey.export({ format: 'jwk' }),
      kid: crypto.randomUUID(),
      alg: 'ES256',
      use: 'sig',
    };
  });
}

export async function createProvider(deps: {
  db: Knex;
  config: Config;
  log: Logger;
  urls: ProviderUrls;
  cookieKeys: string[];
}): Promise<{ provider: OidcProvider }> {
  const { db, config, log, urls } = deps;
  const oidc = await import('oidc-provider');
  const { Provider, errors, interactionPolicy } = oidc;
  const signing = await signingKey(db);

  // Every authorization is confirmed on the consent page (the member picks the workspace and
  // scopes each time), even when the client asks for no scope at all.
  const policy = interactionPolicy.base();
  policy
    .get('consent')
    .checks.add(
      new interactionPolicy.Check(
        'consent_every_time',
        'each authorization is confirmed by the member',
        (ctx: { oidc: { result?: { consent?: unknown } } }) =>
          ctx.oidc.result?.consent
            ? interactionPolicy.Check.NO_NEED_TO_PROMPT
            : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );

  const refreshTtl = config.oauthRefreshTokenTtlDays * 86_400;
  const provider: OidcProvider = new Provider(urls.issuer, {
    adapter: knexAdapter(db, (message) => new errors.InvalidRequest(message)),
    clients: [],
    async findAccount(_ctx: unknown, id: string) {
      const member = await memberById(db, id);
      if (!member) return undefined;
      return { accountId: id, claims: async () => ({ sub: id }) };
    },
    cookies: {
      keys: deps.cookieKeys,
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    jwks: { keys: [signing] },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      revocation: {
        enabled: true,
        // A public client may revoke only its own tokens.
        allowedPolicy: async (
          _ctx: unknown,
          client: { clientId: string },
          token: { clientId: string },
        ) => token.clientId === client.clientId,
      },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => urls.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== urls.resource) {
            throw new errors.InvalidTarget(`the only resource served here is ${urls.resource}`);
          }
          return {
            scope: SCOPES.join(' '),
            audience: urls.resource,
            accessTokenTTL: config.oauthAccessTokenTtlSeconds,
            accessTokenFormat: 'opaque',
          };
        },
      },
    },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    // Registration rules beyond oidc-provider's own, checked once per registration (the
    // validator runs for each listed property; `software_id` is RFC 7591 metadata we accept).
    extraClientMetadata: {
      properties: ['software_id'],
      validator(_ctx: unknown, key: string, _value: unknown, metadata: Payload) {
        if (key !== 'software_id') return;
        if (metadata.token_endpoint_auth_method !== 'none') {
          throw new errors.InvalidClientMetadata(
            'only public clients register here: token_endpoint_auth_method must be none',
          );
        }
        const problem = registrationProblem(metadata);
        if (problem)
          throw problem.includes('redirect')
            ? new errors.InvalidRedirectUri(problem)
            : new errors.InvalidClientMetadata(problem);
        const uris = metadata.redirect_uris as string[];
        const bad = uris.filter((u) => !isAllowedRedirectUri(u));
        if (bad.length > 0) {
          throw new errors.InvalidRedirectUri(
            `redirect_uris must be https, or http on a loopback address: ${bad.join(', ')}`,
          );
        }
      },
    },
    pkce: { required: () => true },
    responseTypes: ['code'],
    // Clients may name our scopes in their registration metadata; grants record them both as
    // the MCP resource's scopes (what access tokens carry) and as the server's (consent).
    scopes: ['openid', 'offline_access', ...SCOPES],
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: config.oauthAccessTokenTtlSeconds,
      AuthorizationCode: 60,
      Grant: refreshTtl,
      RefreshToken: refreshTtl,
      IdToken: 3600,
      Interaction: 600,
      Session: config.sessionTtlHours * 3600,
    },
    interactions: {
      policy,
      url: (_ctx: unknown, interaction: { uid: string }) => `/oauth/interaction/${interaction.uid}`,
    },
    loadExistingGrant: async (ctx: {
      oidc: { result?: { consent?: { grantId?: string } }; provider: OidcProvider };
    }) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    renderError: async (ctx: { type: string; body: string }, out: Record<string, string>) => {
      ctx.type = 'html';
      ctx.body = renderOAuthError(out);
    },
  });
  provider.proxy = config.trustProxy;
  // A grant ended by the provider (refresh token revoked, code replayed) ends in our list too.
  provider.on('grant.revoked', (_ctx: unknown, grantId: unknown) => {
    markGrantRevoked(db, String(grantId)).catch((err: unknown) =>
      log.warn({ err }, 'could not record a revoked grant'),
    );
  });
  provider.on('server_error', (_ctx: unknown, err: unknown) =>
    log.error({ err }, 'authorization server error'),
  );
  return { provider };
}
