/**
 * Settling an audit's findings at its completion, on a real database (issue 24 / 26): the
 * statements do not grow per finding (2,500 findings resolved in a handful of statements, with
 * an audit event for each and one activity item for the audit); a retried settle writes nothing
 * twice; each audit's observations keep the status it saw, so the earlier audit's report rows
 * stay as they were when a later audit resolves its findings.
 */
import crypto from 'node:crypto';
import test from 'ava';
import type { Knex } from 'knex';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { createTenant, queuedAudit, type Tenant } from './helpers/factories';
import { insertRepository } from '../db/repositories';
import { updateAudit } from '../db/audits';
import { ensureCatalog, insertAssessments, insertNewFindings } from '../db/controls';
import { findingsAsObserved, linkAuditFindings } from '../db/findings';
import { settleFindings } from '../activities/controls';
import * as migration from '../db/migrations/20261130010000_finding_observations';

let tdb: TestDatabase;
let db: Knex;
let tenant: Tenant;
let repositoryId: string;

test.before(async () => {
  tdb = await createTestDatabase();
  db = tdb.db;
  tenant = await createTenant(db);
  const repository = await insertRepository(db, {
    workspaceId: tenant.workspaceId,
    name: 'many-findings',
    url: 'https://example.com/many.git',
    defaultBranch: 'main',
    description: null,
  });
  repositoryId = repository.id;
});

test.after.always(async () => {
  await tdb?.drop();
});

/** A completed audit with one assessment (settling needs the controls stage to have run). */
async function completed(createdAt: Date) {
  const audit = await queuedAudit(db, tenant, repositoryId);
  await updateAudit(db, audit.id, { status: 'completed', completed_at: new Date() });
  await db('audits').where({ id: audit.id }).update({ created_at: createdAt });
  const control = (await ensureCatalog(db)).get('owners-declared')!;
  await insertAssessments(db, [
    {
      id: crypto.randomUUID(),
      audit_id: audit.id,
      workspace_id: tenant.workspaceId,
      control_id: control.id,
      mapping_version_id: control.mapping_version_id,
      control_key: control.key,
      title: control.title,
      description: control.description,
      domain: control.domain,
      severity: control.severity,
      status: 'fail',
      calculation_version: control.catalog_version,
      input_hash: 'x',
      rationale: 'seeded',
      applicability: 'applicable',
      applicability_rationale: null,
      confidence: '0.90',
      evidence_ids: [],
      finding_ids: [],
      architecture_relationship_ids: [],
      stale_evidence_ids: [],
      conflicting_evidence_ids: [],
      missing_requirement_keys: [],
      exception_id: null,
      requirements: [],
      overlay_version: 0,
      calculated_at: new Date(),
      created_at: new Date(),
    },
  ]);
  return { ...audit, created_at: createdAt };
}

/** Runs `work` counting the statements it sends. */
async function counting<T>(work: () => Promise<T>): Promise<{ result: T; statements: number }> {
  let statements = 0;
  const count = () => (statements += 1);
  db.on('query', count);
  try {
    return { result: await work(), statements };
  } finally {
    db.removeListener('query', count);
  }
}

test.serial(
  'settling 2,500 findings: a few statements, an event per finding, one activity item, once',
  async (t) => {
    const N = 2500;
    const first = await completed(new Date(Date.now() - 60_000));
    const control = (await ensureCatalog(db)).get('owners-declared')!;
    const now = new Date();
    const rows = Array.from({ length: N }, (_, i) => ({
      id: crypto.randomUUID(),
      workspace_id: tenant.workspaceId,
      repository_id: repositoryId,
      scope_key: repositoryId,
      control_id: control.id,
      control_key: control.key,
      severity: 'low',
      title: `No owners for component ${i}`,
      detail: 'seeded',
      fingerprint: crypto.createHash('sha256').update(`f${i}`).digest('hex'),
      status: 'open' as const,
      entity_key: `service:s${i}`,
      evidence_ids: [`ev-${i}`],
      locations: [{ path: `s${i}/README.md`, start_line: 1, end_line: 1 }],
      first_seen_audit_id: first.id,
      last_seen_audit_id: first.id,
      first_seen_at: now,
      last_seen_at: now,
      occurrences: 1,
    }));
    await insertNewFindings(db, rows);
    await linkAuditFindings(
      db,
      first,
      rows.map((r) => ({
        finding_id: r.id,
        severity: r.severity,
        title: r.title,
        detail: r.detail,
        entity_key: r.entity_key,
        evidence_ids: r.evidence_ids,
        locations: r.locations,
      })),
    );
    t.is(await db.transaction((trx) => settleFindings(trx, first.id)), 0, 'it saw them all');

    // A later whole-source audit observed none of them: all resolved.
    const second = await completed(new Date());
    const { result, statements } = await counting(() =>
      db.transaction((trx) => settleFindings(trx, second.id)),
    );
    t.is(result, N);
    t.log(`${statements} statements for ${N} findings`);
    t.true(statements <= 15, `${statements} statements for ${N} findings`);
    const open = await db('findings')
      .where({ workspace_id: tenant.workspaceId, status: 'open' })
      .count<{ n: string }[]>('* as n');
    t.is(Number(open[0]!.n), 0);

    const events = await db('audit_events').where({
      workspace_id: tenant.workspaceId,
      action: 'finding.resolved',
    });
    t.is(events.length, N, 'an audit event per finding');
    t.is(new Set(events.map((e) => e.resource_id)).size, N);
    t.like(events.find((e) => e.resource_id === rows[7]!.id)!.details, {
      audit_id: second.id,
      title: rows[7]!.title,
      changes: { status: { from: 'open', to: 'resolved' } },
    });
    const feed = await db('activity_feed').where({
      workspace_id: tenant.workspaceId,
      action: 'findings.resolved',
    });
    t.is(feed.length, 1, 'one activity item for the audit');
    t.like(feed[0], { resource_type: 'audit', resource_id: second.id, actor_login: 'system' });
    t.is(feed[0].details.count, N);
    t.is(feed[0].details.finding_ids.length, 100, 'the item lists a bounded number of ids');

    // A retried settle (the audit's end written again) resolves and records nothing twice.
    t.is(await db.transaction((trx) => settleFindings(trx, second.id)), 0);
    t.is(
      (
        await db('audit_events').where({
          workspace_id: tenant.workspaceId,
          action: 'finding.resolved',
        })
      ).length,
      N,
    );
    t.is(
      (await db('activity_feed').where({ workspace_id: tenant.workspaceId })).filter(
        (r) => r.action === 'findings.resolved',
      ).length,
      1,
    );

    // The first audit's rows: as it saw them, open, although a later audit resolved them.
    const observed = await findingsAsObserved(db, first.id);
    t.is(observed.length, N);
    t.true(observed.every((f) => f.status === 'open'));
    const seven = observed.find((f) => f.id === rows[7]!.id)!;
    t.deepEqual(seven.evidence_ids, ['ev-7']);
    t.is(seven.entity_key, 'service:s7');

    // A person's triage still shows in the earlier audit's (draft) report rows.
    await db('findings').where({ id: rows[8]!.id }).update({ status: 'false_positive' });
    const after = await findingsAsObserved(db, first.id);
    t.is(after.find((f) => f.id === rows[8]!.id)!.status, 'false_positive');
  },
);

test.serial(
  'the migration backfills older observations from the finding rows as they stand',
  async (t) => {
    const first = await completed(new Date(Date.now() - 30_000));
    const control = (await ensureCatalog(db)).get('owners-declared')!;
    const id = crypto.randomUUID();
    const now = new Date();
    await insertNewFindings(db, [
      {
        id,
        workspace_id: tenant.workspaceId,
        repository_id: repositoryId,
        scope_key: repositoryId,
        control_id: control.id,
        control_key: control.key,
        severity: 'low',
        title: 'No CODEOWNERS file',
        detail: 'seeded before observations were kept',
        fingerprint: crypto.randomBytes(32).toString('hex'),
        status: 'open',
        entity_key: null,
        evidence_ids: ['ev-old'],
        locations: [],
        first_seen_audit_id: first.id,
        last_seen_audit_id: first.id,
        first_seen_at: now,
        last_seen_at: now,
        occurrences: 1,
      },
    ]);
    await migration.down(db);
    try {
      // What an audit wrote before: the link only.
      await db('audit_findings').insert({
        audit_id: first.id,
        finding_id: id,
        workspace_id: tenant.workspaceId,
      });
      // A later audit resolved it.
      const later = await completed(new Date());
      await db('findings')
        .where({ id })
        .update({ status: 'resolved', resolved_audit_id: later.id, resolved_at: new Date() });
    } finally {
      await migration.up(db);
    }
    const row = await db('audit_findings').where({ audit_id: first.id, finding_id: id }).first();
    t.like(row, {
      severity: 'low',
      title: 'No CODEOWNERS file',
      detail: 'seeded before observations were kept',
      status: 'open',
    });
    t.deepEqual(row.evidence_ids, ['ev-old']);
    const [observed] = await findingsAsObserved(db, first.id);
    t.like(observed, { id, status: 'open', severity: 'low' });
  },
);
