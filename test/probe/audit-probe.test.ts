/**
 * The hostile probe's repository through the real worker (issue 24): one docker-compose.yml of
 * 10,000 services, each naming another in an environment URL and in `depends_on`, audited with
 * the default budgets. What a user reads over the API: the audit ends (no stage fails with
 * `Maximum call stack size exceeded`), the snapshot holds every service and edge, and the
 * dependency cycle through every service is a failed control; the 10,000 findings carry bounded
 * details (an assessment's rationale names every failing check: copied whole into each finding
 * it made gigabytes of statement text and ran the worker out of memory). A second audit of the
 * same commit sees every finding again (one more occurrence each, none new, none resolved).
 * Run by `npm run test:probe` (and CI), not `npm test`: it takes minutes, and a worker that ran
 * out of memory must not take the other tests down with it. It logs the process's peak RSS.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from '../helpers/audit-harness';
import { createTenant } from '../helpers/factories';
import { createRepo, type TestRepo } from '../helpers/git';
import { call } from '../helpers/http';
import { largeComposeText } from '../helpers/large-compose';
import { STORED_TEXT_LIMIT } from '../../domain/text';

let h: AuditHarness;
let large: TestRepo;

test.before(async () => {
  // The production heartbeat timeout (the harness's 5 s is for fast failover tests): on a
  // loaded 2-core machine, handing 50,000 evidence records between steps takes seconds.
  h = await startAuditHarness({ config: { agentHeartbeatTimeoutSeconds: 30 } });
  large = createRepo({ 'docker-compose.yml': largeComposeText(10_000) });
});

test.after.always(async () => {
  await h?.close();
  large?.remove();
});

test("the probe's repository: 10,000 services audited to the end, no stack overflow, the cycle found", async (t) => {
  t.timeout(900_000, 'the 10,000-service audit');
  const tenant = await createTenant(h.app.services.db);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const get = (p: string) => call(h.app.url, 'GET', `${ws}${p}`, { token: tenant.token });
  const repo = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'probe', url: `file://${large.dir}` },
  });
  t.is(repo.status, 201, repo.text);
  // The peak RSS of this process (API, worker and test), sampled every second.
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 1000);
  t.teardown(() => clearInterval(sampler));
  const audit = async () => {
    const started = await call(h.app.url, 'POST', `${ws}/audits`, {
      token: tenant.token,
      body: { repository_id: repo.body.id },
    });
    t.is(started.status, 202, started.text);
    const id = started.body.id as string;
    const t0 = Date.now();
    const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, id, 900_000);
    t.log(`audit ${id}: ${done.body.status} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    return { id, done };
  };
  const { id, done } = await audit();
  const logs = (await get(`/audits/${id}/logs?limit=200`)).body.items as any[];
  t.false(
    logs.some((l) => /Maximum call stack/.test(`${l.message} ${JSON.stringify(l.details ?? {})}`)),
  );
  t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
  for (const key of ['cloud', 'reconcile', 'controls'])
    t.like(
      done.body.stages.find((s: any) => s.key === key),
      { status: 'completed', attempt: 1 },
      key,
    );
  const truth = await get(`/audits/${id}/architecture`);
  t.is(truth.body.entity_count, 10_000);
  t.is(truth.body.relationship_count, 20_000);
  // No code or CI files: the snapshot says so rather than claiming to be complete.
  t.is(truth.body.status, 'partial');
  t.deepEqual(truth.body.missing_sources, ['code', 'cicd']);
  const assessments = await get(`/audits/${id}/assessments?limit=200`);
  t.is(assessments.status, 200, assessments.text);
  const cycle = assessments.body.items.find(
    (a: any) => a.control_key === 'no-service-dependency-cycle',
  );
  t.is(cycle?.status, 'fail');

  // Every finding's detail is bounded; the resource-limit findings are there, one per service.
  const limits = () => get('/findings?control_key=containers-resource-limits&limit=200');
  const first = await limits();
  t.is(first.status, 200, first.text);
  t.is(first.body.items.length, 200);
  for (const f of first.body.items as any[]) t.true(f.detail.length <= STORED_TEXT_LIMIT);
  const db = h.app.services.db;
  const findings = async () =>
    (await db('findings')
      .where({ workspace_id: tenant.workspaceId })
      .select(db.raw('count(*)::int AS n, sum(occurrences)::int AS seen'))
      .first()) as { n: number; seen: number };
  const once = await findings();
  t.true(once.n >= 10_000, `${once.n} findings`);
  t.is(once.seen, once.n);

  // The same commit again: every finding seen a second time, in batched writes.
  const again = await audit();
  t.is(again.done.body.status, 'completed', JSON.stringify(again.done.body.stages));
  t.deepEqual(await findings(), { n: once.n, seen: 2 * once.n });
  for (const f of (await limits()).body.items as any[]) {
    t.is(f.occurrences, 2);
    t.is(f.last_seen_audit_id, again.id);
    t.is(f.status, 'open');
  }
  t.log(`peak RSS of the test process: ${(peak / 1048576).toFixed(0)} MiB`);
});
