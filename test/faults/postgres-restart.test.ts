/**
 * Fault: PostgreSQL goes away for 10 s (every connection reset, new ones refused, as in a
 * restart) while three audits are in flight. Every audit completes, nothing is recorded twice,
 * and each snapshot equals the one a fault-free audit of the same commit made.
 */
import test from 'ava';
import { startAuditHarness, type AuditHarness } from '../helpers/audit-harness';
import { proxyToTestDatabase, routedThrough, type CuttableProxy } from '../helpers/proxy';
import {
  auditsInFlight,
  checkInvariants,
  faultFreeSnapshot,
  makeWorld,
  waitAll,
  type World,
} from './support';

let h: AuditHarness;
let w: World;
let proxy: CuttableProxy;

test.before(async () => {
  proxy = await proxyToTestDatabase();
  h = await startAuditHarness({
    config: { authCacheTtlMs: 60_000, dependencyOutageBoundSeconds: 300 },
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
});
