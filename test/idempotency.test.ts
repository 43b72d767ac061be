/**
 * Idempotency-Key under real concurrency and crashes: parallel POSTs at the test pool, one key
 * sent concurrently, a reused key, the API process killed between committing an audit and
 * starting its workflow (then the key retried), and the recovery sweep starting a queued audit
 * that has no workflow. Real PostgreSQL, Temporal and HTTP; the API is a separate process where
 * it is killed.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import type { TestApp } from './helpers/app';
import { createTenant, queuedAudit, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { spawnApi, stopProcess } from './helpers/worker-process';
import type { AuditRecoveryWorkflow } from '../workflows/recovery';

/** No worker: audits stay queued, so what is measured is the API, PostgreSQL and Temporal. */
let h: AuditHarness;
let repo: TestRepo;

test.before(async () => {
  h = await startAuditHarness({
    worker: false,
    config: { idempotencyWaitMs: 1000, idempotencyClaimTimeoutSeconds: 3 },
  });
  repo = createRepo(SAMPLE_FILES);
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

async function tenantWithRepository(
  app: TestApp = h.app,
): Promise<{ tenant: Tenant; repositoryId: string }> {
  const tenant = await createTenant(app.services.db);
  const created = await call(app.url, 'POST', `/v1/workspaces/${tenant.workspaceId}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  if (created.status !== 201) throw new Error(`createRepository: ${created.text}`);
  return { tenant, repositoryId: created.body.id };
}

function createAudit(base: string, tenant: Tenant, body: unknown, key: string) {
  return call(base, 'POST', `/v1/workspaces/${tenant.workspaceId}/audits`, {
    token: tenant.token,
    body,
    headers: { 'Idempotency-Key': key },
  });
}

async function auditCount(workspaceId: string): Promise<number> {
  const [row] = await h.app.services
    .db('audits')
    .where({ workspace_id: workspaceId })
    .count<{ count: number }[]>('* as count');
  return row!.count;
}

/** Sends `n` createAudit requests at once (keyed or not); their replies and the timings. */
async function parallelPosts(n: number, keyed: boolean) {
  const { tenant, repositoryId } = await tenantWithRepository();
  const started = Date.now();
  const replies = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const t0 = Date.now();
      const reply = await call(h.app.url, 'POST', `/v1/workspaces/${tenant.workspaceId}/audits`, {
        token: tenant.token,
        body: { repository_id: repositoryId },
        headers: keyed ? { 'Idempotency-Key': `parallel-${i}` } : {},
      });
      return { reply, ms: Date.now() - t0 };
    }),
  );
  const wall = Date.now() - started;
  const slowest = Math.max(...replies.map((r) => r.ms));
  return { tenant, replies: replies.map((r) => r.reply), wall, slowest };
}

for (const n of [40, 200]) {
  test.serial(`${n} parallel idempotent POSTs with distinct keys all answer 202`, async (t) => {
    // The same load without keys first, for scale (the machine's load varies between runs).
    const plain = await parallelPosts(n, false);
    t.deepEqual(
      plain.replies.filter((r) => r.status !== 202).map((r) => r.text),
      [],
    );
    const keyed = await parallelPosts(n, true);
    t.deepEqual(
      keyed.replies.filter((r) => r.status !== 202).map((r) => r.text),
      [],
    );
    t.is(new Set(keyed.replies.map((r) => r.body.id)).size, n);
    t.is(await auditCount(keyed.tenant.workspaceId), n);
    t.true(keyed.slowest < 30_000, `slowest reply took ${keyed.slowest} ms`);
    t.log(
      `${n} POSTs (db pool 10): with keys wall ${keyed.wall} ms, slowest ${keyed.slowest} ms; ` +
        `without keys wall ${plain.wall} ms, slowest ${plain.slowest} ms`,
    );
  });
}

test.serial('the same key sent 10 times at once makes exactly one audit', async (t) => {
  const { tenant, repositoryId } = await tenantWithRepository();
  const replies = await Promise.all(
    Array.from({ length: 10 }, () =>
      createAudit(h.app.url, tenant, { repository_id: repositoryId }, 'same-key'),
    ),
  );
  for (const reply of replies) {
    t.true(
      reply.status === 202 ||
        (reply.status === 409 && reply.body.code === 'idempotency_in_progress'),
      reply.text,
    );
    if (reply.status === 409) t.truthy(reply.headers.get('retry-after'));
  }
  const accepted = replies.filter((r) => r.status === 202);
  t.true(accepted.length >= 1);
  t.is(new Set(accepted.map((r) => r.body.id)).size, 1);
  t.is(accepted.filter((r) => r.headers.get('idempotent-replayed') !== 'true').length, 1);
  t.is(await auditCount(tenant.workspaceId), 1);
  // A later repeat replays the stored answer.
  const later = await createAudit(h.app.url, tenant, { repository_id: repositoryId }, 'same-key');
  t.is(later.status, 202);
  t.is(later.body.id, accepted[0]!.body.id);
  t.is(later.headers.get('idempotent-replayed'), 'true');
});

test.serial('a key reused with another body is 422 idempotency_key_reused', async (t) => {
  const { tenant, repositoryId } = await tenantWithRepository();
  const first = await createAudit(h.app.url, tenant, { repository_id: repositoryId }, 'reused');
  t.is(first.status, 202);
  const other = await createAudit(
    h.app.url,
    tenant,
    { repository_id: repositoryId, branch_ref: 'feature' },
    'reused',
  );
  t.is(other.status, 422, other.text);
  t.is(other.body.code, 'idempotency_key_reused');
  t.is(other.headers.get('content-type'), 'application/problem+json');
  t.is(await auditCount(tenant.workspaceId), 1);
});

test.serial(
  'a failed request releases its key: the corrected retry with the key works',
  async (t) => {
    const { tenant, repositoryId } = await tenantWithRepository();
    const missing = crypto.randomUUID();
    const bad = await createAudit(h.app.url, tenant, { repository_id: missing }, 'released');
    t.is(bad.status, 400);
    const again = await createAudit(h.app.url, tenant, { repository_id: missing }, 'released');
    t.is(again.status, 400, 'a failure is not stored: the same request is evaluated again');
    const good = await createAudit(h.app.url, tenant, { repository_id: repositoryId }, 'fresh');
    t.is(good.status, 202);
  },
);

test.serial(
  'the API killed after committing an audit: the key is in progress, then a retry finishes the same audit',
  async (t) => {
    const { tenant, repositoryId } = await tenantWithRepository();
    // A Temporal address that accepts connections and never answers: the killed API is caught
    // between its commit and its workflow start.
    const sockets: net.Socket[] = [];
    const blackHole = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r));
    const port = (blackHole.address() as net.AddressInfo).port;
    const api = await spawnApi({
      DATABASE_URL: h.app.database.url,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      TEMPORAL_TASK_QUEUE: h.app.services.config.taskQueue,
    });
    try {
      const pending = createAudit(api.url, tenant, { repository_id: repositoryId }, 'crash-key');
      const db = h.app.services.db;
      const deadline = Date.now() + 20_000;
      while ((await auditCount(tenant.workspaceId)) === 0) {
        if (Date.now() > deadline) throw new Error('the API process never committed the audit');
        await new Promise((r) => setTimeout(r, 20));
      }
      await stopProcess(api.child, 'SIGKILL');
      await t.throwsAsync(pending, undefined, 'the client saw the connection drop');

      const [audit] = await db('audits').where({ workspace_id: tenant.workspaceId });
      t.is(audit.status, 'queued');
      const claim = await db('idempotency_keys')
        .where({ workspace_id: tenant.workspaceId, key: 'crash-key' })
        .first();
      t.is(claim.state, 'in_progress');
      t.is(claim.resource_id, audit.id, 'the audit was made with the id reserved by the key');

      // While the claim is fresh, a retry is told to come back.
      const early = await createAudit(
        h.app.url,
        tenant,
        { repository_id: repositoryId },
        'crash-key',
      );
      if (early.status === 409) {
        t.is(early.body.code, 'idempotency_in_progress');
        t.is(early.headers.get('retry-after'), '1');
      } else t.is(early.status, 202, early.text);

      // Once the claim is stale, the retry takes it over and finishes the same audit.
      let retried = early;
      while (retried.status === 409) {
        await new Promise((r) => setTimeout(r, 500));
        retried = await createAudit(
          h.app.url,
          tenant,
          { repository_id: repositoryId },
          'crash-key',
        );
      }
      t.is(retried.status, 202, retried.text);
      t.is(retried.body.id, audit.id);
      t.is(await auditCount(tenant.workspaceId), 1, 'one audit for one key');
      const client = await h.app.services.temporal.client();
      const described = await client.workflow.getHandle(`audit-${audit.id}`).describe();
      t.is(described.status.name, 'RUNNING');
      const replay = await createAudit(
        h.app.url,
        tenant,
        { repository_id: repositoryId },
        'crash-key',
      );
      t.is(replay.headers.get('idempotent-replayed'), 'true');
      t.is(replay.body.id, audit.id);
      t.true(h.app.logs().includes('took over an idempotency key'));
    } finally {
      await stopProcess(api.child, 'SIGKILL');
      for (const s of sockets) s.destroy();
      blackHole.close();
    }
  },
);

test.serial('the recovery sweep starts a queued audit that has no workflow', async (t) => {
  // A harness of its own, with a worker: the audit runs to the end once started.
  const w = await startAuditHarness();
  try {
    const { tenant, repositoryId } = await tenantWithRepository(w.app);
    const db = w.app.services.db;
    // What a crash between commit and start leaves: queued audits, no workflow.
    const audit = await db.transaction((trx) => queuedAudit(trx, tenant, repositoryId));
    const fresh = await db.transaction((trx) => queuedAudit(trx, tenant, repositoryId));
    await db('audits')
      .where({ id: audit.id })
      .update({ created_at: db.raw("now() - interval '10 minutes'") });

    const client = await w.app.services.temporal.client();
    const sweep = () =>
      client.workflow.execute<typeof AuditRecoveryWorkflow>('AuditRecoveryWorkflow', {
        taskQueue: w.app.services.config.taskQueue,
        workflowId: `recovery-${crypto.randomUUID()}`,
        args: [{ graceSeconds: 120 }],
      });
    t.deepEqual(await sweep(), { started: 1, running: 0, failed: 0 }, 'the fresh one waits');
    const done = await waitForAudit(w.app.url, tenant.token, tenant.workspaceId, audit.id);
    t.is(done.body.status, 'completed');
    const untouched = await db('audits').where({ id: fresh.id }).first('status');
    t.is(untouched.status, 'queued', 'an audit inside the grace period is left alone');
    t.deepEqual(await sweep(), { started: 0, running: 0, failed: 0 });
  } finally {
    await w.close();
  }
});
