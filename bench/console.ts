/**
 * `npm run bench:console`: the web console in Debian's Chromium (playwright-core) against the
 * real API. Two figures:
 * - time to an interactive explorer for a snapshot of BENCH_ENTITIES (500) entities and about
 *   1.6 times as many relationships: from navigation to the explorer's address until the graph
 *   is laid out and a node can be selected (its details shown). Median of BENCH_RUNS (5), first
 *   (cold cache) reported apart. Target < 2 s.
 * - the first page's transferred size: every response of a cold load of /app/ (signed in, home
 *   page with its API calls), as sent over the wire (compressed). Target < 500 KB.
 * Prints the machine load. PostgreSQL: BENCH_DATABASE_URL or an embedded one (bench/env.ts).
 * Exits 0 whatever the figures; 1 when the setup or a page failed.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { chromium, type Page } from 'playwright-core';
import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { createWorkspaceWithOwner } from '../platform/bootstrap';
import { TemporalGateway } from '../platform/temporal';
import { createServices } from '../api/services';
import { startApi } from '../api/server';
import { insertRepository } from '../db/repositories';
import { createAuditRecord, updateAudit } from '../db/audits';
import { insertSnapshot } from '../db/architecture';
import { setPasswordHash } from '../db/sessions';
import { hashPassword } from '../domain/sessions/password';
import { ensureConsoleBuilt } from '../scripts/build-console';
import { benchDatabaseUrl, intEnv } from './env';

const ENTITIES = intEnv('BENCH_ENTITIES', 500);
const RUNS = intEnv('BENCH_RUNS', 5);
const KINDS = ['service', 'datastore', 'queue', 'job', 'pipeline'];
const PASSWORD = 'bench console password';

/** A synthetic snapshot: ENTITIES entities in layers, each calling one or two of the next layer. */
function snapshot() {
  const now = new Date().toISOString();
  const entities = Array.from({ length: ENTITIES }, (_, i) => {
    const kind = KINDS[i % KINDS.length]!;
    return {
      canonical_key: `${kind}:unit-${i}`,
      kind,
      name: `unit-${i}`,
      attributes: {},
      confidence: '0.9000',
      evidence_ids: [],
      sources: ['code'],
      contradictions: [],
      first_observed_at: now,
      last_observed_at: now,
    };
  });
  const relationships = [];
  for (let i = 0; i + 20 < ENTITIES; i++) {
    for (const step of i % 3 === 0 ? [20] : [20, 21]) {
      const to = i + step;
      if (to >= ENTITIES) continue;
      const source = entities[i]!.canonical_key;
      const target = entities[to]!.canonical_key;
      relationships.push({
        canonical_key: `calls:${source}->${target}`,
        source_key: source,
        target_key: target,
        kind: 'calls',
        attributes: {},
        confidence: '0.8000',
        evidence_ids: [],
        sources: ['code'],
        contradictions: [],
        supersedes_id: null,
        superseded_at: null,
        first_observed_at: now,
        last_observed_at: now,
      });
    }
  }
  return { entities, relationships, now };
}

async function signIn(page: Page, url: string, login: string): Promise<void> {
  await page.goto(`${url}/session/sign-in?return_to=/app/`);
  await page.fill('#login', login);
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/app\/$/);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<number> {
  const cleanups: Array<() => Promise<void>> = [];
  try {
    await ensureConsoleBuilt();
    const db = createDb(await benchDatabaseUrl(cleanups));
    cleanups.push(() => db.destroy());
    await migrateLatest(db);
    const login = `bench-${crypto.randomBytes(4).toString('hex')}`;
    const made = await createWorkspaceWithOwner(db, {
      name: 'Console bench',
      slug: login,
      login,
    });
    const ws = made.workspace.id;
    cleanups.push(async () => {
      await db('workspaces').where({ id: ws }).del();
    });
    await setPasswordHash(db, login, await hashPassword(PASSWORD));
    const repo = await insertRepository(db, {
      workspaceId: ws,
      name: 'large',
      url: 'https://git.example.com/large.git',
      defaultBranch: 'main',
      description: null,
    });
    const audit = await createAuditRecord(
      db,
      {
        workspace_id: ws,
        repository_id: repo.id,
        upload_id: null,
        created_by: made.member.id,
        audit_type: 'repository',
        branch_ref: null,
        commit_sha: null,
        deep_review: false,
        source_scope: {},
        origin: 'manual',
        origin_ref: null,
        trigger_reason: null,
        profile_snapshot: null,
      },
      { actorId: made.member.id, actorLogin: login, tokenId: null, requestId: null },
    );
    await updateAudit(db, audit.id, { status: 'completed', completed_at: new Date() });
    const { entities, relationships, now } = snapshot();
    await insertSnapshot(db, {
      id: crypto.randomUUID(),
      audit_id: audit.id,
      workspace_id: ws,
      repository_id: repo.id,
      version: '1',
      status: 'complete',
      sources: ['code'],
      missing_sources: [],
      source_coverage: '0.3333',
      entity_count: entities.length,
      relationship_count: relationships.length,
      entities,
      relationships,
      generated_at: now,
    });

    const config = { ...loadConfig({}), rateLimitQuota: 1_000_000 };
    const temporal = new TemporalGateway('127.0.0.1:1', config.temporalNamespace);
    cleanups.push(() => temporal.close());
    const api = await startApi(
      createServices({ config, db, log: createLogger('warn'), temporal }),
      0,
      '127.0.0.1',
    );
    cleanups.push(() => api.close());
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    cleanups.push(() => browser.close());

    // The first page: a cold load of /app/ after signing in, every response's wire size.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page, api.url, login);
    const fresh = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      storageState: await context.storageState(),
    });
    const first = await fresh.newPage();
    const responses: Array<Promise<{ url: string; bytes: number }>> = [];
    first.on('requestfinished', (r) =>
      responses.push(
        r
          .sizes()
          .then((s) => ({ url: r.url(), bytes: s.responseBodySize + s.responseHeadersSize })),
      ),
    );
    await first.goto(`${api.url}/app/`);
    await first.getByRole('table').getByRole('link', { name: 'large' }).waitFor();
    await first.waitForLoadState('networkidle');
    const sizes = await Promise.all(responses);
    const total = sizes.reduce((n, s) => n + s.bytes, 0);

    // Time to an interactive explorer.
    const times: number[] = [];
    const phases: Array<{ data: number; drawn: number; final: number }> = [];
    for (let run = 0; run < RUNS + 1; run++) {
      // The first run opens a fresh context (nothing cached); the others reuse the signed-in page.
      const p = run === 0 ? await fresh.newPage() : page;
      const started = performance.now();
      let data = 0;
      const onResponse = (r: { url(): string; finished(): Promise<unknown> }) => {
        if (r.url().endsWith(`/audits/${audit.id}/architecture`))
          void r.finished().then(() => (data = performance.now() - started));
      };
      p.on('response', onResponse);
      await p.goto(`${api.url}/app/w/${ws}/a/${audit.id}/graph`);
      const node = p.locator('.graph[data-ready=true] .react-flow__node').first();
      await node.waitFor({ timeout: 60_000 });
      const drawn = performance.now() - started;
      await node.click();
      await p.locator('.panel h2').waitFor();
      times.push(performance.now() - started);
      // ELK's layout (in its worker, or from the session's cache) replaces the quick one.
      await p.locator('.graph[data-layout=final]').waitFor({ timeout: 120_000 });
      phases.push({ data, drawn, final: performance.now() - started });
      p.off('response', onResponse);
    }
    const [cold, ...warm] = times;
    const [l1, l5, l15] = os.loadavg();
    console.log(
      `bench:console  (${os.cpus().length} cores, load ${l1!.toFixed(2)} ${l5!.toFixed(2)} ${l15!.toFixed(2)})`,
    );
    console.log(`  explorer, ${entities.length} entities / ${relationships.length} relationships:`);
    console.log(
      `    time to interactive: median ${Math.round(median(warm))} ms over ${warm.length} runs (first load, explorer code not yet cached: ${Math.round(cold!)} ms); target < 2000 ms -> ratio ${(median(warm) / 2000).toFixed(2)}`,
    );
    for (const [i, ph] of phases.entries())
      console.log(
        `    run ${i}: architecture read ${Math.round(ph.data)} ms, graph drawn ${Math.round(ph.drawn)} ms, interactive ${Math.round(times[i]!)} ms, ELK layout in place ${Math.round(ph.final)} ms${i > 1 ? ' (cached)' : ''}`,
      );
    console.log(
      `  first page (/app/ home, signed in, cold cache): ${sizes.length} responses, ${(total / 1024).toFixed(1)} KB transferred; target < 500 KB -> ratio ${(total / 1024 / 500).toFixed(2)}`,
    );
    for (const s of sizes.sort((a, b) => b.bytes - a.bytes).slice(0, 6))
      console.log(
        `    ${(s.bytes / 1024).toFixed(1).padStart(7)} KB  ${s.url.replace(api.url, '')}`,
      );
    return 0;
  } catch (err) {
    console.error(err);
    return 1;
  } finally {
    for (const fn of cleanups.reverse())
      await fn().catch((e: unknown) => console.error('cleanup:', e));
  }
}

void main().then((code) => process.exit(code));
