/**
 * `npm run bench:changes`: the diff and gate of two snapshots of 5,000 entities and 20,000
 * relationships with 1 % changed (targets: < 200 ms p50 in process, getArchitectureChanges end
 * to end < 500 ms p50).
 *
 * In process: evaluateChanges (diff, service cycles before and after, every default rule) with
 * the default policy, no decisions and no findings. End to end: the two snapshots stored in a
 * real PostgreSQL (BENCH_DATABASE_URL, else an embedded one) as two completed audits of one
 * repository, and GET .../architecture/changes through the real API (auth, validation, response
 * checks off as in production). BENCH_RUNS (default 20) runs each; prints p50, p95 and the load.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { createServices } from '../api/services';
import { startApi } from '../api/server';
import { insertSnapshot } from '../db/architecture';
import { createAuditRecord, updateAudit } from '../db/audits';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { insertRepository } from '../db/repositories';
import { DEFAULT_GATE_POLICY } from '../domain/changes/gate';
import { evaluateChanges, type SnapshotRecord } from '../domain/changes/service';
import { createWorkspaceWithOwner } from '../platform/bootstrap';
import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { TemporalGateway } from '../platform/temporal';
import { benchDatabaseUrl, intEnv } from './env';

const ENTITIES = 5000;
const RELATIONSHIPS = 20000;

const KINDS = ['service', 'service', 'service', 'datastore', 'queue', 'external'];

function entity(i: number, version = 1) {
  const kind = KINDS[i % KINDS.length]!;
  return {
    canonical_key: `${kind}:n${i}`,
    kind,
    name: `n${i}`,
    attributes: { port: 8000 + (i % 100), image: `registry.example/n${i}:${version}` },
    confidence: '0.85',
    evidence_ids: [crypto.randomUUID()],
    sources: ['cloud', 'code'],
    contradictions: [],
    first_observed_at: '2026-11-01T00:00:00.000Z',
    last_observed_at: '2026-11-01T00:00:00.000Z',
  };
}

function relationship(s: number, t: number) {
  const source = entity(s).canonical_key;
  const target = entity(t).canonical_key;
  return {
    canonical_key: `connects_to:${source}->${target}`,
    source_key: source,
    target_key: target,
    kind: 'connects_to',
    attributes: {},
    confidence: '0.80',
    evidence_ids: [crypto.randomUUID()],
    sources: ['code'],
    contradictions: [],
    first_observed_at: '2026-11-01T00:00:00.000Z',
    last_observed_at: '2026-11-01T00:00:00.000Z',
  };
}

/** Two graphs: the second has 1 % of entities and relationships added, removed or changed. */
function graphs() {
  const before = Array.from({ length: ENTITIES }, (_, i) => entity(i));
  const rels: ReturnType<typeof relationship>[] = [];
  for (let i = 0; rels.length < RELATIONSHIPS; i++) {
    const s = i % ENTITIES;
    const t = (s * 31 + Math.floor(i / ENTITIES) * 97 + 1) % ENTITIES;
    if (s !== t) rels.push(relationship(s, t));
  }
  const relsBefore = [...new Map(rels.map((r) => [r.canonical_key, r])).values()];
  const step = 100; // 1 %
  const after = before
    .filter((_, i) => i % (step * 3) !== 1) // removed
    .map((e, i) => (i % (step * 3) === 2 ? { ...entity(Number(e.name.slice(1)), 2) } : e)); // changed
  for (let i = 0; i < ENTITIES / (step * 3); i++) after.push(entity(ENTITIES + i)); // added
  const relsAfter = relsBefore.filter((_, i) => i % (step * 2) !== 1);
  for (let i = 0; i < relsBefore.length / (step * 2); i++)
    relsAfter.push(relationship(ENTITIES + (i % 10), i % ENTITIES));
  return { before, relsBefore, after, relsAfter };
}

const pct = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
};

async function main(): Promise<number> {
  const runs = intEnv('BENCH_RUNS', 20);
  const g = graphs();
  const record = (id: string, auditId: string, entities: unknown[], relationships: unknown[]) =>
    ({
      id,
      audit_id: auditId,
      workspace_id: 'w',
      repository_id: 'r',
      sources: ['cloud', 'code'],
      source_coverage: '0.6667',
      entities,
      relationships,
      generated_at: new Date(),
    }) as unknown as SnapshotRecord;
  const prev = record('p', 'a1', g.before, g.relsBefore);
  const curr = record('c', 'a2', g.after, g.relsAfter);
  const store = {
    policy: async () => ({ policy: DEFAULT_GATE_POLICY, version: 0 }),
    assessments: async () => [],
    decisions: async () => [],
    uncertainties: async () => [],
  };
  const inProcess: number[] = [];
  let changes = 0;
  let outcome = '';
  for (let i = 0; i < runs + 2; i++) {
    const t = performance.now();
    const r = await evaluateChanges(store, curr, prev, []);
    if (i >= 2) inProcess.push(performance.now() - t);
    changes = r.gate.items.length;
    outcome = r.gate.outcome;
  }
  console.log(
    `bench:changes  ${ENTITIES} entities / ${g.relsBefore.length} relationships, ${changes} changes (${outcome}); ${runs} runs; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${os.cpus().length} CPUs`,
  );
  console.log(
    `in process   diff + gate          p50 ${pct(inProcess, 0.5).toFixed(1)} ms  p95 ${pct(inProcess, 0.95).toFixed(1)} ms  (target < 200 ms p50)`,
  );

  const cleanups: Array<() => Promise<void>> = [];
  try {
    const databaseUrl = await benchDatabaseUrl(cleanups);
    const db: Knex = createDb(databaseUrl);
    cleanups.push(() => db.destroy());
    await migrateLatest(db);
    const { workspace, member, token } = await createWorkspaceWithOwner(db, {
      name: 'Benchmark',
      slug: `bench-${crypto.randomBytes(4).toString('hex')}`,
      login: 'bench',
      days: 1,
    });
    if (process.env.BENCH_DATABASE_URL)
      cleanups.push(async () => void (await db('workspaces').where({ id: workspace.id }).del()));
    const repo = await insertRepository(db, {
      workspaceId: workspace.id,
      name: 'bench',
      url: 'https://example.invalid/bench.git',
      defaultBranch: 'main',
      description: null,
    });
    for (const [i, [entities, relationships]] of [
      [g.before, g.relsBefore],
      [g.after, g.relsAfter],
    ].entries()) {
      const audit = await createAuditRecord(
        db,
        {
          workspace_id: workspace.id,
          repository_id: repo.id,
          upload_id: null,
          created_by: member.id,
          audit_type: 'repository',
          branch_ref: 'main',
          commit_sha: crypto.randomBytes(20).toString('hex'),
          deep_review: false,
          source_scope: {},
          origin: 'manual',
          origin_ref: null,
          trigger_reason: null,
          profile_snapshot: null,
        } as never,
        { actorId: member.id, actorLogin: 'bench', tokenId: null, requestId: 'bench' } as never,
      );
      await updateAudit(db, audit.id, { status: 'completed', completed_at: new Date() });
      await insertSnapshot(db, {
        id: crypto.randomUUID(),
        audit_id: audit.id,
        workspace_id: workspace.id,
        repository_id: repo.id,
        version: String(i + 1),
        status: 'complete',
        sources: ['cloud', 'code'],
        missing_sources: ['cicd'],
        source_coverage: '0.6667',
        entity_count: entities!.length,
        relationship_count: relationships!.length,
        entities: entities!,
        relationships: relationships!,
        generated_at: new Date(Date.now() + i * 1000).toISOString(),
      });
    }
    const config = {
      ...loadConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_QUOTA: '100000000' }),
      databaseUrl,
      temporalAddress: '127.0.0.1:1',
    };
    const temporal = new TemporalGateway(config.temporalAddress, config.temporalNamespace);
    cleanups.push(() => temporal.close());
    const api = await startApi(
      createServices({ config, db, log: createLogger(config.logLevel), temporal }),
      0,
      '127.0.0.1',
    );
    cleanups.push(() => api.close());
    const url = `${api.url}/v1/workspaces/${workspace.id}/repositories/${repo.id}/architecture/changes`;
    const e2e: number[] = [];
    let bytes = 0;
    for (let i = 0; i < runs + 2; i++) {
      const t = performance.now();
      const res = await fetch(url, { headers: { authorization: `Bearer ${token.token}` } });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${res.status}: ${body.slice(0, 500)}`);
      if (i >= 2) e2e.push(performance.now() - t);
      bytes = body.length;
    }
    console.log(
      `end to end   GET .../changes      p50 ${pct(e2e, 0.5).toFixed(1)} ms  p95 ${pct(e2e, 0.95).toFixed(1)} ms  (target < 500 ms p50; ${(bytes / 1024).toFixed(0)} KiB answered)`,
    );
    return 0;
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
