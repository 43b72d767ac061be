/**
 * Dependency outages: the API and the worker reach the real test PostgreSQL through a TCP proxy
 * the test cuts (connections reset, new ones refused) and restores, as a PostgreSQL restart
 * looks to a client. Reads and writes answer 503 database_unavailable with Retry-After (not
 * 500) and the API serves again once the database is back; a running audit rides out an outage
 * shorter than DEPENDENCY_OUTAGE_BOUND_SECONDS and fails with dependency_unavailable past it. A
 * client that hangs up mid-body is logged at debug, not as an error.
 */
import net from 'node:net';
import test from 'ava';
import type { TestApp } from './helpers/app';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { proxyToTestDatabase, routedThrough, type CuttableProxy } from './helpers/proxy';

let h: AuditHarness;
let app: TestApp;
let proxy: CuttableProxy;
let tenant: Tenant;
let repo: TestRepo;

/** The test database's URL with the proxy as its host. */
const viaProxy = (url: string) => routedThrough(proxy, url);

test.before(async () => {
  proxy = await proxyToTestDatabase();
  h = await startAuditHarness({
    config: { authCacheTtlMs: 60_000, dependencyOutageBoundSeconds: 120 },
    route: viaProxy,
  });
  app = h.app;
  tenant = await createTenant(app.services.db);
  repo = createRepo(SAMPLE_FILES);
});

test.after.always(async () => {
  await h?.close();
  await proxy?.cut();
  repo?.remove();
});

/** Starts an audit of the sample repository in `harness`; its id. */
async function startAudit(harness: AuditHarness, owner: Tenant): Promise<string> {
  const ws = `/v1/workspaces/${owner.workspaceId}`;
  const created = await call(harness.app.url, 'POST', `${ws}/repositories`, {
    token: owner.token,
    body: { name: `shop-${Date.now()}`, url: `file://${repo.dir}` },
  });
  const audit = await call(harness.app.url, 'POST', `${ws}/audits`, {
    token: owner.token,
    body: { repository_id: created.body.id },
  });
  if (audit.status !== 202) throw new Error(`createAudit: ${audit.text}`);
  return audit.body.id;
}

/** Cuts the database off for `ms`, then restores it. */
async function outage(ms: number): Promise<void> {
  await proxy.cut();
  try {
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    await proxy.open();
  }
}

test.serial(
  'a 12 s PostgreSQL outage during an audit is ridden out: the audit completes',
  async (t) => {
    const auditId = await startAudit(h, tenant);
    await outage(12_000);
    const done = await waitForAudit(app.url, tenant.token, tenant.workspaceId, auditId, 180_000);
    t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
    t.true(
      app.logs().includes('database unavailable; the step waits for it'),
      'the outage hit a step',
    );
    t.true(app.logs().includes('database answers again; the step is retried'));
  },
);

test.serial(
  'an outage past DEPENDENCY_OUTAGE_BOUND_SECONDS fails the audit with dependency_unavailable',
  async (t) => {
    const short = await startAuditHarness({
      config: { authCacheTtlMs: 60_000, dependencyOutageBoundSeconds: 2 },
      route: viaProxy,
    });
    try {
      const owner = await createTenant(short.app.services.db);
      const auditId = await startAudit(short, owner);
      await outage(8_000);
      const done = await waitForAudit(
        short.app.url,
        owner.token,
        owner.workspaceId,
        auditId,
        180_000,
      );
      t.is(done.body.status, 'failed');
      const row = await short.app.services.db('audits').where({ id: auditId }).first('error_code');
      t.is(row.error_code, 'dependency_unavailable');
      t.regex(short.app.logs(), /"dependency":"database"[^\n]*the step fails/);
    } finally {
      await short.close();
    }
  },
);

const repositories = () => `/v1/workspaces/${tenant.workspaceId}/repositories`;

test.serial(
  'PostgreSQL down: 503 database_unavailable with Retry-After, then service again when it is back',
  async (t) => {
    const before = await call(app.url, 'GET', repositories(), { token: tenant.token });
    t.is(before.status, 200, before.text);

    await proxy.cut();
    try {
      const started = Date.now();
      const read = await call(app.url, 'GET', repositories(), { token: tenant.token });
      t.is(read.status, 503, read.text);
      t.is(read.body.code, 'database_unavailable');
      t.is(read.headers.get('retry-after'), '5');
      t.is(read.headers.get('content-type'), 'application/problem+json');
      t.true(Date.now() - started < 10_000, 'the answer comes at once, not after a pool timeout');
      const write = await call(app.url, 'POST', repositories(), {
        token: tenant.token,
        body: { name: 'shop', url: 'https://example.com/shop.git' },
        headers: { 'Idempotency-Key': 'outage' },
      });
      t.is(write.status, 503, write.text);
      t.is(write.body.code, 'database_unavailable');
      const health = await call(app.url, 'GET', '/v1/health');
      t.is(health.status, 503);
      t.is(health.body.code, 'database_unavailable');
      t.false(app.logs().includes('unhandled error'), 'an outage is not an internal error');
    } finally {
      await proxy.open();
    }

    const after = await call(app.url, 'GET', repositories(), { token: tenant.token });
    t.is(after.status, 200, after.text);
  },
);

test.serial('a client that hangs up mid-body is logged at debug, not as an error', async (t) => {
  const { port } = new URL(app.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    [
      `POST ${repositories()} HTTP/1.1`,
      'Host: 127.0.0.1',
      `Authorization: Bearer ${tenant.token}`,
      'Content-Type: application/json',
      'Content-Length: 1000',
      '',
      '{"name": "sho',
    ].join('\r\n'),
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.destroy();
  const deadline = Date.now() + 5000;
  while (!app.logs().includes('client closed the request') && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  const line = app
    .logs()
    .split('\n')
    .find((l) => l.includes('client closed the request'));
  t.truthy(line, 'the hang-up is logged');
  t.is(JSON.parse(line!).level, 20, 'at debug');
  t.false(app.logs().includes('unhandled error'));
});
