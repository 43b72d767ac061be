/**
 * Fault: PostgreSQL goes away for 10 s (every connection reset, new ones refused, as in a
 * restart) while three audits are in flight. Every audit completes, nothing is recorded twice,
 * each snapshot equals the one a fault-free audit of the same commit made, and the outage spent
 * no attempt: the steps it caught waited and went on in the same attempt (issue 29).
 */
import test from 'ava';
import { startAuditHarness, type AuditHarness } from '../helpers/audit-harness';
import { proxyToTestDatabase, routedThrough, type CuttableProxy } from '../helpers/proxy';
import {
  auditsInFlight,
  checkInvariants,
  faultFreeSnapshot,
  makeWorld,
  spentAttempts,
  waitAll,
  type World,
} from './support';

let h: AuditHarness;
let w: World;
let proxy: CuttableProxy;

test.before(async () => {
  proxy = await proxyToTestDatabase();
  h = await startAuditHarness({
    // The production heartbeat timeout: a retried attempt is then one the outage spent.
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

test('PostgreSQL restarted mid-audit: every audit completes once, snapshots as without the fault', async (t) => {
  const expected = await faultFreeSnapshot(w);

  const ids = await auditsInFlight(w);
  await proxy.cut();
  await new Promise((r) => setTimeout(r, 10_000));
  await proxy.open();
  await waitAll(w, ids);
  await checkInvariants(t, w, expected);
  t.true(
    h.app.logs().includes('database unavailable; the step waits for it'),
    'the outage hit a step',
  );
  const spent = await spentAttempts(h.app.services.db, w.tenant.workspaceId);
  t.deepEqual(spent.retriedAgents, [], 'no agent attempt spent on the outage');
  t.deepEqual(spent.retriedStages, [], 'no stage attempt spent on the outage');
  t.deepEqual(spent.untruthful, [], "each stage's attempt is its agents'");
});
