/**
 * Fault: the worker fetching an audit's source is frozen (SIGSTOP) past the heartbeat timeout,
 * so Temporal starts the `source` step's attempt 2 on the other worker, then thawed (SIGCONT).
 * Each attempt has its own scratch folder; the resumed attempt finds it is stale and stops
 * without writing: the audit completes with the fault-free snapshot, its `source` stage says
 * attempt 2, and no folder is left behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from '../helpers/audit-harness';
import { createRepo, SAMPLE_FILES } from '../helpers/git';
import { call } from '../helpers/http';
import { spawnWorker, stopProcess } from '../helpers/worker-process';
import { checkInvariants, makeWorld, snapshotDigest, startAudit, type World } from './support';

let h: AuditHarness;
let w: World;

test.before(async () => {
  h = await startAuditHarness({ worker: false });
  w = await makeWorld(h);
  // Enough files that reading them takes a while: time to freeze the worker inside the step.
  const filler: Record<string, string> = {};
  for (let i = 0; i < 800; i++) filler[`docs/notes/n${i}.md`] = `# note ${i}\n${'x'.repeat(400)}\n`;
  w.repo.remove();
  w.repo = createRepo({ ...SAMPLE_FILES, ...filler });
  await h.app.services
    .db('repositories')
    .where({ id: w.repositoryId })
    .update({
      url: `file://${w.repo.dir}`,
    });
});

test.after.always(async () => {
  await h?.close();
  w?.repo.remove();
});

/**
 * The first attempt folder of `auditId` (`<attempt>-<pid>-<hex>`) once it appears, with the pid
 * of the process that owns it.
 */
async function firstFolder(auditId: string, timeoutMs = 60_000) {
  const parent = path.join(h.app.services.config.workDir, auditId);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const names = fs.existsSync(parent) ? fs.readdirSync(parent) : [];
    for (const name of names) {
      const match = /^1-(\d+)-[0-9a-f]+$/.exec(name);
      if (match) return { dir: path.join(parent, name), pid: Number(match[1]) };
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error('no attempt folder appeared');
}

test('a worker frozen in `source` past its heartbeat: the resumed attempt stands down, the audit completes', async (t) => {
  const a = await spawnWorker(h);
  const b = await spawnWorker(h);
  let out = '';
  for (const child of [a, b]) child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const reference = await startAudit(w);
    await waitForAudit(w.url, w.tenant.token, w.tenant.workspaceId, reference, 120_000);
    const expected = await snapshotDigest(w, reference);

    // The step is short: freeze its worker as soon as its folder appears, and try again with a
    // fresh audit when the step had already ended (its folder gone) by the time the stop landed.
    let id = '';
    let frozen: typeof a | undefined;
    for (let i = 0; i < 8 && !frozen; i++) {
      id = await startAudit(w);
      const folder = await firstFolder(id);
      const owner = [a, b].find((c) => c.pid === folder.pid);
      t.truthy(owner, 'the folder names the process that owns it');
      owner!.kill('SIGSTOP');
      if (fs.existsSync(folder.dir)) frozen = owner;
      else {
        owner!.kill('SIGCONT');
        await waitForAudit(w.url, w.tenant.token, w.tenant.workspaceId, id, 120_000);
      }
    }
    t.truthy(frozen, 'a worker was frozen inside the source step');
    // Past the heartbeat timeout (5 s) Temporal gives up on attempt 1 and schedules attempt 2
    // (to the other worker, or to a poll the frozen one had open); then the worker resumes.
    const client = await h.app.services.temporal.client();
    const handle = client.workflow.getHandle(`audit-${id}`);
    const deadline = Date.now() + 60_000;
    let scheduled = 0;
    while (scheduled < 2 && Date.now() < deadline) {
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      scheduled = Math.max(
        0,
        ...pending
          .filter((p) => p.activityType?.name === 'acquireSource')
          .map((p) => p.attempt ?? 0),
      );
      await new Promise((r) => setTimeout(r, 100));
    }
    t.true(scheduled >= 2, 'attempt 2 was scheduled while attempt 1 was frozen');
    frozen!.kill('SIGCONT');

    const done = await waitForAudit(w.url, w.tenant.token, w.tenant.workspaceId, id, 120_000);
    t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
    t.true(done.body.stages.find((s: { key: string }) => s.key === 'source').attempt >= 2);
    await checkInvariants(t, w, expected);

    // The resumed attempt said it stood down, and removed its own folder (nobody else's).
    const until = Date.now() + 30_000;
    while (!out.includes('attempt superseded') && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
    t.true(out.includes('attempt superseded'), 'the stale attempt stopped');
    const parent = path.join(h.app.services.config.workDir, id);
    while (fs.existsSync(parent) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
    t.false(fs.existsSync(parent), 'no scratch folder left');
    const logs = await call(w.url, 'GET', `${w.ws}/audits/${id}/logs`, { token: w.tenant.token });
    t.deepEqual(
      logs.body.items.filter((l: { level: string }) => l.level === 'error'),
      [],
      'no error in the audit log',
    );
  } finally {
    a.kill('SIGCONT');
    b.kill('SIGCONT');
    await stopProcess(a, 'SIGKILL');
    await stopProcess(b, 'SIGKILL');
  }
});
