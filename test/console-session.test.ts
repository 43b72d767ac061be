/**
 * The member session on /v1 (the console's credential), over real HTTP: the session cookie
 * authenticates /v1 with the role's scopes in every workspace of the member; every unsafe method
 * needs the CSRF header (refused with a stable code, nothing written); tokens are unchanged.
 */
import crypto from 'node:crypto';
import test from 'ava';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, type Tenant } from './helpers/factories';
import { call, isProblem } from './helpers/http';
import { Browser, hiddenField } from './helpers/oauth-flow';
import { setPasswordHash } from '../db/sessions';
import { addMember } from '../db/workspaces';
import { hashPassword } from '../domain/sessions/password';

let app: TestApp;
let owned: Tenant;
let joined: Tenant;
let stranger: Tenant;
const login = `dana-${crypto.randomBytes(3).toString('hex')}`;
const password = 'console session password';

test.before(async () => {
  app = await startTestApp();
  const db = app.services.db;
  owned = await createTenant(db, { login });
  // Dana is a plain member (not owner) of a second workspace, and no member of a third.
  joined = await createTenant(db, { login: `owner-${login}` });
  await addMember(db, { workspaceId: joined.workspaceId, login, role: 'member' });
  stranger = await createTenant(db, { login: `other-${login}` });
  await setPasswordHash(db, login, await hashPassword(password));
});
test.after.always(async () => {
  await app?.close();
});

async function signedIn(): Promise<Browser> {
  const browser = new Browser();
  const form = await browser.request(`${app.url}/session/sign-in`);
  const reply = await browser.request(`${app.url}/session/sign-in`, {
    form: { csrf: hiddenField(form.text, 'csrf'), return_to: '/app/', login, password },
  });
  if (reply.status !== 303) throw new Error(`sign-in failed: ${reply.status} ${reply.text}`);
  return browser;
}

/** A /v1 call carrying the browser's cookies (and whatever headers the test adds). */
async function api(
  browser: Browser,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; token?: string } = {},
) {
  const cookie = ['aa_session', 'aa_csrf']
    .map((n) => [n, browser.cookie(n)] as const)
    .filter(([, v]) => v)
    .map(([n, v]) => `${n}=${v}`)
    .join('; ');
  return call(app.url, method, path, {
    body: options.body,
    token: options.token,
    headers: { cookie, ...options.headers },
  });
}

test('a session reads /v1 as its member, in every workspace of the member', async (t) => {
  const browser = await signedIn();
  const me = await api(browser, 'GET', '/v1/caller');
  t.is(me.status, 200, me.text);
  t.is(me.body.credential, 'session');
  t.is(me.body.login, login);
  // Acting (no workspace in the path) in the first of the member's workspaces, with its role.
  t.is(
    me.body.role,
    me.body.workspaces.find((w: { id: string }) => w.id === me.body.workspace_id).role,
  );
  t.is(me.headers.get('cache-control'), 'no-store');
  t.regex(me.body.csrf_token, /^[A-Za-z0-9_-]{43}$/);
  t.deepEqual(
    me.body.workspaces.map((w: { id: string; role: string }) => [w.id, w.role]).sort(),
    [
      [owned.workspaceId, 'owner'],
      [joined.workspaceId, 'member'],
    ].sort(),
  );
  t.is(me.body.scopes.includes('decisions:approve'), me.body.role === 'owner');

  const list = await api(browser, 'GET', '/v1/workspaces');
  t.is(list.status, 200);
  t.deepEqual(
    list.body.items.map((w: { id: string }) => w.id).sort(),
    [owned.workspaceId, joined.workspaceId].sort(),
  );
  // In the second workspace the session acts as that membership, with a member's scopes.
  const there = await api(browser, 'GET', `/v1/caller`);
  t.is(there.status, 200);
  const repos = await api(browser, 'GET', `/v1/workspaces/${joined.workspaceId}/repositories`);
  t.is(repos.status, 200, repos.text);
  // A workspace the member does not belong to does not exist for them.
  const foreign = await api(browser, 'GET', `/v1/workspaces/${stranger.workspaceId}/repositories`);
  t.is(foreign.status, 404);
  t.true(isProblem(foreign));
});

test('a write with a session needs the CSRF header; refused writes change nothing', async (t) => {
  const browser = await signedIn();
  const { body: me } = await api(browser, 'GET', '/v1/caller');
  const path = `/v1/workspaces/${owned.workspaceId}/repositories`;
  const body = { name: 'csrf-probe', url: 'https://git.example.com/org/csrf-probe.git' };

  const missing = await api(browser, 'POST', path, { body });
  t.is(missing.status, 403);
  t.true(isProblem(missing));
  t.is(missing.body.code, 'csrf_token_missing');
  t.regex(missing.body.hint, /X-CSRF-Token/);

  const wrong = await api(browser, 'POST', path, {
    body,
    headers: { 'X-CSRF-Token': crypto.randomBytes(32).toString('base64url') },
  });
  t.is(wrong.status, 403);
  t.is(wrong.body.code, 'csrf_token_invalid');
  // A token of another browser (another CSRF cookie) does not pass either.
  const other = await signedIn();
  const { body: theirs } = await api(other, 'GET', '/v1/caller');
  const crossed = await api(browser, 'POST', path, {
    body,
    headers: { 'X-CSRF-Token': theirs.csrf_token },
  });
  t.is(crossed.status, 403);
  t.is(crossed.body.code, 'csrf_token_invalid');
  // DELETE and PATCH are unsafe too.
  const del = await api(browser, 'DELETE', `${path}/${crypto.randomUUID()}`);
  t.is(del.body.code, 'csrf_token_missing');

  const none = await api(browser, 'GET', path);
  t.deepEqual(
    none.body.items.filter((r: { name: string }) => r.name === 'csrf-probe'),
    [],
  );

  const made = await api(browser, 'POST', path, {
    body,
    headers: { 'X-CSRF-Token': me.csrf_token },
  });
  t.is(made.status, 201, made.text);
  // The audit trail names the member; no token row is cited.
  const event = await app.services
    .db('audit_events')
    .where({ workspace_id: owned.workspaceId, resource_id: made.body.id })
    .first();
  t.is(event.actor_id, owned.memberId);
  t.is(event.token_id, null);
});

test("a session has its role's scopes: a plain member cannot change the gate policy", async (t) => {
  const browser = await signedIn();
  const { body: me } = await api(browser, 'GET', '/v1/caller');
  const path = `/v1/workspaces/${joined.workspaceId}/policies/gate/reset`;
  const refused = await api(browser, 'POST', path, {
    body: { expected_version: 1 },
    headers: { 'X-CSRF-Token': me.csrf_token },
  });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');
  t.regex(refused.body.detail, /policies:write/);
});

test('tokens are unchanged: an Authorization header wins over a session cookie', async (t) => {
  const browser = await signedIn();
  const asToken = await api(browser, 'GET', '/v1/caller', { token: owned.token });
  t.is(asToken.body.credential, 'token');
  t.is(asToken.body.csrf_token, null);
  // A token write needs no CSRF header, cookie or not.
  const write = await api(browser, 'POST', `/v1/workspaces/${owned.workspaceId}/repositories`, {
    token: owned.token,
    body: { name: 'by-token', url: 'https://git.example.com/org/by-token.git' },
  });
  t.is(write.status, 201, write.text);
  // A bad token is refused; the cookie is not a fallback.
  const bad = await api(browser, 'GET', '/v1/caller', { token: 'aat_nope_nope' });
  t.is(bad.status, 401);
  t.is(bad.body.code, 'invalid_token');
  // Without any credential, 401 as before.
  const none = await call(app.url, 'GET', '/v1/caller');
  t.is(none.status, 401);
  t.is(none.body.code, 'authentication_required');
});

test('a session creates an API token (secret once); a signed-out session is refused', async (t) => {
  const browser = await signedIn();
  const { body: me } = await api(browser, 'GET', '/v1/caller');
  const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const created = await api(browser, 'POST', `/v1/workspaces/${owned.workspaceId}/tokens`, {
    body: { name: 'from the console', scopes: ['repositories:read'], expires_at: expires },
    headers: { 'X-CSRF-Token': me.csrf_token },
  });
  t.is(created.status, 201, created.text);
  const row = await app.services.db('api_tokens').where({ id: created.body.id }).first();
  t.is(row.created_by_token_id, null);
  t.is(row.member_id, owned.memberId);
  const used = await call(app.url, 'GET', '/v1/workspaces', { token: created.body.token });
  t.is(used.status, 200);
  // A scope outside the role is refused (a member of `joined` cannot mint decisions:approve).
  const escalate = await api(browser, 'POST', `/v1/workspaces/${joined.workspaceId}/tokens`, {
    body: { name: 'escalate', scopes: ['decisions:approve'], expires_at: expires },
    headers: { 'X-CSRF-Token': me.csrf_token },
  });
  t.is(escalate.status, 403);
  t.is(escalate.body.code, 'insufficient_scope');

  const secret = browser.cookie('aa_session')!;
  const form = await browser.request(`${app.url}/session`);
  const out = await browser.request(`${app.url}/session/sign-out`, {
    form: { csrf: hiddenField(form.text, 'csrf') },
  });
  t.true(out.status === 302 || out.status === 303);
  // The old cookie, replayed after sign-out, authenticates nothing.
  const after = await call(app.url, 'GET', '/v1/caller', {
    headers: { cookie: `aa_session=${secret}` },
  });
  t.is(after.status, 401);
  t.is(after.body.code, 'authentication_required');
});
