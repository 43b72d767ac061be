/**
 * An audit's effects happen once. Snapshot versions are unique per repository: concurrent audits
 * of one repository get 1..n, the unique index refuses a repeat, and the migration renumbers
 * repeats already stored. A lost completion (an agent attempt that did its work but never
 * reported it: here its artifact insert is held behind a table lock past the heartbeat timeout,
 * so Temporal starts attempt 2 while attempt 1 still finishes) leaves one result per agent, so
 * the snapshot is the one a fault-free audit of the same commit makes.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, queuedAudit, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { slowAgent } from './fixtures/test-agents';
import { insertRepository } from '../db/repositories';
import * as migration from '../db/migrations/20261126010000_snapshot_versions';

let h: AuditHarness;
let repo: TestRepo;

test.before(async () => {
  // The slow agent (4 s, last step of the cloud stage) gives a test time to act mid-attempt.
  h = await startAuditHarness({ extraAgents: [slowAgent] });
  repo = createRepo(SAMPLE_FILES);
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

async function versionsOf(repositoryId: string): Promise<string[]> {
  const rows = await h.app.services
    .db('architecture_snapshots')
    .where({ repository_id: repositoryId })
    .orderBy('generated_at')
    .select('version');
  return rows.map((r: { version: string }) => r.version);
}

test('12 concurrent audits of one repository get snapshot versions 1..12', async (t) => {
  const tenant = await createTenant(h.app.services.db);
  const created = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${tenant.workspaceId}/repositories`,
    { token: tenant.token, body: { name: 'shop', url: `file://${repo.dir}` } },
  );
  const started = await Promise.all(
    Array.from({ length: 12 }, () =>
      call(h.app.url, 'POST', `/v1/workspaces/${tenant.workspaceId}/audits`, {
        token: tenant.token,
        body: { repository_id: created.body.id },
      }),
    ),
  );
  const done = await Promise.all(
    started.map((s) =>
      waitForAudit(h.app.url, tenant.token, tenant.workspaceId, s.body.id, 600_000),
    ),
  );
  t.deepEqual(
    done.map((d) => d.body.status),
    Array(12).fill('completed'),
  );
  const versions = await versionsOf(created.body.id);
  t.deepEqual(
    versions.map(Number).sort((a, b) => a - b),
    Array.from({ length: 12 }, (_, i) => i + 1),
  );
});

/** An audit with a snapshot of `version` written at `minutesAgo`, as an old release did. */
async function storedSnapshot(
  tenant: Tenant,
  repositoryId: string,
  version: string,
  minutesAgo: number,
): Promise<string> {
  const db = h.app.services.db;
  const audit = await queuedAudit(db, tenant, repositoryId);
  await db('architecture_snapshots').insert({
    id: audit.id,
    audit_id: audit.id,
    workspace_id: tenant.workspaceId,
    repository_id: repositoryId,
    version,
    status: 'complete',
    sources: [],
    missing_sources: [],
    source_coverage: 1,
    entity_count: 0,
    relationship_count: 0,
    entities: '[]',
    relationships: '[]',
    generated_at: new Date(Date.now() - minutesAgo * 60_000),
  });
  return audit.id;
}

test.serial(
  'the migration renumbers repeated versions in order, then the index refuses repeats',
  async (t) => {
    const db = h.app.services.db;
    const tenant = await createTenant(db);
    const repository = await insertRepository(db, {
      workspaceId: tenant.workspaceId,
      name: 'legacy',
      url: 'https://example.com/legacy.git',
      defaultBranch: 'main',
      description: null,
    });
    await migration.down(db);
    try {
      // What "count + 1" left: two pairs of repeats.
      const ids = [];
      for (const [version, ago] of [
        ['1', 50],
        ['2', 40],
        ['2', 30],
        ['3', 20],
        ['3', 10],
      ] as const)
        ids.push(await storedSnapshot(tenant, repository.id, version, ago));
      await migration.up(db);
      t.deepEqual(await versionsOf(repository.id), ['1', '2', '3', '4', '5']);
      await migration.down(db);
      await migration.up(db);
      t.deepEqual(await versionsOf(repository.id), ['1', '2', '3', '4', '5'], 'idempotent');
      const error = await t.throwsAsync(storedSnapshot(tenant, repository.id, '5', 0));
      t.regex(error!.message, /architecture_snapshots_repository_version_unique/);
    } finally {
      await migration.up(db).catch(() => undefined);
    }
  },
);

/** Starts an audit of the sample repository in a workspace of its own (no shared agent cache). */
async function startAudit(): Promise<{ tenant: Tenant; auditId: string }> {
  const tenant = await createTenant(h.app.services.db);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  const audit = await call(h.app.url, 'POST', `${ws}/audits`, {
    token: tenant.token,
    body: { repository_id: created.body.id },
  });
  if (audit.status !== 202) throw new Error(`createAudit: ${audit.text}`);
  return { tenant, auditId: audit.body.id };
}

/** What a snapshot says, without the ids and times that differ between audits. */
async function snapshotContent(auditId: string) {
  const db = h.app.services.db;
  const snapshot = await db('architecture_snapshots').where({ audit_id: auditId }).first();
  const evidence = await db('architecture_evidence')
    .where({ snapshot_id: snapshot.id })
    .select('subject_key', 'evidence_kind', 'object_key', 'content_sha256', 'source_ref');
  return {
    entities: snapshot.entity_count,
    relationships: snapshot.relationship_count,
    evidence: evidence
      .map((e: Record<string, string | null>) =>
        [e.subject_key, e.evidence_kind, e.object_key, e.content_sha256].join(' '),
      )
      .sort(),
  };
}

test.serial(
  'an attempt whose completion was lost: one result per agent, the same snapshot',
  async (t) => {
    const clean = await startAudit();
    const cleanDone = await waitForAudit(
      h.app.url,
      clean.tenant.token,
      clean.tenant.workspaceId,
      clean.auditId,
      300_000,
    );
    t.is(cleanDone.body.status, 'completed');

    const db = h.app.services.db;
    const retried = async (auditId: string) =>
      (await db('agent_runs')
        .where({ audit_id: auditId })
        .andWhere('attempt', '>', 1)
        .pluck('agent_key')) as string[];
    // Artifact inserts wait behind a table lock: the agents running then finish their work and
    // stall without heartbeats, so Temporal gives up on their attempts and runs attempt 2; on
    // release both attempts write their results. The lock is taken again at once, stage after
    // stage, until an analyzer (whose evidence reconcile reads) has lost a completion too.
    // An audit that got past its analyzers between two locks (a loaded machine) cannot lose an
    // analyzer's completion any more: the fault is then injected into a fresh audit.
    const ended = async (auditId: string) =>
      ['completed', 'failed', 'cancelled'].includes(
        (await db('audits').where({ id: auditId }).first('status')).status as string,
      );
    let faulty: { tenant: Tenant; auditId: string } | undefined;
    const deadline = Date.now() + 360_000;
    for (
      let seen = 0;
      !(faulty && (await retried(faulty.auditId)).some((k) => k.endsWith('-analyzer')));
    ) {
      let outran = false;
      await db.transaction(async (trx) => {
        await trx.raw('LOCK TABLE agent_artifacts IN SHARE MODE');
        faulty ??= await startAudit();
        while ((await retried(faulty.auditId)).length <= seen) {
          if (Date.now() > deadline) throw new Error('no second attempt started');
          if (await ended(faulty.auditId)) {
            outran = true;
            return;
          }
          await new Promise((r) => setTimeout(r, 200));
        }
        // Attempt 2 is running (it waits for the lock too); then both finish.
        await new Promise((r) => setTimeout(r, 1000));
        seen = (await retried(faulty.auditId)).length;
      });
      if (outran) {
        faulty = undefined;
        seen = 0;
      }
    }
    const done = await waitForAudit(
      h.app.url,
      faulty!.tenant.token,
      faulty!.tenant.workspaceId,
      faulty!.auditId,
      300_000,
    );
    t.is(done.body.status, 'completed');
    const runs = await db('agent_runs')
      .where({ audit_id: faulty!.auditId, status: 'succeeded' })
      .select('agent_key', 'attempt');
    const twice = runs.filter((r: { attempt: number }) => r.attempt > 1);
    t.true(
      twice.some((r: { agent_key: string }) => r.agent_key.endsWith('-analyzer')),
      'the fault happened: an analyzer succeeded in two attempts',
    );
    for (const { agent_key } of twice)
      t.true(
        runs.some(
          (r: { agent_key: string; attempt: number }) =>
            r.agent_key === agent_key && r.attempt === 1,
        ),
        `${agent_key}: attempt 1 succeeded too (its completion was the part lost)`,
      );
    const lost = await db('agent_runs')
      .where({ audit_id: faulty!.auditId, status: 'succeeded' })
      .whereNotNull('error_code')
      .pluck('agent_key');
    t.deepEqual(lost, [], 'a success carries no error code');
    t.deepEqual(await snapshotContent(faulty!.auditId), await snapshotContent(clean.auditId));
  },
);

test.serial(
  'an attempt that succeeded before its completion was lost is not run again: the retry keeps its result',
  async (t) => {
    const db = h.app.services.db;
    const faulty = await startAudit();
    const slowRun = (attempt: number) =>
      db('agent_runs')
        .where({ audit_id: faulty.auditId, agent_key: slowAgent.key, attempt })
        .first('status', 'cache_hit', 'artifact_id');
    const until = async (what: () => Promise<boolean>) => {
      const deadline = Date.now() + 120_000;
      while (!(await what())) {
        if (Date.now() > deadline) throw new Error('timed out');
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await until(async () => (await slowRun(1))?.status === 'running');
    // Stage marks wait behind this lock: the slow agent's attempt 1 succeeds, then stalls on
    // its stage's completion without heartbeats until Temporal gives up on it and starts
    // attempt 2, which finds attempt 1's success.
    await db.transaction(async (trx) => {
      await trx.raw('LOCK TABLE audit_stages IN SHARE MODE');
      await until(async () => (await slowRun(2)) !== undefined);
      await until(async () => (await slowRun(2))?.status !== 'running');
    });
    const done = await waitForAudit(
      h.app.url,
      faulty.tenant.token,
      faulty.tenant.workspaceId,
      faulty.auditId,
      300_000,
    );
    t.is(done.body.status, 'completed');
    const first = await slowRun(1);
    const second = await slowRun(2);
    t.is(first.status, 'succeeded');
    t.like(second, { status: 'succeeded', cache_hit: true, artifact_id: first.artifact_id });
    const logs = await call(
      h.app.url,
      'GET',
      `/v1/workspaces/${faulty.tenant.workspaceId}/audits/${faulty.auditId}/logs`,
      { token: faulty.tenant.token },
    );
    t.true(
      logs.body.items.some((l: { level: string; message: string }) =>
        /slow-test-agent: attempt 1 had succeeded but its completion was lost/.test(l.message),
      ),
    );
  },
);
