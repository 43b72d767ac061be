/**
 * Input normalisation at the edge, held once by the validation layer for every operation:
 * canonical uuids only (any case, workspace ids included), no NUL or unpaired surrogate in any
 * string or key, integers bounded by the schema; and requests Node's HTTP parser refuses answer
 * problem+json. None of it is a server fault: no error-level log line.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, type Tenant } from './helpers/factories';
import { call, isProblem, type Reply } from './helpers/http';

let app: TestApp;
let tenant: Tenant;
let repositoryId: string;

test.before(async () => {
  app = await startTestApp();
  tenant = await createTenant(app.services.db);
  const repo = await call(app.url, 'POST', `/v1/workspaces/${tenant.workspaceId}/repositories`, {
    token: tenant.token,
    body: { name: 'edge', url: 'https://git.example.com/edge.git' },
  });
  if (repo.status !== 201) throw new Error(repo.text);
  repositoryId = repo.body.id;
});
test.after.always(async () => {
  await app?.close();
});

const ws = (id = tenant.workspaceId) => `/v1/workspaces/${id}`;

function refused(t: ExecutionContext, reply: Reply, where: string, path: string, label: string) {
  t.is(reply.status, 400, `${label}: ${reply.text}`);
  t.true(isProblem(reply), label);
  t.is(reply.body.code, 'validation_failed', label);
  t.true(
    (reply.body.errors as Array<{ in: string; path: string }>).some(
      (e) => e.in === where && e.path === path,
    ),
    `${label} names ${where} ${path}: ${reply.text}`,
  );
}

/** Error-level (50) and fatal (60) pino lines written so far. */
const errorLines = () =>
  app
    .logs()
    .split('\n')
    .filter((l) => /"level":(50|60)/.test(l));

test('uuids: urn:uuid and braces are refused in path, query and body', async (t) => {
  const id = crypto.randomUUID();
  for (const bad of [`urn:uuid:${id}`, `{${id}}`, id.replaceAll('-', '')]) {
    const label = JSON.stringify(bad);
    refused(
      t,
      await call(app.url, 'GET', `${ws()}/repositories/${encodeURIComponent(bad)}`, {
        token: tenant.token,
      }),
      'path',
      '/repository_id',
      `path ${label}`,
    );
    refused(
      t,
      await call(app.url, 'GET', `${ws(encodeURIComponent(bad))}/repositories`, {
        token: tenant.token,
      }),
      'path',
      '/workspace_id',
      `workspace ${label}`,
    );
    refused(
      t,
      await call(app.url, 'GET', `${ws()}/audits?repository_id=${encodeURIComponent(bad)}`, {
        token: tenant.token,
      }),
      'query',
      '/repository_id',
      `query ${label}`,
    );
    refused(
      t,
      await call(app.url, 'POST', `${ws()}/audits`, {
        token: tenant.token,
        body: { repository_id: bad },
      }),
      'body',
      '/repository_id',
      `body ${label}`,
    );
  }
  t.deepEqual(errorLines(), []);
});

test('uuids in upper case work everywhere, workspace ids included', async (t) => {
  const upper = await call(
    app.url,
    'GET',
    `${ws(tenant.workspaceId.toUpperCase())}/repositories/${repositoryId.toUpperCase()}`,
    { token: tenant.token },
  );
  t.is(upper.status, 200, upper.text);
  t.is(upper.body.id, repositoryId);
  const list = await call(app.url, 'GET', `${ws(tenant.workspaceId.toUpperCase())}/repositories`, {
    token: tenant.token,
  });
  t.is(list.status, 200, list.text);
  t.deepEqual(
    list.body.items.map((r: { id: string }) => r.id),
    [repositoryId],
  );
  // Another workspace's id is still 404, in any case.
  const other = await createTenant(app.services.db);
  const foreign = await call(
    app.url,
    'GET',
    `${ws(other.workspaceId.toUpperCase())}/repositories`,
    {
      token: tenant.token,
    },
  );
  t.is(foreign.status, 404, foreign.text);
  t.true(isProblem(foreign));
});

test('NUL and unpaired surrogates are refused in any string, key, path or query value', async (t) => {
  const future = new Date(Date.now() + 86_400_000).toISOString();
  const token = (name: string) => ({ name, scopes: ['audits:read'], expires_at: future });
  const schedule = {
    repository_id: repositoryId,
    timezone: 'UTC',
    cadence: 'daily',
    local_hour: 1,
    local_minute: 0,
  };
  const cases: Array<[string, string, string, unknown, string]> = [
    ['token name with NUL', 'POST', `${ws()}/tokens`, token('a\u0000b'), '/name'],
    ['token name with a lone high surrogate', 'POST', `${ws()}/tokens`, token('a\ud800'), '/name'],
    ['token name with a lone low surrogate', 'POST', `${ws()}/tokens`, token('\udc00z'), '/name'],
    [
      'repository name with NUL',
      'PATCH',
      `${ws()}/repositories/${repositoryId}`,
      { name: 'x\u0000' },
      '/name',
    ],
    [
      'finding note with a lone surrogate',
      'PATCH',
      `${ws()}/findings/${crypto.randomUUID()}`,
      { status: 'accepted_risk', note: 'ok \udfff' },
      '/note',
    ],
    [
      'schedule name with NUL',
      'POST',
      `${ws()}/audit-schedules`,
      { ...schedule, name: 'n\u0000' },
      '/name',
    ],
    [
      'decision title with a lone surrogate',
      'POST',
      `${ws()}/decisions`,
      { title: 'Title \ud834' },
      '/title',
    ],
    [
      "NUL in an open object's key",
      'POST',
      `${ws()}/audits/${crypto.randomUUID()}/attachments`,
      { upload_id: crypto.randomUUID(), 'k\u0000': 1 },
      '/k\u0000',
    ],
    [
      'NUL in an array item',
      'POST',
      `${ws()}/tokens`,
      { ...token('t'), scopes: ['audits:read\u0000'] },
      '/scopes/0',
    ],
  ];
  for (const [label, method, path, body, at] of cases) {
    const reply = await call(app.url, method, path, { token: tenant.token, body });
    t.is(reply.status, 400, `${label}: ${reply.text}`);
    t.true(isProblem(reply), label);
    const errors = reply.body.errors as Array<{ in: string; path: string; message: string }>;
    t.true(
      errors.some((e) => e.in === 'body' && e.path === at && /NUL.*surrogate/.test(e.message)),
      `${label}: ${reply.text}`,
    );
  }
  // The token name case must be the text rule itself, not a by-product.
  const named = await call(app.url, 'POST', `${ws()}/tokens`, {
    token: tenant.token,
    body: token('a\u0000b'),
  });
  t.deepEqual(named.body.errors, [
    {
      in: 'body',
      path: '/name',
      message: 'must not contain NUL characters or unpaired UTF-16 surrogates',
    },
  ]);
  // Path and query values.
  refused(
    t,
    await call(app.url, 'GET', `${ws()}/audits/logs%00`, { token: tenant.token }),
    'path',
    '/audit_id',
    'NUL in a path id',
  );
  refused(
    t,
    await call(app.url, 'GET', `${ws()}/repositories?cursor=a%00b`, { token: tenant.token }),
    'query',
    '/cursor',
    'NUL in a query value',
  );
  // JSON nested beyond any contract shape is refused on depth, wherever it is.
  const deep = await call(app.url, 'POST', `${ws()}/audits/${crypto.randomUUID()}/attachments`, {
    token: tenant.token,
    raw: `{"upload_id":"${crypto.randomUUID()}","x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    headers: { 'Content-Type': 'application/json' },
  });
  t.is(deep.status, 400, deep.text);
  t.regex(deep.body.errors[0].message, /must not nest deeper than 64 levels/);
  // A surrogate pair is fine (it is one character).
  const pair = await call(app.url, 'PATCH', `${ws()}/repositories/${repositoryId}`, {
    token: tenant.token,
    body: { description: 'rocket \ud83d\ude80' },
  });
  t.is(pair.status, 200, pair.text);
  t.is(pair.body.description, 'rocket \u{1F680}');
  t.deepEqual(errorLines(), []);
});

test('versions above the integer range are 400 from validation, consistently', async (t) => {
  for (const [label, path, body] of [
    ['profile', `${ws()}/audit-profiles/${crypto.randomUUID()}`, { name: 'p', branch_ref: 'main' }],
    ['schedule', `${ws()}/audit-schedules/${crypto.randomUUID()}`, { name: 's' }],
  ] as const) {
    for (const expected of [2 ** 31, 2 ** 53, 1e300]) {
      const reply = await call(app.url, label === 'profile' ? 'PUT' : 'PATCH', path, {
        token: tenant.token,
        body: { ...body, expected_version: expected },
      });
      refused(t, reply, 'body', '/expected_version', `${label} expected_version ${expected}`);
    }
    // The largest stored version passes validation: the missing resource answers.
    const max = await call(app.url, label === 'profile' ? 'PUT' : 'PATCH', path, {
      token: tenant.token,
      body: { ...body, expected_version: 2 ** 31 - 1 },
    });
    t.is(max.status, 404, `${label}: ${max.text}`);
  }
  t.deepEqual(errorLines(), []);
});

/** Sends raw bytes on a new connection and reads everything until the server closes it. */
function raw(bytes: string): Promise<string> {
  const { port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.setTimeout(5000, () => socket.destroy());
    socket.end(bytes);
  });
}

function parseResponse(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [
      l.slice(0, l.indexOf(':')).toLowerCase(),
      l.slice(l.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

test('requests the HTTP parser refuses answer problem+json, without an error-level log', async (t) => {
  const host = `Host: 127.0.0.1\r\n`;
  const cases: Array<[string, string, number, string]> = [
    [
      'a URL over 16 KB',
      `GET /v1/scopes?x=${'a'.repeat(17 * 1024)} HTTP/1.1\r\n${host}\r\n`,
      431,
      'headers_too_large',
    ],
    [
      'Content-Length with Transfer-Encoding',
      `POST ${ws()}/repositories HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      400,
      'malformed_request',
    ],
    [
      'a header without a colon',
      `GET /v1/scopes HTTP/1.1\r\n${host}NoColonHere\r\n\r\n`,
      400,
      'malformed_request',
    ],
    [
      'a bad chunk size',
      `POST ${ws()}/repositories HTTP/1.1\r\n${host}Authorization: Bearer ${tenant.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      400,
      '',
    ],
  ];
  for (const [label, bytes, status, code] of cases) {
    const reply = parseResponse(await raw(bytes));
    t.is(reply.status, status, `${label}: ${reply.body}`);
    t.regex(reply.headers['content-type'] ?? '', /^application\/problem\+json/, label);
    const body = JSON.parse(reply.body) as Record<string, unknown>;
    t.is(body.status, status, label);
    if (code) t.is(body.code, code, label);
    t.is(typeof body.request_id, 'string', label);
    t.is(typeof body.hint, 'string', label);
  }
  t.deepEqual(errorLines(), []);
});

test('a client that goes away mid-body is logged at debug, not as an error', async (t) => {
  const { port } = new URL(app.url);
  await new Promise<void>((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST ${ws()}/repositories HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`,
      );
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 200);
    });
  });
  await new Promise((r) => setTimeout(r, 300));
  const lines = app.logs().split('\n');
  t.true(
    lines.some((l) => /"level":20,.*"request aborted by the client"/.test(l)),
    'the abort is logged at debug',
  );
  // A request that was answered is logged at info as usual, bodies read or not.
  const answered = await call(app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'x' },
    headers: { 'X-Request-ID': 'answered-after-abort' },
  });
  t.is(answered.status, 400);
  const line = app
    .logs()
    .split('\n')
    .find((l) => l.includes('"request_id":"answered-after-abort"') && l.includes('"status":400'));
  t.regex(line ?? '', /"level":30,.*"msg":"request"/);
  t.deepEqual(errorLines(), []);
});
