/**
 * Snapshot versions are unique per repository: concurrent audits of one repository get 1..n, the
 * unique index refuses a repeat, and the migration renumbers repeats already stored.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, queuedAudit, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { insertRepository } from '../db/repositories';
import * as migration from '../db/migrations/20261126010000_snapshot_versions';

let h: AuditHarness;
let repo: TestRepo;

test.before(async () => {
  h = await startAuditHarness();
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
