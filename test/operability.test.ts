/**
 * What an operator sees: the Prometheus text a scrape returns after a few requests and one
 * audit (request counts by operation id and status, latency, audits by status, stage durations,
 * agent attempts, the database pool), and liveness distinct from readiness.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { startTestApp } from './helpers/app';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { startMetricsServer, type MetricsServer } from '../platform/metrics';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let metrics: MetricsServer;

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
  metrics = await startMetricsServer(0, '127.0.0.1');
});

test.after.always(async () => {
  await metrics?.close();
  await h?.close();
  repo?.remove();
});

/** The value of the series `name{labels}` in the scrape (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((l) => [l[1], l[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

async function scrape(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${metrics.port}/metrics`);
  if (res.status !== 200) throw new Error(`scrape: ${res.status}`);
  return res.text();
}

test.serial('a scrape counts requests by operation id and status, and the audit', async (t) => {
  const base = h.app.url;
  for (let i = 0; i < 3; i++) t.is((await call(base, 'GET', '/v1/scopes')).status, 200);
  t.is((await call(base, 'GET', '/v1/no-such-thing')).status, 404);
  t.is((await call(base, 'GET', '/v1/token')).status, 401);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const created = await call(base, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  t.is(created.status, 201, created.text);
  const audit = await call(base, 'POST', `${ws}/audits`, {
    token: tenant.token,
    body: { repository_id: created.body.id },
  });
  t.is(audit.status, 202, audit.text);
  const done = await waitForAudit(base, tenant.token, tenant.workspaceId, audit.body.id, 120_000);
  t.is(done.body.status, 'completed');

  const text = await scrape();
  const requests = (labels: Record<string, string>) =>
    sample(text, 'archaudit_http_requests_total', labels);
  t.is(requests({ operation: 'listScopes', method: 'GET', status: '200' }), 3);
  t.is(requests({ operation: 'unmatched', method: 'GET', status: '404' }), 1);
  t.is(requests({ operation: 'getCurrentToken', method: 'GET', status: '401' }), 1);
  t.is(requests({ operation: 'createRepository', method: 'POST', status: '201' }), 1);
  t.is(requests({ operation: 'createAudit', method: 'POST', status: '202' }), 1);
  t.true((requests({ operation: 'getAudit', method: 'GET', status: '200' }) ?? 0) >= 1);
  t.is(
    sample(text, 'archaudit_http_request_duration_seconds_count', {
      operation: 'listScopes',
      status: '200',
    }),
    3,
  );
  t.is(
    sample(text, 'archaudit_http_request_duration_seconds_bucket', {
      operation: 'listScopes',
      status: '200',
      le: '+Inf',
    }),
    3,
  );
  // Audits by status, counted in the database at scrape time.
  t.is(sample(text, 'archaudit_audits', { status: 'completed' }), 1);
  // Every stage of the audit ended once, completed, and was timed.
  for (const stage of ['source', 'inventory', 'code', 'reconcile', 'report']) {
    t.is(
      sample(text, 'archaudit_stage_duration_seconds_count', { stage, status: 'completed' }),
      1,
      stage,
    );
  }
  t.is(
    sample(text, 'archaudit_agent_attempts_total', {
      agent: 'code-inventory',
      outcome: 'succeeded',
    }),
    1,
  );
  // The pools of the API and the worker (one pool here: the harness shares it).
  t.is(sample(text, 'archaudit_db_pool_max', { pool: 'api' }), 10);
  t.is(sample(text, 'archaudit_db_pool_waiters', { pool: 'api' }), 0);
  t.not(sample(text, 'archaudit_db_pool_connections_used', { pool: 'worker' }), undefined);
  // Node's process metrics for memory and descriptors.
  t.true((sample(text, 'archaudit_process_resident_memory_bytes', {}) ?? 0) > 0);
  t.true((sample(text, 'archaudit_process_open_fds', {}) ?? 0) > 0);
});

test.serial('the metrics server answers only GET /metrics', async (t) => {
  const res = await fetch(`http://127.0.0.1:${metrics.port}/v1/scopes`);
  t.is(res.status, 404);
  await res.text();
});

test.serial(
  '/livez says the process is up; /readyz checks the database and Temporal',
  async (t) => {
    const live = await call(h.app.url, 'GET', '/livez');
    t.is(live.status, 200);
    t.deepEqual(live.body, { status: 'ok' });
    const ready = await call(h.app.url, 'GET', '/readyz');
    t.is(ready.status, 200);
    t.deepEqual(ready.body, { status: 'ready', db: 'ok', temporal: 'ok' });
    t.is((await call(h.app.url, 'POST', '/readyz')).status, 405);

    // An API whose Temporal does not answer is alive but not ready (and /v1/health degraded).
    const cut = await startTestApp({ temporalAddress: '127.0.0.1:1' });
    try {
      t.is((await call(cut.url, 'GET', '/livez')).status, 200);
      const notReady = await call(cut.url, 'GET', '/readyz');
      t.is(notReady.status, 503);
      t.deepEqual(notReady.body, { status: 'not_ready', db: 'ok', temporal: 'down' });
      t.is(notReady.headers.get('retry-after'), '5');
      const health = await call(cut.url, 'GET', '/v1/health');
      t.is(health.status, 200);
      t.is(health.body.status, 'degraded');
    } finally {
      await cut.close();
    }
  },
);
