/**
 * The authentication matrix: missing, malformed, unknown, expired and
 * revoked tokens; missing scopes; tenancy (another workspace answers 404, never 403); public
 * operations; and the RateLimit headers and 429.
 */
import test, { type ExecutionContext } from 'ava';
import { generateToken } from '../domain/tokens/rules';
import { insertToken } from '../db/tokens';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, createToken } from './helpers/factories';
import { call, isProblem, type CallOptions, type Reply } from './helpers/http';

let app: TestApp;
/** A second app with a tiny quota, for the rate-limit tests only. */
let limited: TestApp;

test.before(async () => {
  [app, limited] = await Promise.all([
    startTestApp(),
    startTestApp({ rateLimitQuota: 5, rateLimitWindowSeconds: 60 }),
  ]);
});
test.after.always(async () => {
  await Promise.all([app?.close(), limited?.close()]);
});

/** The specification's 25 scopes, verbatim. */
const SPEC_SCOPES = [
  'audits:read',
  'audits:write',
  'decisions:approve',
  'decisions:read',
  'decisions:write',
  'evidence:write',
  'exports:write',
  'findings:read',
  'findings:write',
  'ingestion:read',
  'members:read',
  'policies:read',
  'policies:write',
  'remediations:approve',
  'remediations:read',
  'remediations:write',
  'reports:approve',
  'reports:read',
  'repositories:read',
  'repositories:write',
  'uploads:write',
  'usage:read',
  'workflow_actions:approve',
  'workflow_actions:read',
  'workflow_actions:request',
];

function assertUnauthorized(t: ExecutionContext, reply: Reply, code: string, label: string) {
  t.is(reply.status, 401, `${label}: ${reply.text}`);
  t.true(isProblem(reply), `${label} is a problem`);
  t.regex(reply.headers.get('content-type') ?? '', /^application\/problem\+json/, label);
  t.is(reply.body?.code, code, label);
  const challenge = reply.headers.get('www-authenticate') ?? '';
  t.regex(challenge, /^Bearer\b/, `${label} carries WWW-Authenticate`);
  if (code === 'invalid_token') t.regex(challenge, /error="invalid_token"/, label);
}

function assertForbidden(t: ExecutionContext, reply: Reply, scope: string, label: string) {
  t.is(reply.status, 403, `${label}: ${reply.text}`);
  t.true(isProblem(reply), label);
  t.is(reply.body?.code, 'insufficient_scope', label);
  t.deepEqual(reply.body?.required_scopes, [scope], label);
  t.true((reply.body?.detail as string).includes(scope), `${label}: detail names ${scope}`);
  t.regex(
    reply.headers.get('www-authenticate') ?? '',
    new RegExp(`error="insufficient_scope".*scope="${scope}"`),
    label,
  );
}

test('missing, malformed, unknown, expired and revoked credentials answer 401', async (t) => {
  const { db } = app.services;
  const tenant = await createTenant(db);

  // Expired: a real token row whose expires_at has passed.
  const expired = generateToken();
  await insertToken(db, {
    workspaceId: tenant.workspaceId,
    memberId: tenant.memberId,
    createdByTokenId: null,
    name: 'expired',
    prefix: expired.prefix,
    secretSha256: expired.secretSha256,
    scopes: ['repositories:read'],
    expiresAt: new Date(Date.now() - 1000),
  });

  // Expires while in use: works now, refused after expires_at is moved into the past.
  const lapsing = await createToken(db, tenant, ['repositories:read']);
  t.is((await call(app.url, 'GET', '/v1/workspaces', { token: lapsing.token })).status, 200);
  await db('api_tokens')
    .where({ id: lapsing.id })
    .update({ expires_at: new Date(Date.now() - 1) });

  // Revoked through the API by the bootstrap token.
  const revoked = await createToken(db, tenant, ['repositories:read']);
  t.is((await call(app.url, 'GET', '/v1/workspaces', { token: revoked.token })).status, 200);
  const del = await call(
    app.url,
    'DELETE',
    `/v1/workspaces/${tenant.workspaceId}/tokens/${revoked.id}`,
    {
      token: tenant.token,
    },
  );
  t.is(del.status, 200, del.text);

  // Revoked directly in the database (another process did it).
  const revokedInDb = await createToken(db, tenant, ['repositories:read']);
  t.is((await call(app.url, 'GET', '/v1/workspaces', { token: revokedInDb.token })).status, 200);
  await db('api_tokens').where({ id: revokedInDb.id }).update({ revoked_at: new Date() });

  // A known prefix with the wrong secret.
  const wrongSecret = `${tenant.prefix}_${generateToken().token.split('_')[2]!}`;

  const cases: Array<[string, CallOptions, string]> = [
    ['no Authorization header', {}, 'authentication_required'],
    ['Basic scheme', { headers: { Authorization: 'Basic xyz' } }, 'invalid_token'],
    ['Bearer alone', { headers: { Authorization: 'Bearer' } }, 'invalid_token'],
    [
      'two tokens',
      { headers: { Authorization: `Bearer ${tenant.token} ${tenant.token}` } },
      'invalid_token',
    ],
    ['not token-shaped', { token: 'aat_nope' }, 'invalid_token'],
    ['well-formed but unknown', { token: generateToken().token }, 'invalid_token'],
    ['known prefix, wrong secret', { token: wrongSecret }, 'invalid_token'],
    ['expired', { token: expired.token }, 'invalid_token'],
    ['expired while in use', { token: lapsing.token }, 'invalid_token'],
    ['revoked via the API', { token: revoked.token }, 'invalid_token'],
    ['revoked in the database', { token: revokedInDb.token }, 'invalid_token'],
  ];
  for (const [label, options, code] of cases) {
    const reply = await call(app.url, 'GET', '/v1/workspaces', options);
    assertUnauthorized(t, reply, code, label);
    t.is(reply.body.request_id, reply.headers.get('x-request-id'), `${label}: request id`);
    // The failure never echoes the presented secret.
    if (options.token)
      t.false(reply.text.includes(options.token.slice(-43)), `${label}: no secret echoed`);
  }

  // The same credentials are refused on a write and on the token's self-read.
  for (const token of [expired.token, revoked.token, lapsing.token]) {
    assertUnauthorized(
      t,
      await call(app.url, 'GET', '/v1/token', { token }),
      'invalid_token',
      'GET /v1/token',
    );
    const write = await call(app.url, 'POST', `/v1/workspaces/${tenant.workspaceId}/repositories`, {
      token,
      body: { name: 'nope', url: 'https://git.example/nope.git' },
    });
    assertUnauthorized(t, write, 'invalid_token', 'createRepository');
  }
  // Nothing was written by a refused token.
  const repos = await call(app.url, 'GET', `/v1/workspaces/${tenant.workspaceId}/repositories`, {
    token: tenant.token,
  });
  t.deepEqual(repos.body.items, []);

  // The good token still works, and the scheme name is case-insensitive.
  t.is((await call(app.url, 'GET', '/v1/workspaces', { token: tenant.token })).status, 200);
  const lower = await call(app.url, 'GET', '/v1/workspaces', {
    headers: { Authorization: `bearer ${tenant.token}` },
  });
  t.is(lower.status, 200, lower.text);
});

test('with the verified-token cache on, expiry, revocation and a wrong secret are still refused', async (t) => {
  // Production caches verified tokens (AUTH_CACHE_TTL_MS); the other tests run with it off.
  const cached = await startTestApp({ authCacheTtlMs: 60_000 });
  try {
    const { db } = cached.services;
    const tenant = await createTenant(db);
    t.is((await call(cached.url, 'GET', '/v1/token', { token: tenant.token })).status, 200);

    // Same prefix, different secret: not answered from the cache.
    const forged = `${tenant.prefix}_${generateToken().token.split('_')[2]!}`;
    assertUnauthorized(
      t,
      await call(cached.url, 'GET', '/v1/token', { token: forged }),
      'invalid_token',
      'forged',
    );

    // Revocation through this process takes effect at once.
    const victim = await createToken(db, tenant, ['audits:read']);
    t.is((await call(cached.url, 'GET', '/v1/token', { token: victim.token })).status, 200);
    const del = await call(
      cached.url,
      'DELETE',
      `/v1/workspaces/${tenant.workspaceId}/tokens/${victim.id}`,
      {
        token: tenant.token,
      },
    );
    t.is(del.status, 200, del.text);
    assertUnauthorized(
      t,
      await call(cached.url, 'GET', '/v1/token', { token: victim.token }),
      'invalid_token',
      'revoked',
    );

    // A self-revocation too.
    const selfish = await createToken(db, tenant, ['audits:read']);
    const selfDel = await call(
      cached.url,
      'DELETE',
      `/v1/workspaces/${tenant.workspaceId}/tokens/${selfish.id}`,
      {
        token: selfish.token,
      },
    );
    t.is(selfDel.status, 200, selfDel.text);
    assertUnauthorized(
      t,
      await call(cached.url, 'GET', '/v1/token', { token: selfish.token }),
      'invalid_token',
      'self-revoked',
    );

    // Natural expiry is checked against the clock on every request, cache or not.
    const short = generateToken();
    await insertToken(db, {
      workspaceId: tenant.workspaceId,
      memberId: tenant.memberId,
      createdByTokenId: null,
      name: 'short-lived',
      prefix: short.prefix,
      secretSha256: short.secretSha256,
      scopes: ['audits:read'],
      expiresAt: new Date(Date.now() + 1500),
    });
    t.is((await call(cached.url, 'GET', '/v1/token', { token: short.token })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1700));
    assertUnauthorized(
      t,
      await call(cached.url, 'GET', '/v1/token', { token: short.token }),
      'invalid_token',
      'expired',
    );
  } finally {
    await cached.close();
  }
});

test('a token without the operation scope gets 403 insufficient_scope naming it', async (t) => {
  const tenant = await createTenant(app.services.db, { scopes: ['audits:read'] });
  const base = `/v1/workspaces/${tenant.workspaceId}`;
  assertForbidden(
    t,
    await call(app.url, 'GET', '/v1/workspaces', { token: tenant.token }),
    'repositories:read',
    'listWorkspaces',
  );
  assertForbidden(
    t,
    await call(app.url, 'GET', base, { token: tenant.token }),
    'repositories:read',
    'getWorkspace',
  );
  assertForbidden(
    t,
    await call(app.url, 'GET', `${base}/members`, { token: tenant.token }),
    'members:read',
    'listMembers',
  );
  assertForbidden(
    t,
    await call(app.url, 'POST', `${base}/repositories`, {
      token: tenant.token,
      body: { name: 'r', url: 'https://git.example/r.git' },
    }),
    'repositories:write',
    'createRepository',
  );

  // A token holding exactly the needed scope passes.
  const reader = await createToken(app.services.db, tenant, ['members:read']);
  const members = await call(app.url, 'GET', `${base}/members`, { token: reader.token });
  t.is(members.status, 200, members.text);
  t.is(members.body.items.length, 1);
  t.is(members.body.items[0].id, tenant.memberId);
  assertForbidden(
    t,
    await call(app.url, 'GET', '/v1/workspaces', { token: reader.token }),
    'repositories:read',
    'reader',
  );
});

test("another tenant's workspace answers 404, never 403, and its data never shows", async (t) => {
  const { db } = app.services;
  const a = await createTenant(db);
  const b = await createTenant(db);
  const made = await call(app.url, 'POST', `/v1/workspaces/${b.workspaceId}/repositories`, {
    token: b.token,
    body: { name: 'b-secret-repo', url: 'https://git.example/b.git' },
  });
  t.is(made.status, 201, made.text);
  const bRepo = made.body.id as string;

  const bWs = `/v1/workspaces/${b.workspaceId}`;
  const cases: Array<[string, string, string, unknown?]> = [
    ['getWorkspace', 'GET', bWs],
    ['listRepositories', 'GET', `${bWs}/repositories`],
    ['getRepository', 'GET', `${bWs}/repositories/${bRepo}`],
    [
      'getRepository via own workspace',
      'GET',
      `/v1/workspaces/${a.workspaceId}/repositories/${bRepo}`,
    ],
    ['listMembers', 'GET', `${bWs}/members`],
    ['listApiTokens', 'GET', `${bWs}/tokens`],
    ['getApiToken', 'GET', `${bWs}/tokens/${b.tokenId}`],
    ['revokeApiToken', 'DELETE', `${bWs}/tokens/${b.tokenId}`],
    ['listAuditEvents', 'GET', `${bWs}/audit-events`],
    ['listActivity', 'GET', `${bWs}/activity`],
    [
      'createRepository',
      'POST',
      `${bWs}/repositories`,
      { name: 'planted', url: 'https://git.example/p.git' },
    ],
  ];
  for (const [label, method, path, body] of cases) {
    const reply = await call(app.url, method, path, { token: a.token, body });
    t.is(reply.status, 404, `${label}: ${reply.text}`);
    t.true(isProblem(reply), label);
    t.is(reply.body.code, 'not_found', label);
    t.false(reply.text.includes('b-secret-repo'), `${label} leaks nothing`);
  }

  // B's workspace looks exactly like one that does not exist.
  const real = await call(app.url, 'GET', bWs, { token: a.token });
  const ghost = await call(app.url, 'GET', '/v1/workspaces/00000000-0000-4000-8000-000000000000', {
    token: a.token,
  });
  t.is(real.status, ghost.status);
  t.is(real.body.code, ghost.body.code);
  t.is(real.body.title, ghost.body.title);

  // A token lacking the scope is refused before tenancy is looked at; the answer is the same
  // for B's workspace and for one that does not exist, so existence does not leak.
  const narrow = await createToken(db, a, ['audits:read']);
  const r1 = await call(app.url, 'GET', bWs, { token: narrow.token });
  const r2 = await call(app.url, 'GET', '/v1/workspaces/00000000-0000-4000-8000-000000000000', {
    token: narrow.token,
  });
  t.is(r1.status, r2.status);
  t.is(r1.body.code, r2.body.code);

  const listed = await call(app.url, 'GET', '/v1/workspaces', { token: a.token });
  t.is(listed.status, 200);
  t.deepEqual(
    (listed.body.items as Array<{ id: string }>).map((w) => w.id),
    [a.workspaceId],
  );
  t.false(listed.text.includes(b.workspaceId));
  const aRepos = await call(app.url, 'GET', `/v1/workspaces/${a.workspaceId}/repositories`, {
    token: a.token,
  });
  t.deepEqual(aRepos.body.items, []);

  // B was not changed: its token works and no repository was planted.
  const bRepos = await call(app.url, 'GET', `${bWs}/repositories`, { token: b.token });
  t.deepEqual(
    (bRepos.body.items as Array<{ name: string }>).map((r) => r.name),
    ['b-secret-repo'],
  );
  const bMe = await call(app.url, 'GET', '/v1/token', { token: b.token });
  t.is(bMe.body.revoked_at, null);
});

test('the contract, the scope list and health are public', async (t) => {
  const contract = await call(app.url, 'GET', '/v1/openapi.json');
  t.is(contract.status, 200);
  t.regex(contract.body.openapi as string, /^3\.1\./);
  t.truthy(contract.body.paths['/v1/workspaces']);

  const scopes = await call(app.url, 'GET', '/v1/scopes');
  t.is(scopes.status, 200);
  const items = scopes.body.items as Array<{ name: string; description: string }>;
  t.is(items.length, 25);
  t.deepEqual(items.map((s) => s.name).sort(), [...SPEC_SCOPES].sort());
  for (const s of items)
    t.true(typeof s.description === 'string' && s.description.length > 0, s.name);

  const health = await call(app.url, 'GET', '/v1/health');
  t.is(health.status, 200, health.text);
  t.is(health.body.db, 'ok');
  t.true(['ok', 'degraded'].includes(health.body.status as string));

  // Public operations do not need a token and are not refused for carrying a bad one.
  for (const path of ['/v1/openapi.json', '/v1/scopes', '/v1/health']) {
    const r = await call(app.url, 'GET', path, { token: generateToken().token });
    t.is(r.status, 200, `${path} with an unknown token`);
  }
  // GET /v1/token is not public.
  assertUnauthorized(
    t,
    await call(app.url, 'GET', '/v1/token'),
    'authentication_required',
    'GET /v1/token',
  );
});

// Rate limits ----------------------------------------------------------------------------------

const POLICY = '"default";q=5;w=60';

function parseRateLimit(
  t: ExecutionContext,
  reply: Reply,
  label: string,
): { r: number; t: number } {
  t.is(reply.headers.get('ratelimit-policy'), POLICY, `${label}: RateLimit-Policy`);
  const header = reply.headers.get('ratelimit') ?? '';
  const m = /^"default";r=(\d+);t=(\d+)$/.exec(header);
  t.truthy(m, `${label}: RateLimit is "${header}"`);
  const reset = Number(m?.[2] ?? -1);
  t.true(reset >= 1 && reset <= 60, `${label}: t=${reset} within the window`);
  return { r: Number(m?.[1] ?? -1), t: reset };
}

async function assertQuota(
  t: ExecutionContext,
  send: (i: number) => Promise<Reply>,
  label: string,
  okStatus: (i: number) => number = () => 200,
) {
  const remaining: number[] = [];
  for (let i = 0; i < 5; i++) {
    const reply = await send(i);
    t.is(reply.status, okStatus(i), `${label} call ${i + 1}: ${reply.text}`);
    remaining.push(parseRateLimit(t, reply, `${label} call ${i + 1}`).r);
  }
  t.deepEqual(remaining, [4, 3, 2, 1, 0], `${label}: remaining counts down`);

  const over = await send(5);
  t.is(over.status, 429, `${label} sixth call: ${over.text}`);
  t.true(isProblem(over), `${label}: 429 is a problem`);
  t.regex(over.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.is(over.body.code, 'rate_limited');
  t.is(over.body.request_id, over.headers.get('x-request-id'));
  const retryAfter = over.headers.get('retry-after') ?? '';
  t.regex(retryAfter, /^\d+$/, `${label}: Retry-After is integer seconds`);
  t.true(
    Number(retryAfter) >= 1 && Number(retryAfter) <= 60,
    `${label}: Retry-After=${retryAfter}`,
  );
  const state = parseRateLimit(t, over, `${label} 429`);
  t.is(state.r, 0);
  t.true(
    Math.abs(state.t - Number(retryAfter)) <= 1,
    'Retry-After agrees with the RateLimit reset',
  );
  // Still refused: refused calls do not reset or extend anything.
  const again = await send(6);
  t.is(again.status, 429);
}

test('each token has its own quota; the sixth call in the window is 429 with Retry-After', async (t) => {
  const tenant = await createTenant(limited.services.db);
  await assertQuota(
    t,
    (i) =>
      call(limited.url, 'GET', '/v1/token', {
        token: tenant.token,
        headers: { 'X-Request-ID': `rl-a-${i}` },
      }),
    'token A',
  );

  // A second token of the same member starts with a full quota, whatever the path answers.
  const other = await createToken(limited.services.db, tenant, ['audits:read']);
  await assertQuota(
    t,
    (i) =>
      i % 2 === 0
        ? call(limited.url, 'GET', '/v1/token', { token: other.token })
        : call(limited.url, 'GET', '/v1/workspaces', { token: other.token }),
    'token B',
    (i) => (i % 2 === 0 ? 200 : 403),
  );

  // Token A is still limited.
  t.is((await call(limited.url, 'GET', '/v1/token', { token: tenant.token })).status, 429);
});

test('unauthenticated calls are counted per client IP, apart from token quotas', async (t) => {
  const tenant = await createTenant(limited.services.db);
  // Every call here comes from 127.0.0.1 without a valid token: public, unknown route,
  // missing token and unknown token all draw on the same per-IP quota.
  const anonymous = [
    () => call(limited.url, 'GET', '/v1/scopes'),
    () => call(limited.url, 'GET', '/v1/no-such-route'),
    () => call(limited.url, 'GET', '/v1/workspaces'),
    () => call(limited.url, 'GET', '/v1/workspaces', { token: generateToken().token }),
    () => call(limited.url, 'GET', '/v1/health'),
    () => call(limited.url, 'GET', '/v1/scopes'),
    () => call(limited.url, 'GET', '/v1/openapi.json'),
  ];
  await assertQuota(
    t,
    (i) => anonymous[i]!(),
    'anonymous',
    (i) => [200, 404, 401, 401, 200][i]!,
  );

  // The token's own quota is untouched by the anonymous traffic from the same IP.
  const withToken = await call(limited.url, 'GET', '/v1/token', { token: tenant.token });
  t.is(withToken.status, 200, withToken.text);
  t.is(parseRateLimit(t, withToken, 'token after anonymous').r, 4);
});

test('the default app also sends RateLimit headers on every response', async (t) => {
  const tenant = await createTenant(app.services.db);
  const replies = [
    await call(app.url, 'GET', '/v1/scopes'),
    await call(app.url, 'GET', '/v1/workspaces', { token: tenant.token }),
    await call(app.url, 'GET', '/v1/workspaces'),
    await call(app.url, 'GET', '/v1/nope'),
  ];
  for (const r of replies) {
    t.regex(r.headers.get('ratelimit-policy') ?? '', /^"default";q=\d+;w=\d+$/);
    t.regex(r.headers.get('ratelimit') ?? '', /^"default";r=\d+;t=\d+$/);
  }
});
