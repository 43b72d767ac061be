/**
 * Malformed OAuth and session requests, as the hostile probe sent them: each is a 4xx in the
 * protocol's own form (RFC 6749/7591 JSON errors on /oauth/* endpoints, the error page on the
 * authorization endpoint, an HTML page on /session/* and the consent pages), never a 500, and
 * none is logged at error level. Dynamic registration is bounded (redirect URIs, name and URI
 * lengths), each bound tried at its limit and one past it.
 */
import crypto from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { REGISTRATION_BOUNDS } from '../api/oauth/provider';
import { startTestApp, type TestApp } from './helpers/app';

let app: TestApp;

test.before(async () => {
  app = await startTestApp({ trustProxy: true });
});
test.after.always(async () => {
  await app?.close();
});

/** pino's numeric level of each log line written while `run` ran. */
async function logLevelsDuring(run: () => Promise<void>): Promise<number[]> {
  const before = app.logs().length;
  await run();
  return app
    .logs()
    .slice(before)
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { level: number }).level);
}

const ERROR_LEVEL = 50;

async function form(path: string, fields: Record<string, string>) {
  const res = await fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    text: await res.text(),
  };
}

async function register(metadata: Record<string, unknown>, raw?: string) {
  const res = await fetch(`${app.url}/oauth/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body:
      raw ??
      JSON.stringify({
        client_name: 'Hostile client',
        redirect_uris: ['http://127.0.0.1:9/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        ...metadata,
      }),
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', text };
}

/** A JSON OAuth error (RFC 6749 5.2 / RFC 7591 3.2.2): 4xx, `error` a known code. */
function oauthJsonError(
  t: ExecutionContext,
  r: { status: number; type: string; text: string },
  codes: string[],
) {
  t.true(r.status >= 400 && r.status < 500, `${r.status} ${r.text.slice(0, 200)}`);
  t.regex(r.type, /application\/json/);
  const body = JSON.parse(r.text) as { error?: string };
  t.true(codes.includes(body.error ?? ''), `error ${body.error}`);
}

test.serial(
  'a NUL in client_id: the token, revocation, PAR and authorization endpoints answer 4xx',
  async (t) => {
    const levels = await logLevelsDuring(async () => {
      const token = await form('/oauth/token', {
        grant_type: 'authorization_code',
        client_id: 'a\u0000b',
        code: 'x',
        code_verifier: 'x'.repeat(43),
        redirect_uri: 'http://127.0.0.1:9/callback',
      });
      oauthJsonError(t, token, ['invalid_client', 'invalid_request']);
      const refresh = await form('/oauth/token', {
        grant_type: 'refresh_token',
        client_id: 'abc',
        refresh_token: 'r\u0000t',
      });
      oauthJsonError(t, refresh, ['invalid_client', 'invalid_grant', 'invalid_request']);
      const revoke = await form('/oauth/token/revocation', { client_id: 'a\u0000b', token: 'x' });
      oauthJsonError(t, revoke, ['invalid_client', 'invalid_request']);
      const par = await form('/oauth/request', {
        client_id: 'a\u0000b',
        response_type: 'code',
        redirect_uri: 'http://127.0.0.1:9/callback',
      });
      oauthJsonError(t, par, ['invalid_client', 'invalid_request']);
      const auth = await fetch(
        `${app.url}/oauth/auth?client_id=a%00b&response_type=code&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/callback')}`,
        { redirect: 'manual' },
      );
      t.is(auth.status, 400, 'no redirect to an unverified client: the error page');
      t.regex(await auth.text(), /invalid_client|invalid_request/);
    });
    t.false(
      levels.some((l) => l >= ERROR_LEVEL),
      'nothing logged at error level',
    );
  },
);

test.serial(
  'a NUL in another parameter of a real client: refused, not stored, not a 500',
  async (t) => {
    const client = await register({});
    t.is(client.status, 201, client.text);
    const { client_id } = JSON.parse(client.text) as { client_id: string };
    const verifier = 'v'.repeat(43);
    const params = {
      client_id,
      response_type: 'code',
      redirect_uri: 'http://127.0.0.1:9/callback',
      scope: 'repositories:read',
      resource: `${app.url}/mcp`,
      state: 's\u0000t',
      code_challenge: crypto.hash('sha256', verifier, 'base64url'),
      code_challenge_method: 'S256',
    };
    const levels = await logLevelsDuring(async () => {
      const auth = await fetch(`${app.url}/oauth/auth?${new URLSearchParams(params).toString()}`, {
        redirect: 'manual',
      });
      t.true(auth.status < 500, `authorization: ${auth.status}`);
      if (auth.status >= 300 && auth.status < 400) {
        // Back to the client's registered redirect URI with the error (RFC 6749 4.1.2.1).
        const to = new URL(auth.headers.get('location')!, app.url);
        t.is(`${to.origin}${to.pathname}`, 'http://127.0.0.1:9/callback');
        t.is(to.searchParams.get('error'), 'invalid_request');
      } else t.is(auth.status, 400);
      // Pushed, then used: the same refusal.
      const par = await form('/oauth/request', params);
      if (par.status === 201) {
        const { request_uri } = JSON.parse(par.text) as { request_uri: string };
        const used = await fetch(
          `${app.url}/oauth/auth?${new URLSearchParams({ client_id, request_uri }).toString()}`,
          { redirect: 'manual' },
        );
        t.true(used.status < 500, `pushed request: ${used.status}`);
      } else oauthJsonError(t, par, ['invalid_request']);
    });
    t.false(levels.some((l) => l >= ERROR_LEVEL));
  },
);

test.serial(
  'registration: redirect_uris as a string, NUL and lone surrogates refused as metadata errors',
  async (t) => {
    const levels = await logLevelsDuring(async () => {
      oauthJsonError(t, await register({ redirect_uris: 'http://127.0.0.1:9/callback' }), [
        'invalid_redirect_uri',
        'invalid_client_metadata',
      ]);
      oauthJsonError(t, await register({ client_name: 'a\u0000b' }), ['invalid_client_metadata']);
      // A lone surrogate as JSON text (JSON.stringify would escape it the same way).
      const body = JSON.stringify({
        client_name: 'PLACEHOLDER',
        redirect_uris: ['http://127.0.0.1:9/callback'],
        token_endpoint_auth_method: 'none',
      }).replace('PLACEHOLDER', '\\ud800x');
      oauthJsonError(t, await register({}, body), ['invalid_client_metadata']);
      oauthJsonError(t, await register({ redirect_uris: ['http://127.0.0.1:9/a\u0000'] }), [
        'invalid_redirect_uri',
        'invalid_client_metadata',
      ]);
      oauthJsonError(t, await register({ redirect_uris: [] }), [
        'invalid_redirect_uri',
        'invalid_client_metadata',
      ]);
    });
    t.false(levels.some((l) => l >= ERROR_LEVEL));
  },
);

test.serial(
  'registration bounds: each at its limit is accepted, one past it refused',
  async (t) => {
    const b = REGISTRATION_BOUNDS;
    const uris = (n: number) =>
      Array.from({ length: n }, (_, i) => `http://127.0.0.1:9/callback/${i}`);
    const longUri = (n: number) => {
      const head = 'https://client.example/cb/';
      return head + 'x'.repeat(n - head.length);
    };
    t.is(b.redirectUris, 10);
    t.is((await register({ redirect_uris: uris(10) })).status, 201);
    oauthJsonError(t, await register({ redirect_uris: uris(11) }), ['invalid_redirect_uri']);
    t.is((await register({ redirect_uris: uris(2000) })).status, 400, 'the probe sent 2,000');

    t.is((await register({ client_name: 'n'.repeat(b.nameLength) })).status, 201);
    oauthJsonError(t, await register({ client_name: 'n'.repeat(b.nameLength + 1) }), [
      'invalid_client_metadata',
    ]);

    t.is((await register({ redirect_uris: [longUri(b.uriLength)] })).status, 201);
    oauthJsonError(t, await register({ redirect_uris: [longUri(b.uriLength + 1)] }), [
      'invalid_redirect_uri',
    ]);
    t.is((await register({ client_uri: longUri(b.uriLength) })).status, 201);
    oauthJsonError(t, await register({ client_uri: longUri(b.uriLength + 1) }), [
      'invalid_client_metadata',
    ]);
    const contacts = (n: number) => Array.from({ length: n }, (_, i) => `c${i}@example.com`);
    t.is((await register({ contacts: contacts(b.listLength) })).status, 201);
    oauthJsonError(t, await register({ contacts: contacts(b.listLength + 1) }), [
      'invalid_client_metadata',
    ]);
  },
);

test.serial(
  'oversize forms on /session/* and /oauth/interaction/* are 413 pages, not errors',
  async (t) => {
    const big = { csrf: 'x', login: 'a', password: 'p'.repeat(20 * 1024) };
    const levels = await logLevelsDuring(async () => {
      for (const path of [
        '/session/sign-in',
        '/session/sign-out',
        `/session/grants/${crypto.randomUUID()}/revoke`,
        '/oauth/interaction/abcdef',
      ]) {
        const r = await form(path, big);
        t.true(r.status === 413 || r.status === 400, `${path}: ${r.status}`);
        t.regex(r.type, /text\/html/, path);
      }
    });
    t.false(
      levels.some((l) => l >= ERROR_LEVEL),
      'nothing logged at error level',
    );
  },
);

test.serial('a NUL or lone surrogate in a sign-in login is a wrong login, not a 500', async (t) => {
  const page = await fetch(`${app.url}/session/sign-in`);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const levels = await logLevelsDuring(async () => {
    for (const login of ['a\u0000b', 'x\ud800']) {
      const res = await fetch(`${app.url}/session/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({
          csrf,
          login,
          password: 'whatever',
          return_to: '/session',
        }).toString(),
      });
      t.is(res.status, 401, login);
    }
  });
  t.false(levels.some((l) => l >= ERROR_LEVEL));
});
