/**
 * Fault: a worker runs with a tiny MAX_STORED_FILE_BYTES (an operator's mistake, or a limit met
 * by a hostile repository), so its audits list files they do not read. Such an audit resolves
 * no finding it could not see, and nothing it produced is reused by a later audit that reads
 * everything: that audit's snapshot equals a full audit's of the same commit.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from '../helpers/audit-harness';
import { call } from '../helpers/http';
import { spawnWorker, stopProcess } from '../helpers/worker-process';
import { makeWorld, snapshotDigest, startAudit, type World } from './support';

let h: AuditHarness;

test.before(async () => {
  h = await startAuditHarness({ worker: false });
});

test.after.always(async () => {
  await h?.close();
});

/** One audit of the world's repository run by a worker started with `env`, to its end. */
async function auditWith(w: World, env: NodeJS.ProcessEnv) {
  const worker = await spawnWorker(h, env);
  try {
    const id = await startAudit(w);
    const done = await waitForAudit(w.url, w.tenant.token, w.tenant.workspaceId, id, 180_000);
    return done.body as {
      id: string;
      status: string;
      coverage_gaps: Array<{ kind: string }>;
    };
  } finally {
    await stopProcess(worker, 'SIGTERM');
  }
}

async function openFindings(w: World): Promise<string[]> {
  const page = await call(w.url, 'GET', `${w.ws}/findings?status=open&limit=200`, {
    token: w.tenant.token,
  });
  if (page.status !== 200) throw new Error(page.text);
  return (page.body.items as Array<{ id: string }>).map((f) => f.id).sort();
}

const TINY = { MAX_STORED_FILE_BYTES: '16' };

test('an audit that read part of its files resolves nothing and its results are never reused for a full read', async (t) => {
  const reference = await makeWorld(h);
  const w = await makeWorld(h);
  // The reference workspace audits the very same repository (same commit, same evidence).
  await h.app.services
    .db('repositories')
    .where({ id: reference.repositoryId })
    .update({ url: `file://${w.repo.dir}` });
  try {
    // A full audit elsewhere: the snapshot a full read of this commit gives.
    const full = await auditWith(reference, {});
    t.is(full.status, 'completed');
    const expected = await snapshotDigest(reference, full.id);
    t.true(expected.evidence > 0);

    // Partial first: its results would be the cache for the same files' hashes.
    const partial = await auditWith(w, TINY);
    t.is(partial.status, 'completed');
    t.true(
      partial.coverage_gaps.some((g) => g.kind === 'large_files'),
      'the gap is reported',
    );
    t.true((await snapshotDigest(w, partial.id)).evidence < expected.evidence);

    // A full audit of the same commit reuses none of it.
    const normal = await auditWith(w, {});
    t.is(normal.status, 'completed');
    t.false(normal.coverage_gaps.some((g) => g.kind === 'large_files'));
    t.deepEqual(await snapshotDigest(w, normal.id), expected, 'as a full read, not the cache');
    const open = await openFindings(w);
    t.true(open.length > 0, 'the full audit found something');

    // Another partial audit sees none of those findings, and resolves none of them.
    const again = await auditWith(w, TINY);
    t.is(again.status, 'completed');
    t.deepEqual(await openFindings(w), open, 'a partial read resolves nothing');
    const logs = await call(w.url, 'GET', `${w.ws}/audits/${again.id}/logs?limit=200`, {
      token: w.tenant.token,
    });
    t.true(
      logs.body.items.some((l: { message: string }) =>
        l.message.startsWith('findings not observed'),
      ),
      'the audit says why',
    );
  } finally {
    reference.repo.remove();
    w.repo.remove();
  }
});
