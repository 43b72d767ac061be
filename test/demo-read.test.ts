/**
 * The zero-auth demo (DEMO_PUBLIC_READ): without any token, anyone may GET the workspace with
 * slug `demo` and what is in it, with a per-IP quota of its own; writes, people (members, tokens,
 * the audit trail), other workspaces and the workspace list still need a token. Off by default.
 */
import test from 'ava';
import { createWorkspaceWithOwner } from '../platform/bootstrap';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, type Tenant } from './helpers/factories';
import { call, isProblem, type Reply } from './helpers/http';

let app: TestApp;
let off: TestApp;
const demo = { workspaceId: '', token: '', repositoryId: '' };
let other: Tenant;
let otherRepositoryId = '';

/** Makes the `demo` workspace with one repository in `target`'s database. */
async function makeDemo(target: TestApp) {
  const made = await createWorkspaceWithOwner(target.services.db, {
    name: 'Demo',
    slug: 'demo',
    login: 'demo',
  });
  const repo = await call(target.url, 'POST', `/v1/workspaces/${made.workspace.id}/repositories`, {
    token: made.token.token,
    body: { name: 'demo', url: 'https://git.example.com/demo/shop.git' },
  });
  if (repo.status !== 201) throw new Error(repo.text);
  return { workspaceId: made.workspace.id, token: made.token.token, repositoryId: repo.body.id };
}

test.before(async () => {
  [app, off] = await Promise.all([
    startTestApp({ demoPublicRead: true, demoPublicReadQuota: 1000, trustProxy: true }),
    startTestApp(),
  ]);
  Object.assign(demo, await makeDemo(app));
  other = await createTenant(app.services.db);
  const repo = await call(app.url, 'POST', `/v1/workspaces/${other.workspaceId}/repositories`, {
    token: other.token,
    body: { name: 'secret', url: 'https://git.example.com/b/secret.git' },
  });
  otherRepositoryId = repo.body.id;
});
test.after.always(async () => {
  await Promise.all([app?.close(), off?.close()]);
});

const ws = (id = demo.workspaceId) => `/v1/workspaces/${id}`;
let ipCounter = 0;
/** Each test reads from its own client address (TRUST_PROXY), so quotas do not mix. */
const freshIp = () => `198.51.100.${++ipCounter}`;

function anonymous(
  method: string,
  path: string,
  ip: string,
  extra: { body?: unknown; base?: string } = {},
): Promise<Reply> {
  return call(extra.base ?? app.url, method, path, {
    body: extra.body,
    headers: { 'X-Forwarded-For': ip },
  });
}

test('without a token, the demo workspace and its contents can be read', async (t) => {
  const ip = freshIp();
  const workspace = await anonymous('GET', ws(), ip);
  t.is(workspace.status, 200, workspace.text);
  t.is(workspace.body.slug, 'demo');
  const list = await anonymous('GET', `${ws()}/repositories`, ip);
  t.is(list.status, 200, list.text);
  t.deepEqual(
    list.body.items.map((r: { id: string }) => r.id),
    [demo.repositoryId],
  );
  const one = await anonymous('GET', `${ws()}/repositories/${demo.repositoryId}`, ip);
  t.is(one.status, 200);
  for (const path of [
    '/audits',
    '/decisions',
    '/findings',
    '/controls',
    '/audit-schedules',
    '/assistant/usage',
    '/usage',
  ]) {
    const reply = await anonymous('GET', `${ws()}${path}`, ip);
    t.is(reply.status, 200, `${path}: ${reply.text}`);
  }
});

test('without a token, nothing of the demo workspace can be changed, and people are not shown', async (t) => {
  const ip = freshIp();
  const repo = `${ws()}/repositories/${demo.repositoryId}`;
  const writes: Array<[string, string, unknown]> = [
    ['POST', `${ws()}/repositories`, { name: 'x', url: 'https://git.example.com/x.git' }],
    ['PATCH', repo, { description: 'defaced' }],
    ['DELETE', repo, undefined],
    ['POST', `${ws()}/audits`, { repository_id: demo.repositoryId }],
    ['POST', `${ws()}/tokens`, { name: 'mine', scopes: ['audits:read'] }],
    [
      'POST',
      `${ws()}/audit-schedules/preview`,
      { timezone: 'UTC', cadence: 'daily', local_hour: 1, local_minute: 0, count: 1 },
    ],
  ];
  for (const [method, path, body] of writes) {
    const reply = await anonymous(method, path, ip, { body });
    t.is(reply.status, 401, `${method} ${path}: ${reply.text}`);
    t.true(isProblem(reply));
    t.is(reply.body.code, 'authentication_required', `${method} ${path}`);
  }
  for (const path of ['/members', '/tokens', '/audit-events', '/activity']) {
    const reply = await anonymous('GET', `${ws()}${path}`, ip);
    t.is(reply.status, 401, `${path}: ${reply.text}`);
  }
  const after = await call(app.url, 'GET', repo, { token: demo.token });
  t.is(after.body.description, null);
  const list = await call(app.url, 'GET', `${ws()}/repositories`, { token: demo.token });
  t.is(list.body.items.length, 1);
});

test('without a token, no other workspace, no workspace list and no token endpoint can be read', async (t) => {
  const ip = freshIp();
  for (const path of [
    ws(other.workspaceId),
    `${ws(other.workspaceId)}/repositories`,
    `${ws(other.workspaceId)}/repositories/${otherRepositoryId}`,
    '/v1/workspaces',
    '/v1/token',
  ]) {
    const reply = await anonymous('GET', path, ip);
    t.is(reply.status, 401, `${path}: ${reply.text}`);
    t.is(reply.body.code, 'authentication_required', path);
  }
  // The demo's anonymous reader cannot reach another workspace's repository through the demo's path.
  const crossed = await anonymous('GET', `${ws()}/repositories/${otherRepositoryId}`, ip);
  t.is(crossed.status, 404);
  // A token that does not work is refused as before, also on the demo's paths.
  const bad = await call(app.url, 'GET', `${ws()}/repositories`, {
    token: 'aat_nope_nope',
    headers: { 'X-Forwarded-For': ip },
  });
  t.is(bad.status, 401);
  t.is(bad.body.code, 'invalid_token');
});

test('tokenless reads have a per-IP quota of their own; tokens are not affected', async (t) => {
  const limited = await startTestApp({
    demoPublicRead: true,
    demoPublicReadQuota: 3,
    trustProxy: true,
  });
  try {
    const mine = await makeDemo(limited);
    const path = `/v1/workspaces/${mine.workspaceId}/repositories`;
    const statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; i < 5; i++) {
      last = await anonymous('GET', path, '203.0.113.7', { base: limited.url });
      statuses.push(last.status);
    }
    t.deepEqual(statuses, [200, 200, 200, 429, 429]);
    t.is(last!.body.code, 'rate_limited');
    t.truthy(last!.headers.get('retry-after'));
    t.regex(last!.headers.get('ratelimit-policy') ?? '', /q=3;/);
    // Another address still reads; the demo's token is counted apart.
    t.is((await anonymous('GET', path, '203.0.113.8', { base: limited.url })).status, 200);
    const withToken = await call(limited.url, 'GET', path, {
      token: mine.token,
      headers: { 'X-Forwarded-For': '203.0.113.7' },
    });
    t.is(withToken.status, 200);
  } finally {
    await limited.close();
  }
});

test('off by default: the demo workspace needs a token like any other', async (t) => {
  const mine = await makeDemo(off);
  for (const path of [
    `/v1/workspaces/${mine.workspaceId}`,
    `/v1/workspaces/${mine.workspaceId}/repositories`,
  ]) {
    const reply = await anonymous('GET', path, freshIp(), { base: off.url });
    t.is(reply.status, 401, path);
    t.is(reply.body.code, 'authentication_required');
  }
  const withToken = await call(off.url, 'GET', `/v1/workspaces/${mine.workspaceId}/repositories`, {
    token: mine.token,
  });
  t.is(withToken.status, 200);
});
