/**
 * Retention of old audits (RETENTION_AUDIT_DAYS, RETENTION_KEEP_SNAPSHOTS), run by the
 * RetentionWorkflow the `retention-sweep` schedule starts: real audits of a real repository,
 * made old by moving their completion back; the sweep removes the logs, agent runs and evidence
 * of those nothing needs, and keeps a decision's snapshot, the repository's latest snapshot and
 * recent audits whole. Completed Idempotency-Keys expire after IDEMPOTENCY_KEY_TTL_HOURS.
 */
import crypto from 'node:crypto';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { auditRepository, decisionWorld, propose, type DecisionWorld } from './helpers/decisions';
import { call } from './helpers/http';
import { WORKFLOW_TYPES } from '../domain/contract/workflows';

let h: AuditHarness;
let w: DecisionWorld;

test.before(async () => {
  h = await startAuditHarness({
    config: { retentionAuditDays: 30, retentionKeepSnapshots: 1, idempotencyKeyTtlHours: 24 },
  });
  w = await decisionWorld(h);
});

test.after.always(async () => {
  await h?.close();
  w?.repo.remove();
});

/** What a user can read of an audit's bulk. */
async function bulk(auditId: string) {
  const get = (path: string) =>
    call(h.app.url, 'GET', `${w.ws}/audits/${auditId}${path}`, { token: w.tenant.token });
  const [audit, logs, runs, arch] = await Promise.all([
    get(''),
    get('/logs'),
    get('/agent-runs'),
    get('/architecture'),
  ]);
  return {
    status: audit.body.status as string,
    logs: (logs.body.items as unknown[]).length,
    runs: (runs.body.runs as unknown[]).length,
    evidence: arch.status === 200 ? (arch.body.evidence as unknown[]).length : null,
    entities: arch.status === 200 ? (arch.body.entities as unknown[]).length : null,
  };
}

async function runSweep(): Promise<{ auditsPruned?: number; keysRemoved?: number }> {
  const client = await h.app.services.temporal.client();
  return client.workflow.execute(WORKFLOW_TYPES.retention, {
    taskQueue: h.app.services.config.taskQueue,
    workflowId: `retention-test-${crypto.randomUUID()}`,
    args: [{}],
  });
}

test.serial(
  'old audits lose logs, runs and evidence unless a decision, recency or the latest K need them',
  async (t) => {
    const db = h.app.services.db;
    // A1 (decisionWorld's audit) is the snapshot of a decision; A2 is needed by nothing; A3 is
    // recent; A4 is the repository's latest snapshot; F failed (no snapshot).
    const a1 = (await db('architecture_snapshots').where({ id: w.snapshotId }).first()).audit_id;
    t.is((await propose(w)).status, 201);
    const a2 = (await auditRepository(w)).auditId;
    const a3 = (await auditRepository(w)).auditId;
    const a4 = (await auditRepository(w)).auditId;
    const failed = await call(h.app.url, 'POST', `${w.ws}/audits`, {
      token: w.tenant.token,
      body: { repository_id: w.repositoryId, commit_sha: 'f'.repeat(40) },
    });
    const f = failed.body.id as string;
    t.is(
      (await waitForAudit(h.app.url, w.tenant.token, w.tenant.workspaceId, f)).body.status,
      'failed',
    );

    const before = Object.fromEntries(
      await Promise.all([a1, a2, a3, a4, f].map(async (id) => [id, await bulk(id)] as const)),
    );
    for (const id of [a1, a2, a3, a4]) {
      t.true(before[id]!.logs > 0 && before[id]!.runs > 0 && before[id]!.evidence! > 0);
    }
    t.true(before[f]!.logs > 0);
    // Everything but A3 finished 100 days ago.
    await db('audits')
      .whereIn('id', [a1, a2, a4, f])
      .update({ completed_at: db.raw("now() - interval '100 days'") });

    const result = await runSweep();
    t.is(result.auditsPruned, 2);

    const a2After = await bulk(a2);
    t.deepEqual(a2After, {
      status: 'completed',
      logs: 0,
      runs: 0,
      evidence: 0,
      entities: before[a2]!.entities,
    });
    const fAfter = await bulk(f);
    t.is(fAfter.status, 'failed');
    t.is(fAfter.logs, 0);
    t.is(fAfter.runs, 0);
    for (const id of [a1, a3, a4]) t.deepEqual(await bulk(id), before[id], id);
    // The snapshot history still lists every snapshot.
    const history = await call(
      h.app.url,
      'GET',
      `${w.ws}/repositories/${w.repositoryId}/architecture/snapshots`,
      { token: w.tenant.token },
    );
    t.deepEqual(
      (history.body.items as Array<{ audit_id: string }>).map((s) => s.audit_id).sort(),
      [a1, a2, a3, a4].sort(),
    );
    // Each pruning is on the record.
    const pruned = await db('audit_events').where({ action: 'audit.pruned' }).pluck('resource_id');
    t.deepEqual(pruned.sort(), [a2, f].sort());

    // A second sweep finds nothing more to do.
    t.is((await runSweep()).auditsPruned, 0);
  },
);

test.serial('a completed Idempotency-Key expires after its time to live', async (t) => {
  const db = h.app.services.db;
  const post = (key: string) =>
    call(h.app.url, 'POST', `${w.ws}/audits`, {
      token: w.tenant.token,
      headers: { 'Idempotency-Key': key },
      body: { repository_id: w.repositoryId, commit_sha: 'e'.repeat(40) },
    });
  const first = await post('ttl-key');
  t.is(first.status, 202);
  const replay = await post('ttl-key');
  t.is(replay.body.id, first.body.id);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  // 25 hours later the key is free: the same request makes a new audit.
  await db('idempotency_keys')
    .where({ key: 'ttl-key' })
    .update({ created_at: db.raw("now() - interval '25 hours'") });
  const later = await post('ttl-key');
  t.is(later.status, 202);
  t.not(later.body.id, first.body.id);
  t.is(later.headers.get('idempotent-replayed'), null);

  // The sweep removes expired completed keys and keeps fresh ones.
  t.is((await post('fresh-key')).status, 202);
  await db('idempotency_keys')
    .where({ key: 'ttl-key' })
    .update({ created_at: db.raw("now() - interval '25 hours'") });
  const result = await runSweep();
  t.is(result.keysRemoved, 1);
  t.deepEqual(await db('idempotency_keys').pluck('key'), ['fresh-key']);
  for (const id of [first.body.id, later.body.id])
    await waitForAudit(h.app.url, w.tenant.token, w.tenant.workspaceId, id);
});
