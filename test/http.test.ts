/** HTTP behaviour shared by every operation: problem bodies, request ids, limits, methods. */
import crypto from 'node:crypto';
import test from 'ava';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, type Tenant } from './helpers/factories';
import { call, isProblem, type Reply } from './helpers/http';

let app: TestApp;
let tenant: Tenant;

test.before(async () => {
  app = await startTestApp({ bodyLimitBytes: 4096 });
  tenant = await createTenant(app.services.db);
});
test.after.always(async () => {
  await app?.close();
});

const repos = () => `/v1/workspaces/${tenant.workspaceId}/repositories`;

test('a client X-Request-ID is echoed on success and carried in problem bodies', async (t) => {
  const ok = await call(app.url, 'GET', '/v1/scopes', {
    headers: { 'X-Request-ID': 'client-req.1:a' },
  });
  t.is(ok.status, 200);
  t.is(ok.headers.get('x-request-id'), 'client-req.1:a');

  const missing = await call(app.url, 'GET', '/v1/nope', {
    headers: { 'X-Request-ID': 'trace-404' },
  });
  t.is(missing.status, 404);
  t.true(isProblem(missing));
  t.is(missing.body.code, 'not_found');
  t.is(missing.body.request_id, 'trace-404');
  t.is(missing.headers.get('x-request-id'), 'trace-404');
  t.true(app.logs().includes('"request_id":"trace-404"'));
});

test('a missing or ill-formed X-Request-ID is replaced by a generated UUID', async (t) => {
  const plain = await call(app.url, 'GET', '/v1/scopes');
  t.regex(plain.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const bad = await call(app.url, 'GET', '/v1/scopes', {
    headers: { 'X-Request-ID': 'has space' },
  });
  t.regex(bad.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const long = await call(app.url, 'GET', '/v1/scopes', {
    headers: { 'X-Request-ID': 'x'.repeat(201) },
  });
  t.not(long.headers.get('x-request-id'), 'x'.repeat(201));
  const edge = await call(app.url, 'GET', '/v1/scopes', {
    headers: { 'X-Request-ID': 'y'.repeat(200) },
  });
  t.is(edge.headers.get('x-request-id'), 'y'.repeat(200));
});

test('every error path answers problem+json with the request id that was sent', async (t) => {
  const rid = { 'X-Request-ID': 'errs-1' };
  const cases: Array<[string, Promise<Reply>, number, string]> = [
    ['no token', call(app.url, 'GET', repos(), { headers: rid }), 401, 'authentication_required'],
    [
      'bad token',
      call(app.url, 'GET', repos(), { headers: rid, token: 'aat_nope' }),
      401,
      'invalid_token',
    ],
    ['unknown route', call(app.url, 'GET', '/v1/unknown', { headers: rid }), 404, 'not_found'],
    [
      'wrong method',
      call(app.url, 'PUT', '/v1/scopes', { headers: rid }),
      405,
      'method_not_allowed',
    ],
    [
      'malformed json',
      call(app.url, 'POST', repos(), {
        token: tenant.token,
        raw: '{"name": ',
        headers: { ...rid, 'Content-Type': 'application/json' },
      }),
      400,
      'malformed_json',
    ],
    [
      'wrong content type',
      call(app.url, 'POST', repos(), {
        token: tenant.token,
        raw: 'name=x',
        headers: { ...rid, 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported_media_type',
    ],
    [
      'too large',
      call(app.url, 'POST', repos(), {
        token: tenant.token,
        body: { name: 'x', url: 'https://h/r', description: 'd'.repeat(5000) },
        headers: rid,
      }),
      413,
      'payload_too_large',
    ],
    [
      'unknown property',
      call(app.url, 'POST', repos(), {
        token: tenant.token,
        body: { name: 'ok', url: 'https://git.example/r.git', colour: 'red' },
        headers: rid,
      }),
      400,
      'unknown_property',
    ],
    [
      'validation',
      call(app.url, 'POST', repos(), { token: tenant.token, body: { name: '' }, headers: rid }),
      400,
      'validation_failed',
    ],
    [
      'missing body',
      call(app.url, 'POST', repos(), { token: tenant.token, headers: rid }),
      400,
      'validation_failed',
    ],
    [
      'bad path uuid',
      call(app.url, 'GET', `${repos()}/not-a-uuid`, { token: tenant.token, headers: rid }),
      400,
      'validation_failed',
    ],
    [
      'unknown query parameter',
      call(app.url, 'GET', `${repos()}?colour=red`, { token: tenant.token, headers: rid }),
      400,
      'unknown_property',
    ],
  ];
  for (const [name, pending, status, code] of cases) {
    const reply = await pending;
    t.is(reply.status, status, name);
    t.true(isProblem(reply), `${name}: ${reply.text}`);
    t.is(reply.body.code, code, name);
    t.is(reply.body.request_id, 'errs-1', name);
    t.is(reply.body.type, `/v1/problems/${code}`, name);
    t.truthy(reply.headers.get('ratelimit'), `${name} carries RateLimit`);
  }
});

test('the unknown property is named in the problem', async (t) => {
  const reply = await call(app.url, 'POST', repos(), {
    token: tenant.token,
    body: { name: 'ok', url: 'https://git.example/r.git', colour: 'red' },
  });
  t.is(reply.body.code, 'unknown_property');
  t.deepEqual(reply.body.errors, [
    { in: 'body', path: '/colour', message: 'is not a known property' },
  ]);
  t.regex(reply.body.detail, /colour/);
});

test('validation reports every problem with its path, not only the first', async (t) => {
  const reply = await call(app.url, 'POST', repos(), {
    token: tenant.token,
    body: { name: '', url: 5, default_branch: 'x'.repeat(256) },
  });
  t.is(reply.status, 400);
  const paths = [
    ...new Set((reply.body.errors as Array<{ path: string }>).map((e) => e.path)),
  ].sort();
  t.deepEqual(paths, ['/default_branch', '/name', '/url']);
});

test('a body at the size limit is read; one byte over is 413', async (t) => {
  const base = { name: 'sized', url: 'https://git.example/sized.git', description: '' };
  const overhead = JSON.stringify(base).length;
  const atLimit = JSON.stringify({ ...base, description: 'd'.repeat(4096 - overhead) });
  t.is(Buffer.byteLength(atLimit), 4096);
  const over = JSON.stringify({ ...base, description: 'd'.repeat(4097 - overhead) });
  const r1 = await call(app.url, 'POST', repos(), {
    token: tenant.token,
    raw: over,
    headers: { 'Content-Type': 'application/json' },
  });
  t.is(r1.status, 413);
  // 4096 bytes passes the body limit and then fails the schema's description bound (2000).
  const r2 = await call(app.url, 'POST', repos(), {
    token: tenant.token,
    raw: atLimit,
    headers: { 'Content-Type': 'application/json' },
  });
  t.is(r2.status, 400);
  t.is(r2.body.errors[0].path, '/description');
});

test('405 lists the allowed methods', async (t) => {
  const reply = await call(app.url, 'DELETE', '/v1/health');
  t.is(reply.status, 405);
  t.regex(reply.headers.get('allow') ?? '', /GET/);
});

test('405 also where another route has the same method and path length', async (t) => {
  // PUT routes with five segments exist (audit profiles), none on a repository.
  const reply = await call(
    app.url,
    'PUT',
    `/v1/workspaces/${tenant.workspaceId}/repositories/${crypto.randomUUID()}`,
    { token: tenant.token },
  );
  t.is(reply.status, 405);
  t.is(reply.body.code, 'method_not_allowed');
  t.deepEqual((reply.headers.get('allow') ?? '').split(/,\s*/).sort(), [
    'DELETE',
    'GET',
    'HEAD',
    'PATCH',
  ]);
});

test('a 500 never leaks internals and carries the request id', async (t) => {
  // Break the database under one request: a dropped table is a real server-side failure.
  const { db } = app.services;
  await db.raw('ALTER TABLE activity_feed RENAME TO activity_feed_gone');
  try {
    const reply = await call(app.url, 'GET', `/v1/workspaces/${tenant.workspaceId}/activity`, {
      token: tenant.token,
      headers: { 'X-Request-ID': 'boom-1' },
    });
    t.is(reply.status, 500);
    t.true(isProblem(reply));
    t.is(reply.body.code, 'internal');
    t.is(reply.body.request_id, 'boom-1');
    t.false(reply.text.includes('activity_feed'), 'no SQL or stack in the body');
    t.false(reply.text.includes('at '), 'no stack trace');
  } finally {
    await db.raw('ALTER TABLE activity_feed_gone RENAME TO activity_feed');
  }
});
