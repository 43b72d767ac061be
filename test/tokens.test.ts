/**
 * API tokens: createApiToken, listApiTokens, getApiToken, revokeApiToken and getCurrentToken.
 * Bounds of ApiTokenCreate , the secret shown once, no escalation,
 * revocation, last_used_at, tenancy, the audit/activity records of writes, and paging.
 */
import test, { type ExecutionContext } from 'ava';
import { parseToken } from '../domain/tokens/rules';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, type Tenant } from './helpers/factories';
import { call, isProblem, type Reply } from './helpers/http';
import { SCOPES, type ScopeName } from '../domain/contract/values';

let app: TestApp;

test.before(async () => {
  app = await startTestApp();
});
test.after.always(async () => {
  await app?.close();
});

const DAY = 86_400_000;
const TOKEN_TEXT = /^aat_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/;

const tokensPath = (workspaceId: string) => `/v1/workspaces/${workspaceId}/tokens`;
const tokenPath = (workspaceId: string, tokenId: string) => `${tokensPath(workspaceId)}/${tokenId}`;
const inDays = (days: number, extraMs = 0) =>
  new Date(Date.now() + days * DAY + extraMs).toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The secret part of `aat_<prefix>_<secret>`. */
// The secret is base64url and may itself contain `_`: cut after the prefix, not at the last `_`.
const secretOf = (token: string) => {
  const parsed = parseToken(token);
  if (!parsed) throw new Error(`not an API token: ${token}`);
  return parsed.secret;
};

interface Created {
  id: string;
  name: string;
  prefix: string;
  token: string;
  scopes: string[];
  expires_at: string;
}

async function createVia(
  t: ExecutionContext,
  tenant: Tenant,
  body: { name?: string; scopes?: readonly ScopeName[]; expires_at?: string },
  token = tenant.token,
): Promise<Created> {
  const reply = await call<Created>(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token,
    body: { name: 'made by test', scopes: ['audits:read'], expires_at: inDays(10), ...body },
  });
  if (reply.status !== 201) t.fail(`createApiToken answered ${reply.status}: ${reply.text}`);
  return reply.body;
}

/** Asserts a 400 problem whose `errors` name `path` (exactly or as a parent of the entry). */
function assertRejected(
  t: ExecutionContext,
  reply: Reply,
  path: string,
  code = 'validation_failed',
  label = path,
) {
  t.is(reply.status, 400, `${label}: ${reply.text}`);
  t.true(isProblem(reply), `${label} is a problem`);
  t.regex(reply.headers.get('content-type') ?? '', /^application\/problem\+json/, label);
  t.is(reply.body?.code, code, label);
  const errors = (reply.body?.errors ?? []) as Array<{ in: string; path: string; message: string }>;
  t.true(
    errors.some((e) => e.path === path || e.path.startsWith(`${path}/`)),
    `${label}: errors name ${path}: ${JSON.stringify(errors)}`,
  );
}

async function listAll(tenant: Tenant, token = tenant.token) {
  const reply = await call(app.url, 'GET', `${tokensPath(tenant.workspaceId)}?limit=200`, {
    token,
  });
  return reply.body.items as Array<{
    id: string;
    revoked_at: string | null;
    last_used_at: string | null;
  }>;
}

test('ApiTokenCreate name: 1 and 255 characters accepted, 0 and 256 rejected', async (t) => {
  const tenant = await createTenant(app.services.db);
  const one = await createVia(t, tenant, { name: 'a' });
  t.is(one.name, 'a');
  const max = await createVia(t, tenant, { name: 'n'.repeat(255) });
  t.is(max.name, 'n'.repeat(255));

  const base = { scopes: ['audits:read'], expires_at: inDays(10) };
  for (const name of ['', 'n'.repeat(256)]) {
    const reply = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
      token: tenant.token,
      body: { ...base, name },
    });
    assertRejected(t, reply, '/name', 'validation_failed', `name of ${name.length}`);
  }
  const missing = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: base,
  });
  assertRejected(t, missing, '/name', 'validation_failed', 'name missing');

  // Nothing was created by the rejected requests: the bootstrap token and the two above.
  t.is((await listAll(tenant)).length, 3);
});

test('ApiTokenCreate scopes: 1 and 25 items accepted, 0, 26 and unknown values rejected', async (t) => {
  const tenant = await createTenant(app.services.db);
  t.is(SCOPES.length, 25);
  const single = await createVia(t, tenant, { scopes: ['reports:read'] });
  t.deepEqual(single.scopes, ['reports:read']);
  const all = await createVia(t, tenant, { scopes: SCOPES });
  t.deepEqual([...all.scopes].sort(), [...SCOPES].sort());

  const send = (scopes: unknown) =>
    call(app.url, 'POST', tokensPath(tenant.workspaceId), {
      token: tenant.token,
      body: { name: 'scopes', scopes, expires_at: inDays(10) },
    });
  assertRejected(t, await send([]), '/scopes', 'validation_failed', '0 scopes');
  assertRejected(
    t,
    await send([...SCOPES, 'audits:read']),
    '/scopes',
    'validation_failed',
    '26 scopes',
  );
  const unknown = await send(['audits:read', 'audits:delete']);
  assertRejected(t, unknown, '/scopes', 'validation_failed', 'unknown scope');
  t.true(
    (unknown.body.errors as Array<{ path: string }>).some((e) => e.path === '/scopes/1'),
    `the unknown item is pointed at: ${unknown.text}`,
  );
  assertRejected(
    t,
    await send('audits:read'),
    '/scopes',
    'validation_failed',
    'scopes not an array',
  );

  t.is((await listAll(tenant)).length, 3);
});

test('ApiTokenCreate expires_at: mandatory, in the future, at most 366 days ahead', async (t) => {
  // The creator lives 400 days, so only the 366-day rule (not the creator's expiry) applies.
  const tenant = await createTenant(app.services.db, { days: 400 });
  const send = (body: Record<string, unknown>) =>
    call(app.url, 'POST', tokensPath(tenant.workspaceId), { token: tenant.token, body });
  const base = { name: 'expiry', scopes: ['audits:read'] };

  assertRejected(t, await send(base), '/expires_at', 'validation_failed', 'missing');
  assertRejected(
    t,
    await send({ ...base, expires_at: inDays(-1) }),
    '/expires_at',
    'validation_failed',
    'past',
  );
  assertRejected(
    t,
    await send({ ...base, expires_at: inDays(0, -1000) }),
    '/expires_at',
    'validation_failed',
    '1 s ago',
  );
  assertRejected(
    t,
    await send({ ...base, expires_at: 'tomorrow' }),
    '/expires_at',
    'validation_failed',
    'not a date',
  );
  assertRejected(
    t,
    await send({ ...base, expires_at: inDays(366, 60_000) }),
    '/expires_at',
    'validation_failed',
    '366 days and a minute',
  );
  assertRejected(
    t,
    await send({ ...base, expires_at: inDays(400) }),
    '/expires_at',
    'validation_failed',
    '400 days',
  );

  const d365 = await send({ ...base, expires_at: inDays(365) });
  t.is(d365.status, 201, d365.text);
  const d366 = await send({ ...base, expires_at: inDays(366, -60_000) });
  t.is(d366.status, 201, `just under 366 days: ${d366.text}`);
  const soon = await send({ ...base, expires_at: inDays(0, 60_000) });
  t.is(soon.status, 201, `a minute ahead: ${soon.text}`);
});

test('a leap-second expires_at (valid RFC 3339 date-time) is answered cleanly, never with a 500', async (t) => {
  // JSON Schema's date-time format accepts second 60 at 23:59 UTC; JavaScript's Date does not.
  const tenant = await createTenant(app.services.db);
  const tomorrow = inDays(1).slice(0, 10);
  const reply = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: { name: 'leap', scopes: ['audits:read'], expires_at: `${tomorrow}T23:59:60Z` },
  });
  t.not(reply.status, 500, reply.text);
  if (reply.status === 201) {
    t.is((reply.body as Created).expires_at, `${inDays(2).slice(0, 10)}T00:00:00.000Z`);
  } else {
    assertRejected(t, reply, '/expires_at');
  }
});

test('ApiTokenCreate rejects an unknown property and a missing body', async (t) => {
  const tenant = await createTenant(app.services.db);
  const extra = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: { name: 'x', scopes: ['audits:read'], expires_at: inDays(5), colour: 'red' },
  });
  assertRejected(t, extra, '/colour', 'unknown_property');

  // A client may not pick its own secret or prefix.
  const chosen = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: {
      name: 'x',
      scopes: ['audits:read'],
      expires_at: inDays(5),
      token: 'aat_aaaaaaaaaaaa_' + 'a'.repeat(43),
    },
  });
  assertRejected(t, chosen, '/token', 'unknown_property');

  const none = await call(app.url, 'POST', tokensPath(tenant.workspaceId), { token: tenant.token });
  t.is(none.status, 400);
  t.is(none.body.code, 'validation_failed');
});

test('the secret is returned once, works, and never appears in reads or logs', async (t) => {
  const tenant = await createTenant(app.services.db);
  const expiresAt = inDays(20);
  const reply = await call<Created>(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: { name: 'ci', scopes: ['audits:read', 'members:read'], expires_at: expiresAt },
  });
  t.is(reply.status, 201, reply.text);
  const created = reply.body;
  t.regex(created.token, TOKEN_TEXT);
  t.regex(created.prefix, /^aat_[a-z0-9]{12}$/);
  t.true(created.token.startsWith(`${created.prefix}_`), 'token is aat_<prefix>_<secret>');
  t.deepEqual(Object.keys(created).sort(), [
    'expires_at',
    'id',
    'name',
    'prefix',
    'scopes',
    'token',
  ]);
  t.is(created.expires_at, expiresAt);
  t.deepEqual([...created.scopes].sort(), ['audits:read', 'members:read']);
  t.is(reply.headers.get('location'), tokenPath(tenant.workspaceId, created.id));
  t.is(reply.headers.get('cache-control'), 'no-store');
  const secret = secretOf(created.token);

  // The new token authenticates as itself.
  const me = await call(app.url, 'GET', '/v1/token', { token: created.token });
  t.is(me.status, 200, me.text);
  t.is(me.body.id, created.id);
  t.is(me.body.workspace_id, tenant.workspaceId);
  t.is(me.body.member_id, tenant.memberId);
  t.is(me.body.prefix, created.prefix);
  t.deepEqual([...me.body.scopes].sort(), ['audits:read', 'members:read']);
  t.is(me.body.revoked_at, null);

  // The new token can read the token list (members:read) including itself.
  const reads: Reply[] = [
    me,
    await call(app.url, 'GET', tokensPath(tenant.workspaceId), { token: tenant.token }),
    await call(app.url, 'GET', tokensPath(tenant.workspaceId), { token: created.token }),
    await call(app.url, 'GET', tokenPath(tenant.workspaceId, created.id), { token: tenant.token }),
    await call(app.url, 'GET', tokenPath(tenant.workspaceId, tenant.tokenId), {
      token: tenant.token,
    }),
    await call(app.url, 'GET', '/v1/token', { token: tenant.token }),
    await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, created.id), {
      token: tenant.token,
    }),
    await call(app.url, 'GET', tokenPath(tenant.workspaceId, created.id), { token: tenant.token }),
  ];
  for (const [i, r] of reads.entries()) {
    t.is(r.status, 200, `read ${i}: ${r.text}`);
    t.false(r.text.includes(secret), `read ${i} carries no secret of the new token`);
    t.false(r.text.includes(secretOf(tenant.token)), `read ${i} carries no secret of the creator`);
    const objects = Array.isArray(r.body.items) ? (r.body.items as object[]) : [r.body as object];
    t.true(objects.length > 0);
    for (const o of objects) t.false('token' in o, `read ${i} has no token property`);
  }
  const listed = (reads[1]!.body.items as Array<{ id: string; prefix: string }>).find(
    (i) => i.id === created.id,
  );
  t.is(listed?.prefix, created.prefix);

  // Logs were written for these requests (with the prefix), but never a secret.
  const logs = app.logs();
  t.true(logs.includes(created.prefix), 'the access log names the token prefix');
  t.false(logs.includes(secret), 'the new secret is not logged');
  t.false(logs.includes(created.token), 'the new token text is not logged');
  t.false(logs.includes(secretOf(tenant.token)), "the creator's secret is not logged");
});

test('a token cannot grant a scope its creator lacks (403 insufficient_scope naming it)', async (t) => {
  const tenant = await createTenant(app.services.db, {
    scopes: ['audits:read', 'members:read'],
    days: 30,
  });
  const reply = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: { name: 'escalate', scopes: ['audits:read', 'audits:write'], expires_at: inDays(5) },
  });
  t.is(reply.status, 403, reply.text);
  t.true(isProblem(reply));
  t.is(reply.body.code, 'insufficient_scope');
  const named = [
    ...((reply.body.required_scopes as string[] | undefined) ?? []),
    reply.body.detail as string,
  ].join(' ');
  t.true(named.includes('audits:write'), `names the missing scope: ${reply.text}`);
  t.deepEqual(reply.body.required_scopes, ['audits:write'], 'only the missing scope is required');

  // The scopes it holds are fine.
  const ok = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: { name: 'subset', scopes: ['audits:read'], expires_at: inDays(5) },
  });
  t.is(ok.status, 201, ok.text);
  // And the derived token cannot widen again.
  const derived = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: (ok.body as Created).token,
    body: { name: 'widen', scopes: ['members:read'], expires_at: inDays(5) },
  });
  t.is(derived.status, 403);
  t.is(derived.body.code, 'insufficient_scope');
  t.deepEqual(derived.body.required_scopes, ['members:read']);
  t.is((await listAll(tenant)).length, 2);
});

test('a token cannot outlive its creator (403 expiry_exceeds_creator); equal expiry is allowed', async (t) => {
  const tenant = await createTenant(app.services.db, { days: 30 });
  const me = await call(app.url, 'GET', '/v1/token', { token: tenant.token });
  t.is(me.status, 200);
  const creatorExpiry = new Date(me.body.expires_at as string).getTime();

  const later = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: { name: 'long', scopes: ['audits:read'], expires_at: inDays(31) },
  });
  t.is(later.status, 403, later.text);
  t.true(isProblem(later));
  t.is(later.body.code, 'expiry_exceeds_creator');

  const oneMsLater = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: {
      name: 'long',
      scopes: ['audits:read'],
      expires_at: new Date(creatorExpiry + 1).toISOString(),
    },
  });
  t.is(oneMsLater.status, 403, oneMsLater.text);
  t.is(oneMsLater.body.code, 'expiry_exceeds_creator');

  const equal = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: {
      name: 'same',
      scopes: ['audits:read'],
      expires_at: new Date(creatorExpiry).toISOString(),
    },
  });
  t.is(equal.status, 201, equal.text);
});

test('a token can revoke itself and is then refused with 401 invalid_token', async (t) => {
  const tenant = await createTenant(app.services.db);
  const own = await createVia(t, tenant, { name: 'self', scopes: ['audits:read'] });
  t.is((await call(app.url, 'GET', '/v1/token', { token: own.token })).status, 200);

  const revoked = await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, own.id), {
    token: own.token,
  });
  t.is(revoked.status, 200, revoked.text);
  t.is(revoked.body.id, own.id);
  t.truthy(revoked.body.revoked_at);
  t.false('token' in revoked.body);

  const after = await call(app.url, 'GET', '/v1/token', { token: own.token });
  t.is(after.status, 401);
  t.true(isProblem(after));
  t.is(after.body.code, 'invalid_token');
  t.regex(after.headers.get('www-authenticate') ?? '', /^Bearer .*error="invalid_token"/);

  const shown = await call(app.url, 'GET', tokenPath(tenant.workspaceId, own.id), {
    token: tenant.token,
  });
  t.is(shown.status, 200);
  t.is(shown.body.revoked_at, revoked.body.revoked_at);
});

test('revoking another token needs every scope it holds', async (t) => {
  const tenant = await createTenant(app.services.db);
  const narrow = await createVia(t, tenant, { name: 'narrow', scopes: ['audits:read'] });
  const pair = await createVia(t, tenant, {
    name: 'pair',
    scopes: ['audits:read', 'members:read'],
  });
  const wide = await createVia(t, tenant, {
    name: 'wide',
    scopes: ['audits:read', 'members:read', 'reports:read'],
  });

  // narrow lacks members:read which `pair` holds.
  const denied = await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, pair.id), {
    token: narrow.token,
  });
  t.is(denied.status, 403, denied.text);
  t.true(isProblem(denied));
  t.is(denied.body.code, 'insufficient_scope');
  t.deepEqual(denied.body.required_scopes, ['members:read']);

  // Without members:read, narrow learns nothing about another token (not even its scopes).
  const blind = await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, tenant.tokenId), {
    token: narrow.token,
  });
  t.is(blind.status, 403);
  t.deepEqual(blind.body.required_scopes, ['members:read']);

  // pair reads tokens but cannot revoke the all-scopes bootstrap token: 23 scopes are missing.
  const bootstrap = await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, tenant.tokenId), {
    token: pair.token,
  });
  t.is(bootstrap.status, 403);
  t.is(bootstrap.body.code, 'insufficient_scope');
  t.false((bootstrap.body.required_scopes as string[]).includes('audits:read'));
  t.false((bootstrap.body.required_scopes as string[]).includes('members:read'));
  t.is((bootstrap.body.required_scopes as string[]).length, 23);

  // Both targets still work.
  t.is((await call(app.url, 'GET', '/v1/token', { token: pair.token })).status, 200);
  t.is((await call(app.url, 'GET', '/v1/token', { token: tenant.token })).status, 200);

  // A token holding a superset may revoke.
  const allowed = await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, pair.id), {
    token: wide.token,
  });
  t.is(allowed.status, 200, allowed.text);
  t.truthy(allowed.body.revoked_at);
  const refused = await call(app.url, 'GET', '/v1/token', { token: pair.token });
  t.is(refused.status, 401);
  t.is(refused.body.code, 'invalid_token');
});

test('revocation is idempotent: a second call answers the first revoked_at', async (t) => {
  const tenant = await createTenant(app.services.db);
  const target = await createVia(t, tenant, { name: 'twice' });
  const first = await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, target.id), {
    token: tenant.token,
  });
  t.is(first.status, 200, first.text);
  t.regex(first.body.revoked_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  await sleep(20);
  const second = await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, target.id), {
    token: tenant.token,
  });
  t.is(second.status, 200, second.text);
  t.is(second.body.revoked_at, first.body.revoked_at);

  const got = await call(app.url, 'GET', tokenPath(tenant.workspaceId, target.id), {
    token: tenant.token,
  });
  t.is(got.body.revoked_at, first.body.revoked_at);
  const listed = (await listAll(tenant)).find((i) => i.id === target.id);
  t.is(listed?.revoked_at, first.body.revoked_at);
  // The unrevoked bootstrap token stays unrevoked.
  t.is((await listAll(tenant)).find((i) => i.id === tenant.tokenId)?.revoked_at, null);

  const refused = await call(app.url, 'GET', '/v1/token', { token: target.token });
  t.is(refused.status, 401);
  t.is(refused.body.code, 'invalid_token');
});

test('last_used_at is null before use and set once the token authenticates a request', async (t) => {
  const tenant = await createTenant(app.services.db);
  const fresh = await createVia(t, tenant, { name: 'unused' });
  const before = await call(app.url, 'GET', tokenPath(tenant.workspaceId, fresh.id), {
    token: tenant.token,
  });
  t.is(before.status, 200);
  t.is(before.body.last_used_at, null);
  t.is(before.body.revoked_at, null);
  t.regex(before.body.created_at as string, /Z$/);

  const startedAt = Date.now();
  t.is((await call(app.url, 'GET', '/v1/token', { token: fresh.token })).status, 200);

  // Recording use does not hold up the request; give it a moment.
  let lastUsed: string | null = null;
  for (let i = 0; i < 50 && !lastUsed; i++) {
    const r = await call(app.url, 'GET', tokenPath(tenant.workspaceId, fresh.id), {
      token: tenant.token,
    });
    lastUsed = r.body.last_used_at as string | null;
    if (!lastUsed) await sleep(100);
  }
  t.truthy(lastUsed, 'last_used_at was set');
  const usedAt = new Date(lastUsed!).getTime();
  t.true(
    usedAt >= startedAt - 1000 && usedAt <= Date.now() + 1000,
    `last_used_at ${lastUsed} is about now`,
  );

  // Written at most once a minute: further use right away leaves it as it was.
  await sleep(20);
  t.is((await call(app.url, 'GET', '/v1/token', { token: fresh.token })).status, 200);
  await sleep(200);
  const later = await call(app.url, 'GET', tokenPath(tenant.workspaceId, fresh.id), {
    token: tenant.token,
  });
  t.is(later.body.last_used_at, lastUsed);
});

test("another workspace's token answers 404 not_found and is left untouched", async (t) => {
  const a = await createTenant(app.services.db);
  const b = await createTenant(app.services.db);

  const cases: Array<[string, string, string]> = [
    ['get via own workspace', 'GET', tokenPath(a.workspaceId, b.tokenId)],
    ['revoke via own workspace', 'DELETE', tokenPath(a.workspaceId, b.tokenId)],
    ['get via other workspace', 'GET', tokenPath(b.workspaceId, b.tokenId)],
    ['revoke via other workspace', 'DELETE', tokenPath(b.workspaceId, b.tokenId)],
    ['list other workspace', 'GET', tokensPath(b.workspaceId)],
    ['unknown id', 'GET', tokenPath(a.workspaceId, '00000000-0000-4000-8000-000000000000')],
  ];
  for (const [name, method, path] of cases) {
    const reply = await call(app.url, method, path, { token: a.token });
    t.is(reply.status, 404, `${name}: ${reply.text}`);
    t.true(isProblem(reply), name);
    t.is(reply.body.code, 'not_found', name);
    t.false(reply.text.includes(b.prefix), `${name} does not reveal the other token`);
  }
  const create = await call(app.url, 'POST', tokensPath(b.workspaceId), {
    token: a.token,
    body: { name: 'intruder', scopes: ['audits:read'], expires_at: inDays(5) },
  });
  t.is(create.status, 404);
  t.is(create.body.code, 'not_found');

  t.false((await listAll(a)).some((i) => i.id === b.tokenId));
  const bList = await listAll(b);
  t.deepEqual(
    bList.map((i) => i.id),
    [b.tokenId],
  );
  const bMe = await call(app.url, 'GET', '/v1/token', { token: b.token });
  t.is(bMe.status, 200);
  t.is(bMe.body.revoked_at, null);
});

test('creating and revoking record an audit event and an activity item, without the secret', async (t) => {
  const tenant = await createTenant(app.services.db);
  const made = await createVia(t, tenant, { name: 'recorded', scopes: ['audits:read'] });
  const rid = { 'X-Request-ID': `revoke-${made.id}` };
  const first = await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, made.id), {
    token: tenant.token,
    headers: rid,
  });
  t.is(first.status, 200);
  // A repeated revocation is not a new write.
  t.is(
    (await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, made.id), { token: tenant.token }))
      .status,
    200,
  );

  const audit = await call(
    app.url,
    'GET',
    `/v1/workspaces/${tenant.workspaceId}/audit-events?limit=200`,
    {
      token: tenant.token,
    },
  );
  t.is(audit.status, 200, audit.text);
  type Item = {
    action: string;
    resource_id: string | null;
    resource_type: string;
    actor_id?: string | null;
    actor_login?: string | null;
    details: Record<string, unknown>;
  };
  const events = (audit.body.items as Item[]).filter((e) => e.resource_id === made.id);
  const created = events.filter((e) => e.action === 'api_token.created');
  const revoked = events.filter((e) => e.action === 'api_token.revoked');
  t.is(created.length, 1, JSON.stringify(events));
  t.is(revoked.length, 1, 'a second revocation records nothing');
  for (const e of [...created, ...revoked]) {
    t.is(e.actor_id, tenant.memberId);
    t.is(e.resource_type, 'api_token');
    t.is(e.details.prefix, made.prefix);
    t.false(JSON.stringify(e).includes(secretOf(made.token)), 'no secret in the audit event');
    t.false('token' in e.details);
  }

  const activity = await call(
    app.url,
    'GET',
    `/v1/workspaces/${tenant.workspaceId}/activity?limit=200`,
    {
      token: tenant.token,
    },
  );
  t.is(activity.status, 200, activity.text);
  const items = (activity.body.items as Item[]).filter((e) => e.resource_id === made.id);
  t.deepEqual(items.map((i) => i.action).sort(), ['api_token.created', 'api_token.revoked']);
  for (const i of items) {
    t.is(i.actor_login, 'owner');
    t.false(JSON.stringify(i).includes(secretOf(made.token)), 'no secret in the activity item');
  }
  t.false(
    audit.text.includes(secretOf(tenant.token)) || activity.text.includes(secretOf(tenant.token)),
  );
});

test('listApiTokens pages newest first with limit and next_cursor; bad limits and cursors are 400', async (t) => {
  const tenant = await createTenant(app.services.db);
  const made: string[] = [];
  for (let i = 0; i < 7; i++) {
    await sleep(5); // distinct created_at, so "newest first" is the creation order reversed
    made.push((await createVia(t, tenant, { name: `page-${i}` })).id);
  }
  const expected = [...made].reverse().concat(tenant.tokenId);

  const seen: string[] = [];
  const pages: Array<{ count: number; has_more: boolean }> = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 10; guard++) {
    const q: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : '?limit=3';
    const reply = await call(app.url, 'GET', `${tokensPath(tenant.workspaceId)}${q}`, {
      token: tenant.token,
    });
    t.is(reply.status, 200, reply.text);
    const items = reply.body.items as Array<{ id: string }>;
    t.true(items.length <= 3);
    seen.push(...items.map((i) => i.id));
    pages.push({ count: items.length, has_more: reply.body.has_more as boolean });
    t.false(reply.text.includes('"token"'));
    if (!reply.body.has_more) {
      t.is(reply.body.next_cursor ?? null, null, 'the last page has no next_cursor');
      break;
    }
    t.is(typeof reply.body.next_cursor, 'string');
    cursor = reply.body.next_cursor as string;
  }
  t.deepEqual(pages, [
    { count: 3, has_more: true },
    { count: 3, has_more: true },
    { count: 2, has_more: false },
  ]);
  t.is(new Set(seen).size, seen.length, 'no id is seen twice');
  t.deepEqual(seen, expected, 'every token exactly once, newest first');

  const atMax = await call(app.url, 'GET', `${tokensPath(tenant.workspaceId)}?limit=200`, {
    token: tenant.token,
  });
  t.is(atMax.status, 200);
  t.deepEqual(
    (atMax.body.items as Array<{ id: string }>).map((i) => i.id),
    expected,
  );
  t.false(atMax.body.has_more);

  for (const limit of ['0', '201', '-1', 'abc', '2.5']) {
    const reply = await call(app.url, 'GET', `${tokensPath(tenant.workspaceId)}?limit=${limit}`, {
      token: tenant.token,
    });
    assertRejected(t, reply, '/limit', 'validation_failed', `limit=${limit}`);
  }
  const forged = Buffer.from(JSON.stringify(['not a date', 'x']), 'utf8').toString('base64url');
  for (const c of ['garbage', forged, 'e30']) {
    const reply = await call(app.url, 'GET', `${tokensPath(tenant.workspaceId)}?cursor=${c}`, {
      token: tenant.token,
    });
    assertRejected(t, reply, '/cursor', 'validation_failed', `cursor=${c}`);
  }
});

test('a forged cursor is 400 naming /cursor, even when JavaScript can read its date', async (t) => {
  const tenant = await createTenant(app.services.db);
  const id = '00000000-0000-4000-8000-000000000000';
  const forge = (key: unknown) => Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');

  // A well-formed key is just a position: it answers a (here empty or full) page.
  const wellFormed = await call(
    app.url,
    'GET',
    `${tokensPath(tenant.workspaceId)}?cursor=${forge([new Date().toISOString(), id])}`,
    {
      token: tenant.token,
    },
  );
  t.is(wellFormed.status, 200, wellFormed.text);

  // Date.parse accepts these; PostgreSQL's timestamptz does not.
  for (const createdAt of ['+275760-09-13T00:00:00.000Z', '1']) {
    const reply = await call(
      app.url,
      'GET',
      `${tokensPath(tenant.workspaceId)}?cursor=${forge([createdAt, id])}`,
      {
        token: tenant.token,
      },
    );
    t.not(reply.status, 500, `cursor date ${createdAt}: ${reply.text}`);
    assertRejected(t, reply, '/cursor', 'validation_failed', `cursor date ${createdAt}`);
  }
});

test('listing and reading tokens needs members:read; creating and self-reading need only a token', async (t) => {
  const tenant = await createTenant(app.services.db, { scopes: ['audits:read'] });
  const list = await call(app.url, 'GET', tokensPath(tenant.workspaceId), { token: tenant.token });
  t.is(list.status, 403);
  t.is(list.body.code, 'insufficient_scope');
  t.deepEqual(list.body.required_scopes, ['members:read']);
  const get = await call(app.url, 'GET', tokenPath(tenant.workspaceId, tenant.tokenId), {
    token: tenant.token,
  });
  t.is(get.status, 403);
  t.deepEqual(get.body.required_scopes, ['members:read']);

  const me = await call(app.url, 'GET', '/v1/token', { token: tenant.token });
  t.is(me.status, 200);
  t.deepEqual(me.body.scopes, ['audits:read']);
  t.is(me.body.id, tenant.tokenId);
  t.is(me.body.prefix, tenant.prefix);
  const made = await createVia(t, tenant, { name: 'child', scopes: ['audits:read'] });
  t.regex(made.token, TOKEN_TEXT);
});

test('revoking a token revokes the tokens it minted, transitively, each with an audit event; the list shows the lineage', async (t) => {
  const tenant = await createTenant(app.services.db);
  const scopes: ScopeName[] = ['members:read', 'audits:read'];
  // bootstrap -> parent -> child -> grandchild; parent -> sibling; bootstrap -> bystander.
  // (A token cannot outlive its creator: each generation expires sooner.)
  const parent = await createVia(t, tenant, { name: 'parent', scopes, expires_at: inDays(20) });
  const child = await createVia(
    t,
    tenant,
    { name: 'child', scopes, expires_at: inDays(10) },
    parent.token,
  );
  const grandchild = await createVia(
    t,
    tenant,
    { name: 'grandchild', scopes, expires_at: inDays(5) },
    child.token,
  );
  const sibling = await createVia(
    t,
    tenant,
    { name: 'sibling', scopes, expires_at: inDays(5) },
    parent.token,
  );
  const bystander = await createVia(t, tenant, { name: 'bystander', scopes });

  const listed = new Map(
    (
      (
        await call(app.url, 'GET', `${tokensPath(tenant.workspaceId)}?limit=200`, {
          token: tenant.token,
        })
      ).body.items as Array<{ id: string; created_by_token_id: string | null }>
    ).map((i) => [i.id, i.created_by_token_id]),
  );
  t.is(listed.get(tenant.tokenId), null, 'an operator-issued token has no parent');
  t.is(listed.get(parent.id), tenant.tokenId);
  t.is(listed.get(child.id), parent.id);
  t.is(listed.get(grandchild.id), child.id);
  t.is(listed.get(sibling.id), parent.id);
  const self = await call(app.url, 'GET', '/v1/token', { token: child.token });
  t.is(self.body.created_by_token_id, parent.id);

  // The grandchild is used before the revocation: it works.
  t.is((await call(app.url, 'GET', '/v1/token', { token: grandchild.token })).status, 200);

  const revoked = await call(app.url, 'DELETE', tokenPath(tenant.workspaceId, parent.id), {
    token: tenant.token,
    headers: { 'X-Request-ID': `cascade-${parent.id}` },
  });
  t.is(revoked.status, 200, revoked.text);
  for (const gone of [parent, child, grandchild, sibling]) {
    const reply = await call(app.url, 'GET', '/v1/token', { token: gone.token });
    t.is(reply.status, 401, `${gone.name}: ${reply.text}`);
    t.is(reply.body.code, 'invalid_token', gone.name);
  }
  for (const kept of [bystander.token, tenant.token]) {
    t.is((await call(app.url, 'GET', '/v1/token', { token: kept })).status, 200);
  }
  const after = new Map((await listAll(tenant)).map((i) => [i.id, i.revoked_at] as const));
  for (const id of [child.id, grandchild.id, sibling.id]) t.truthy(after.get(id), id);
  t.is(after.get(bystander.id), null);

  const events = (
    (
      await call(app.url, 'GET', `/v1/workspaces/${tenant.workspaceId}/audit-events?limit=200`, {
        token: tenant.token,
      })
    ).body.items as Array<{ action: string; resource_id: string; details: Record<string, unknown> }>
  ).filter((e) => e.action === 'api_token.revoked');
  const byId = new Map(events.map((e) => [e.resource_id, e]));
  t.is(events.length, 4, JSON.stringify(events));
  t.is(byId.get(parent.id)?.details.cascade_from, undefined);
  for (const [token, creator] of [
    [child, parent.id],
    [grandchild, child.id],
    [sibling, parent.id],
  ] as const) {
    t.is(byId.get(token.id)?.details.cascade_from, parent.id, token.name);
    t.is(byId.get(token.id)?.details.created_by_token_id, creator, token.name);
    t.is(byId.get(token.id)?.details.prefix, token.prefix, token.name);
  }

  // A revoked token cannot mint, even while an authentication cache still holds it.
  const late = await call(app.url, 'POST', tokensPath(tenant.workspaceId), {
    token: child.token,
    body: { name: 'late', scopes: ['audits:read'], expires_at: inDays(5) },
  });
  t.is(late.status, 401, late.text);
});

test('a token revoked while its authentication is cached cannot mint another', async (t) => {
  const cached = await startTestApp({ authCacheTtlMs: 60_000 });
  t.teardown(() => cached.close());
  const tenant = await createTenant(cached.services.db);
  const made = await call<Created>(cached.url, 'POST', tokensPath(tenant.workspaceId), {
    token: tenant.token,
    body: { name: 'minter', scopes: ['audits:read'], expires_at: inDays(5) },
  });
  t.is(made.status, 201, made.text);
  // Authenticated once: now cached. Revoked behind the API's back (another process).
  t.is((await call(cached.url, 'GET', '/v1/token', { token: made.body.token })).status, 200);
  await cached.services
    .db('api_tokens')
    .where({ id: made.body.id })
    .update({ revoked_at: new Date() });
  const minted = await call(cached.url, 'POST', tokensPath(tenant.workspaceId), {
    token: made.body.token,
    body: { name: 'orphan', scopes: ['audits:read'], expires_at: inDays(1) },
  });
  t.is(minted.status, 401, minted.text);
  t.is(minted.body.code, 'invalid_token');
});
