/**
 * Fault: SIGTERM to a worker in the middle of an audit (a deploy, `docker stop`). The worker
 * stops polling and lets its running activities finish within SHUTDOWN_GRACE_SECONDS; an agent
 * attempt still running then is cut off as a retryable `worker_shutdown` failure and runs again
 * on the other worker at once, not after the heartbeat timeout. No attempt is recorded
 * `cancelled` or `attempt_lost`, and the audit completes.
 */
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { startAuditHarness, waitForAudit, type AuditHarness } from '../helpers/audit-harness';
import { spawnWorker, stopProcess } from '../helpers/worker-process';
import { makeWorld, startAudit, type World } from './support';

let h: AuditHarness;
let w: World;
const HEARTBEAT_TIMEOUT_S = 30;

test.before(async () => {
  // A long heartbeat timeout: a retry that waited for it would be seen.
  h = await startAuditHarness({
    worker: false,
    config: { agentHeartbeatTimeoutSeconds: HEARTBEAT_TIMEOUT_S },
  });
  w = await makeWorld(h);
});

test.after.always(async () => {
  await h?.close();
  w?.repo.remove();
});

test('SIGTERM mid-audit: the worker drains, a cut-off attempt is retried at once, nothing cancelled or lost', async (t) => {
  const db = h.app.services.db;
  // The first worker's slow agent outlasts its grace; the second one's is quick.
  const first = await spawnWorker(h, { SLOW_AGENT_MS: '60000', SHUTDOWN_GRACE_SECONDS: '3' });
  let second: ChildProcess | undefined;
  try {
    const id = await startAudit(w);
    const deadline = Date.now() + 120_000;
    while (
      !(await db('agent_runs')
        .where({ audit_id: id, agent_key: 'slow-test-agent', status: 'running' })
        .first()) &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 100));
    second = await spawnWorker(h, { SLOW_AGENT_MS: '500' });

    const exited = new Promise<number | null>((r) => first.once('exit', (code) => r(code)));
    const termAt = Date.now();
    first.kill('SIGTERM');
    const code = await exited;
    const drainMs = Date.now() - termAt;
    t.log(`worker exited ${code} after ${drainMs} ms`);
    t.is(code, 0, 'the worker exits cleanly');
    t.true(drainMs < 20_000, 'within its grace and force time');

    const done = await waitForAudit(w.url, w.tenant.token, w.tenant.workspaceId, id, 180_000);
    t.is(done.body.status, 'completed');
    const runs = await db('agent_runs').where({ audit_id: id }).orderBy(['agent_key', 'attempt']);
    t.deepEqual(
      runs.filter((r) => r.status === 'cancelled' || r.error_code === 'attempt_lost'),
      [],
      'no attempt cancelled or lost',
    );
    const slow = runs.filter((r) => r.agent_key === 'slow-test-agent');
    t.deepEqual(
      slow.map((r) => [r.attempt, r.status, r.error_code]),
      [
        [1, 'failed', 'worker_shutdown'],
        [2, 'succeeded', null],
      ],
    );
    const retriedAfterMs = new Date(slow[1].started_at).getTime() - termAt;
    t.log(`attempt 2 started ${retriedAfterMs} ms after SIGTERM`);
    t.true(retriedAfterMs < HEARTBEAT_TIMEOUT_S * 1000, 'retried before any heartbeat timeout');
    const cloud = done.body.stages.find((s: { key: string }) => s.key === 'cloud');
    t.is(cloud.attempt, 2, "the stage's attempt counts its agent's");
  } finally {
    await stopProcess(first, 'SIGKILL');
    if (second) await stopProcess(second, 'SIGTERM');
  }
});
