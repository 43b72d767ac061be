/**
 * Fault: PostgreSQL goes away for 4 s under a steady stream of keyed createAudit requests, each
 * retried with its key until answered. A request caught by the outage answers 503 and its key
 * is settled once the database is back (not left in_progress), so no retry meets 409
 * idempotency_in_progress, and every key made exactly one audit, which completes. The steps the
 * outage caught waited for the database and went on in the same attempt: no agent attempt or
 * stage attempt was spent on it, and each stage's attempt is its agents' (issue 29).
 */
import crypto from 'node:crypto';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from '../helpers/audit-harness';
import { call } from '../helpers/http';
import { proxyToTestDatabase, routedThrough, type CuttableProxy } from '../helpers/proxy';
import { makeWorld, spentAttempts, type World } from './support';

let proxy: CuttableProxy;
let h: AuditHarness;
let w: World;

test.before(async () => {
  proxy = await proxyToTestDatabase();
  h = await startAuditHarness({
    // The production heartbeat timeout: an attempt retried here is one the outage spent, not one
    // a loaded machine's slow heartbeat lost (the harness's 5 s is for failover tests).
    config: {
      authCacheTtlMs: 60_000,
      dependencyOutageBoundSeconds: 300,
      agentHeartbeatTimeoutSeconds: 30,
    },
    route: (url) => routedThrough(proxy, url),
  });
  w = await makeWorld(h);
});

test.after.always(async () => {
  await h?.close();
  await proxy?.cut();
  w?.repo.remove();
});

test('a database outage under keyed load: no 409 storm, one audit per key, all completed', async (t) => {
  const statuses: number[] = [];
  const ids = new Map<string, string>();
  /** One client: sends its key until it gets 202 (or gives up after 60 s). */
  const client = async (key: string) => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const reply = await call(w.url, 'POST', `${w.ws}/audits`, {
        token: w.tenant.token,
        headers: { 'Idempotency-Key': key },
        body: { repository_id: w.repositoryId },
      }).catch(() => ({ status: 0, body: {} as Record<string, unknown> }));
      statuses.push(reply.status);
      if (reply.status === 202) {
        ids.set(key, reply.body.id as string);
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const clients: Promise<void>[] = [];
  const load = (async () => {
    for (let i = 0; i < 24; i++) {
      clients.push(client(crypto.randomUUID()));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  await new Promise((r) => setTimeout(r, 2000));
  await proxy.cut();
  await new Promise((r) => setTimeout(r, 4000));
  await proxy.open();
  await load;
  await Promise.all(clients);

  const count = (s: number) => statuses.filter((x) => x === s).length;
  t.log(
    `answers: ${count(202)} x 202, ${count(503)} x 503, ${count(409)} x 409, ${count(0)} refused`,
  );
  t.true(count(503) > 0, 'the outage was felt');
  t.is(count(409), 0, 'no 409 idempotency_in_progress');
  t.is(ids.size, 24, 'every key got its audit');
  const audits = await h.app.services.db('audits').where({ workspace_id: w.tenant.workspaceId });
  t.is(audits.length, 24, 'one audit per key');
  for (const id of ids.values()) {
    const done = await waitForAudit(w.url, w.tenant.token, w.tenant.workspaceId, id, 240_000);
    t.is(done.body.status, 'completed', id);
  }
  t.true(
    h.app.logs().includes('database unavailable; the step waits for it'),
    'the outage hit running steps',
  );
  const spent = await spentAttempts(h.app.services.db, w.tenant.workspaceId);
  t.deepEqual(spent.retriedAgents, [], 'no agent attempt spent on the outage');
  t.deepEqual(spent.retriedStages, [], 'no stage attempt spent on the outage');
  t.deepEqual(spent.untruthful, [], "each stage's attempt is its agents'");
});
