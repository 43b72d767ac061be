/**
 * Fault: the worker process is SIGKILLed while three audits are in flight; another worker
 * starts. Every audit completes, nothing is recorded twice, and each snapshot equals the one a
 * fault-free audit of the same commit made.
 */
import test from 'ava';
import { startAuditHarness, type AuditHarness } from '../helpers/audit-harness';
import { spawnWorker, stopProcess } from '../helpers/worker-process';
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

test.before(async () => {
  h = await startAuditHarness({ worker: false });
  w = await makeWorld(h);
});

test.after.always(async () => {
  await h?.close();
  w?.repo.remove();
});

test('a worker killed mid-audit: every audit completes once, snapshots as without the fault', async (t) => {
  const first = await spawnWorker(h);
  let second: Awaited<ReturnType<typeof spawnWorker>> | undefined;
  try {
    const expected = await faultFreeSnapshot(w);

    const ids = await auditsInFlight(w);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    second = await spawnWorker(h);
    await waitAll(w, ids);
    await checkInvariants(t, w, expected);
    const lost = await h.app.services
      .db('agent_runs')
      .whereIn('audit_id', ids)
      .where({ error_code: 'attempt_lost' })
      .count('* as n');
    t.log(`attempts lost with the worker: ${lost[0]!.n}`);
  } finally {
    await stopProcess(first, 'SIGKILL');
    if (second) await stopProcess(second, 'SIGTERM');
  }
});
