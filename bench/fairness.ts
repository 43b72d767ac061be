/**
 * `npm run bench:fairness`: issue 24's fair-sharing figure. Does a tiny audit in workspace B
 * finish within 2x its solo time while workspace A's 10,000-service audit runs?
 *
 * - PostgreSQL: BENCH_DATABASE_URL, else an embedded one; Temporal: TEMPORAL_ADDRESS, else a
 *   headless in-memory dev server (as bench:audits and bench:soak).
 * - One API (this process) and ONE worker (`worker/main.ts` in a process of its own, default
 *   settings: ANALYSIS_THREADS, activity slots, no admission limit), as production runs them.
 * - Workspace A: the hostile probe's repository (one docker-compose.yml of FAIR_SERVICES, default
 *   10,000, services; test/helpers/large-compose.ts). Workspace B: the small sample repository;
 *   each of its audits reads a new commit (one file changed), so its agents work rather than
 *   answer from their cache.
 * - Solo: FAIR_TINY (3) audits of B one after another, nothing else running. Then A's audit
 *   starts, and while it runs B's audits go on one after another; each is labelled with the
 *   stage A was in when it started. Times are each audit's own created_at..completed_at.
 * - Prints the solo and contended times, their medians and the ratio (target <= 2), the worker's
 *   peak RSS, A's time, and the load average (everything shares the machine's CPUs).
 * Exits 0 whether or not the target is met (a benchmark); 1 when an audit did not complete.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { Connection } from '@temporalio/client';
import { createServices } from '../api/services';
import { startApi } from '../api/server';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { createWorkspaceWithOwner } from '../platform/bootstrap';
import { loadConfig, type Config } from '../platform/config';
import { createLogger } from '../platform/logger';
import { MissingToolError, startLocalServices } from '../platform/dev-services';
import { ensureSearchAttributes, TemporalGateway } from '../platform/temporal';
import { createRepo, SAMPLE_FILES, type TestRepo } from '../test/helpers/git';
import { largeComposeText } from '../test/helpers/large-compose';
import { intEnv } from './env';
import { rssMb, startWorkerProcess } from './worker-process';
import { busyStretches, loopReading, mainThreadProfile, type LoopReading } from './main-thread';
import { freePort } from '../platform/dev-services';

const ROOT = path.resolve(__dirname, '..');
const SERVICES = intEnv('FAIR_SERVICES', 10_000);
const TINY = intEnv('FAIR_TINY', 3);
const TIMEOUT_MS = intEnv('BENCH_TIMEOUT_SECONDS', 1800) * 1000;
const TARGET_RATIO = 2;
const PROFILE = process.env.FAIR_CPU_PROFILE === '1';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length
    ? (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2
    : 0;
};

async function main(): Promise<void> {
  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await fn().catch((e: unknown) => console.error(e));
    cleanups.length = 0;
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-fairness-'));
    cleanups.push(async () => fs.rmSync(tmp, { recursive: true, force: true }));
    const services = await startLocalServices({
      tmpDir: tmp,
      database: 'archaudit',
      databaseUrl: process.env.BENCH_DATABASE_URL,
      temporalAddress: process.env.TEMPORAL_ADDRESS,
      toolsDir: path.join(ROOT, '.tools'),
      say: (l) => console.log(l),
    });
    cleanups.push(() => services.stop());
    const { databaseUrl, temporalAddress } = services;
    const admin = await Connection.connect({ address: temporalAddress });
    await ensureSearchAttributes(admin, 'default');
    await admin.close();

    const db: Knex = createDb(databaseUrl, { max: 10 });
    cleanups.push(() => db.destroy());
    await migrateLatest(db);
    const tag = crypto.randomBytes(4).toString('hex');
    const tenants = await Promise.all(
      (['a', 'b'] as const).map((w) =>
        createWorkspaceWithOwner(db, {
          name: `Fairness ${w}`,
          slug: `fair-${w}-${tag}`,
          login: `fair-${w}`,
          days: 1,
        }),
      ),
    );
    cleanups.push(async () => {
      await db('workspaces')
        .whereIn(
          'id',
          tenants.map((t) => t.workspace.id),
        )
        .delete()
        .catch(() => undefined);
    });
    const config: Config = {
      ...loadConfig({}),
      databaseUrl,
      temporalAddress,
      taskQueue: `fair-${tag}`,
      logLevel: 'warn',
      rateLimitQuota: 1_000_000_000,
      localRepositoryWorkspaces: tenants.map((t) => t.workspace.slug),
      blobDir: path.join(tmp, 'blobs'),
      workDir: path.join(tmp, 'work'),
    };
    const log = createLogger(config.logLevel);
    const gateway = new TemporalGateway(temporalAddress, 'default');
    cleanups.push(() => gateway.close());
    const api = await startApi(
      createServices({ config, db, log, temporal: gateway }),
      0,
      '127.0.0.1',
    );
    cleanups.push(() => api.close());

    const metricsPort = await freePort();
    const profileDir = path.join(tmp, 'profile');
    const { child: worker, stop } = await startWorkerProcess(
      {
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: config.taskQueue,
        BLOB_DIR: config.blobDir,
        WORK_DIR: config.workDir,
        LOCAL_REPOSITORY_WORKSPACES: config.localRepositoryWorkspaces.join(','),
        MODEL_BASE_URL: '',
        WORKER_METRICS_PORT: String(metricsPort),
      },
      PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    );
    let workerStopped = false;
    cleanups.push(async () => {
      if (!workerStopped) await stop();
    });
    // The worker's event-loop gauges cover the time since the previous scrape (prom-client resets
    // its histogram at each one): read once a second, they give each second's longest pause.
    const loop: Array<LoopReading & { during: string }> = [];
    let aStage = 'before A';
    let loopTimer: NodeJS.Timeout | undefined;
    const readLoop = async () => {
      const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
        .then((r) => r.text())
        .catch(() => '');
      const reading = loopReading(text, Date.now());
      if (reading) loop.push({ ...reading, during: aStage });
      loopTimer = setTimeout(() => void readLoop(), 1000);
    };
    void readLoop();
    cleanups.push(async () => clearTimeout(loopTimer));
    let workerPeak = 0;
    const sampler = setInterval(() => {
      try {
        workerPeak = Math.max(workerPeak, rssMb(worker.pid!));
      } catch {
        // the worker is gone
      }
    }, 1000);
    cleanups.push(async () => clearInterval(sampler));

    const large = createRepo({ 'docker-compose.yml': largeComposeText(SERVICES) });
    const tiny = createRepo(SAMPLE_FILES);
    cleanups.push(async () => {
      large.remove();
      tiny.remove();
    });
    const client = (t: (typeof tenants)[number], repo: TestRepo, name: string) => {
      const base = `${api.url}/v1/workspaces/${t.workspace.id}`;
      const headers = {
        Authorization: `Bearer ${t.token.token}`,
        'Content-Type': 'application/json',
      };
      const post = async (p: string, body: unknown) => {
        const res = await fetch(`${base}${p}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
        });
        const json = (await res.json()) as { id: string };
        if (res.status >= 300) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
        return json;
      };
      let repositoryId = '';
      return {
        async register() {
          repositoryId = (await post('/repositories', { name, url: `file://${repo.dir}` })).id;
        },
        start: async () => (await post('/audits', { repository_id: repositoryId })).id,
      };
    };
    const a = client(tenants[0]!, large, 'probe');
    const b = client(tenants[1]!, tiny, 'shop');
    await a.register();
    await b.register();

    /** Waits for the audit to end; its status and created_at..completed_at in seconds. */
    const finished = async (id: string) => {
      const deadline = Date.now() + TIMEOUT_MS;
      for (;;) {
        const row = (await db('audits')
          .where({ id })
          .first('status', 'created_at', 'completed_at')) as {
          status: string;
          created_at: Date;
          completed_at: Date | null;
        };
        if (['completed', 'failed', 'cancelled'].includes(row.status))
          return {
            status: row.status,
            seconds: (row.completed_at!.getTime() - row.created_at.getTime()) / 1000,
          };
        if (Date.now() > deadline) throw new Error(`audit ${id} did not end in time`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const running = async (id: string) =>
      (
        (await db('audit_stages')
          .where({ audit_id: id, status: 'running' })
          .select('key')) as Array<{
          key: string;
        }>
      )
        .map((s) => s.key)
        .join('+') || 'between stages';
    let n = 0;
    /** One tiny audit of B on a new commit. */
    const tinyAudit = async () => {
      tiny.commit({ 'services/api/fair.txt': `${n++} ${crypto.randomUUID()}\n` }, `fair ${n}`);
      const id = await b.start();
      const end = await finished(id);
      if (end.status !== 'completed') throw new Error(`tiny audit ${id} ended ${end.status}`);
      ids.set(end.seconds, id);
      return end.seconds;
    };
    /** Each tiny audit's id by its time (to break the slowest one down by stage). */
    const ids = new Map<number, string>();
    /** Where an audit's time went: before its first stage, each stage, after its last. */
    const breakdown = async (id: string) => {
      const audit = (await db('audits').where({ id }).first('created_at', 'completed_at')) as {
        created_at: Date;
        completed_at: Date;
      };
      const stages = (await db('audit_stages')
        .where({ audit_id: id })
        .whereNotNull('started_at')
        .orderBy('started_at')
        .select('key', 'started_at', 'completed_at')) as Array<{
        key: string;
        started_at: Date;
        completed_at: Date | null;
      }>;
      const msOf = (a: Date, b: Date) => `${b.getTime() - a.getTime()} ms`;
      const parts = stages.map((st, i) => {
        const gap = i > 0 ? st.started_at.getTime() - stages[i - 1]!.completed_at!.getTime() : 0;
        return `${gap > 20 ? `(+${gap} ms) ` : ''}${st.key} ${msOf(st.started_at, st.completed_at ?? st.started_at)}`;
      });
      const first = stages[0]?.started_at ?? audit.completed_at;
      const last = stages.at(-1)?.completed_at ?? audit.completed_at;
      return `start ${msOf(audit.created_at, first)}; ${parts.join(', ')}; end ${msOf(last, audit.completed_at)}`;
    };

    // A warm-up (module loading, pool thread start), not counted.
    await tinyAudit();
    const solo: number[] = [];
    for (let i = 0; i < TINY; i++) solo.push(await tinyAudit());
    console.log(`solo tiny audits (s): ${solo.map((s) => s.toFixed(1)).join(', ')}`);

    const aStarted = Date.now();
    const aId = await a.start();
    const aEnd = finished(aId);
    const stages: Array<{ at: number; stage: string }> = [];
    const stageWatch = setInterval(() => {
      void running(aId).then((s) => {
        if (s !== aStage) stages.push({ at: Date.now(), stage: s });
        aStage = s;
      });
    }, 250);
    const stageAt = (t: number) => stages.filter((s) => s.at <= t).at(-1)?.stage ?? 'source';
    cleanups.push(async () => clearInterval(stageWatch));
    let aDone = false;
    void aEnd.then(
      () => (aDone = true),
      () => (aDone = true),
    );
    // B's audits begin once A is past its source stage (A's analysis is what competes).
    while (!aDone && ['source', 'between stages'].includes(await running(aId)))
      await new Promise((r) => setTimeout(r, 500));
    const contended: Array<{ seconds: number; during: string }> = [];
    while (!aDone) {
      const during = await running(aId);
      const seconds = await tinyAudit();
      if (!aDone) contended.push({ seconds, during });
    }
    const big = await aEnd;
    clearInterval(stageWatch);
    const aEnded = Date.now();
    aStage = 'after A';
    for (const c of contended)
      console.log(`tiny audit while A ran ${c.during}: ${c.seconds.toFixed(1)} s`);
    const soloMedian = median(solo);
    const worst = Math.max(...contended.map((c) => c.seconds), 0);
    const contendedMedian = median(contended.map((c) => c.seconds));
    console.log(
      `A (${SERVICES} services): ${big.status} in ${big.seconds.toFixed(0)} s; worker peak RSS ${workerPeak} MiB`,
    );
    console.log(
      `tiny audit: solo median ${soloMedian.toFixed(1)} s; while A ran: ${contended.length} audits, median ${contendedMedian.toFixed(1)} s (x${(contendedMedian / soloMedian).toFixed(2)}), worst ${worst.toFixed(1)} s (x${(worst / soloMedian).toFixed(2)}); target x${TARGET_RATIO}: ${worst / soloMedian <= TARGET_RATIO ? 'met' : 'NOT met'}`,
    );
    const soloId = ids.get(solo.find((x) => x === soloMedian) ?? solo[0]!);
    const worstId = ids.get(worst);
    if (soloId) console.log(`  a solo tiny audit: ${await breakdown(soloId)}`);
    if (worstId) console.log(`  the slowest while A ran: ${await breakdown(worstId)}`);
    console.log(
      `load average: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (${os.cpus().length} CPUs, ANALYSIS_THREADS default)`,
    );
    const during = loop.filter((r) => r.at > aStarted && r.at <= aEnded + 1000);
    const ms = (s: number) => `${Math.round(s * 1000)} ms`;
    const byStage = new Map<string, LoopReading[]>();
    for (const r of during) byStage.set(r.during, [...(byStage.get(r.during) ?? []), r]);
    console.log(
      `worker main thread while A ran: longest event-loop pause ${ms(Math.max(0, ...during.map((r) => r.max)))}; seconds with a pause over 100 ms: ${during.filter((r) => r.max > 0.1).length} of ${during.length}; by A's stage (longest pause, worst second's p99):`,
    );
    for (const [stage, rs] of byStage)
      console.log(
        `  ${stage.padEnd(24)} ${ms(Math.max(...rs.map((r) => r.max))).padStart(9)} ${ms(Math.max(...rs.map((r) => r.p99))).padStart(9)}`,
      );
    if (PROFILE) {
      workerStopped = true;
      await stop();
      const profile = mainThreadProfile(profileDir, worker.pid!);
      if (!profile) console.log('no CPU profile of the worker main thread was written');
      else {
        const offset = Date.now() - Number(process.hrtime.bigint() / 1000n) / 1000;
        const stretches = busyStretches(profile, ROOT, offset, 100).filter(
          (b) => b.startMs + b.ms > aStarted && b.startMs < aEnded,
        );
        console.log(
          `worker main thread busy stretches of 100 ms or more while A ran: ${stretches.length}; the longest, with the code that held them:`,
        );
        for (const b of stretches.slice(0, 15))
          console.log(
            `  ${String(Math.round(b.ms)).padStart(6)} ms at A+${((b.startMs - aStarted) / 1000).toFixed(1)} s (${stageAt(b.startMs)}): ${b.top.map((t) => `${t.label} (${Math.round(t.share * 100)}%)`).join('; ')}`,
          );
      }
    }
    if (big.status !== 'completed') process.exitCode = 1;
  } catch (err) {
    console.error(err instanceof MissingToolError ? err.message : err);
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

void main();
