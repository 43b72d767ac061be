/**
 * `npm run bench:api`: throughput of the real API on an authenticated read compared with a bare
 * Koa handler on the same machine. Target: authenticated `GET /v1/workspaces` serves at least half
 * the requests per second of `new Koa()` answering `{items: []}`.
 *
 * - PostgreSQL: BENCH_DATABASE_URL when set (a workspace `bench-<hex>` is created there and
 *   deleted at the end), else an embedded PostgreSQL in a temporary folder, removed at the end.
 * - Load: autocannon, in a worker thread (BENCH_WORKERS, default 1) so the load generator does
 *   not share the servers' event loop; each target is warmed up first, then measured.
 * - Settings: BENCH_SECONDS (10), BENCH_CONNECTIONS (50), BENCH_WARMUP_SECONDS (2),
 *   BENCH_LOG_LEVEL (warn), BENCH_AUTH_CACHE_TTL_MS (the default of loadConfig, 2000).
 * - BENCH_CPU_PROFILE=<file>: writes a V8 CPU profile (open it in Chrome DevTools) of this
 *   process during each measured phase, to <file>.api.cpuprofile and <file>.bare.cpuprofile,
 *   and prints the functions with the most self time.
 *
 * Exits 0 whatever the ratio (a benchmark, not a test); exits 1 when the authenticated route
 * answered anything but 2xx, or the setup failed (a broken benchmark).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import inspector from 'node:inspector';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import Koa from 'koa';
import type { Knex } from 'knex';
import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { createWorkspaceWithOwner } from '../platform/bootstrap';
import { TemporalGateway } from '../platform/temporal';
import { createServices } from '../api/services';
import { startApi } from '../api/server';
import { benchDatabaseUrl, intEnv } from './env';
import type { CpuProfile } from './main-thread';

const TARGET_RATIO = 0.5;

const SECONDS = intEnv('BENCH_SECONDS', 10);
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 50);
const WARMUP_SECONDS = intEnv('BENCH_WARMUP_SECONDS', 2, 0);
const WORKERS = intEnv('BENCH_WORKERS', 1, 0);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'warn';
const AUTH_CACHE_TTL_MS = process.env.BENCH_AUTH_CACHE_TTL_MS;
const CPU_PROFILE = process.env.BENCH_CPU_PROFILE;

interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
}

async function load(target: Target, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: target.url,
    method: 'GET',
    headers: target.headers ?? {},
    connections: CONNECTIONS,
    duration: seconds,
    // 0 runs autocannon in this event loop (it then competes with the servers for it).
    ...(WORKERS > 0 ? { workers: WORKERS } : {}),
  });
}

/** The bare baseline: one middleware, same JSON shape as an empty page. */
async function startBareKoa(): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { items: [] };
  });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Profiles this process (the servers) with the inspector; stop() writes and summarises it. */
async function startProfiler(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new inspector.Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) =>
      session.post(method, params ?? {}, (err, result) =>
        err ? reject(err) : resolve(result as T),
      ),
    );
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  return {
    async stop(file: string) {
      const { profile } = await post<{ profile: CpuProfile }>('Profiler.stop');
      session.disconnect();
      fs.writeFileSync(file, JSON.stringify(profile));
      printProfileSummary(profile);
    },
  };
}

/** Self time per function (top 15) and per package, as shares of the sampled time. */
function printProfileSummary(profile: CpuProfile): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) =>
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)),
  );
  const total = profile.endTime - profile.startTime;
  const fnTotals = new Map<string, number>();
  const pkgTotals = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    const where = frame.url
      .replace(/^.*node_modules\//, '')
      .replace(/^file:\/\/.*?\/(?=[a-z]+\/)/, '');
    const fn = `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
    fnTotals.set(fn, (fnTotals.get(fn) ?? 0) + us);
    const pkg =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1] ??
      (frame.url.startsWith('node:') ? 'node core' : frame.url ? 'ours' : frame.functionName);
    pkgTotals.set(pkg, (pkgTotals.get(pkg) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log('  self time by package:');
  for (const [k, us] of top(pkgTotals, 12)) console.log(`    ${pct(us)}  ${k}`);
  console.log('  self time by function:');
  for (const [k, us] of top(fnTotals, 15)) console.log(`    ${pct(us)}  ${k}`);
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

function printTable(rows: Array<{ name: string; r: autocannon.Result }>): void {
  const head = ['target', 'req/s (avg)', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'requests'];
  const widths = [36, 12, 8, 8, 8, 7, 10];
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!, i > 0)).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const { name, r } of rows) {
    console.log(
      line([
        name,
        r.requests.average.toFixed(0),
        r.latency.p50.toFixed(1),
        r.latency.p99.toFixed(1),
        String(r.non2xx),
        String(r.errors),
        String(r.requests.total),
      ]),
    );
  }
}

async function main(): Promise<number> {
  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse())
      await fn().catch((err: unknown) => console.error('cleanup:', err));
    cleanups.length = 0;
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  process.once('SIGTERM', () => void cleanup().then(() => process.exit(143)));

  try {
    const databaseUrl = await benchDatabaseUrl(cleanups);

    const db: Knex = createDb(databaseUrl);
    cleanups.push(() => db.destroy());
    await migrateLatest(db);

    const slug = `bench-${crypto.randomBytes(4).toString('hex')}`;
    const { workspace, token } = await createWorkspaceWithOwner(db, {
      name: 'Benchmark',
      slug,
      login: 'bench',
      days: 1,
    });
    // On a shared database, leave nothing behind (members, tokens and events cascade).
    if (process.env.BENCH_DATABASE_URL)
      cleanups.push(async () => void (await db('workspaces').where({ id: workspace.id }).del()));

    const env: NodeJS.ProcessEnv = { LOG_LEVEL: LOG_LEVEL, RATE_LIMIT_QUOTA: '100000000' };
    if (AUTH_CACHE_TTL_MS !== undefined) env.AUTH_CACHE_TTL_MS = AUTH_CACHE_TTL_MS;
    const config = { ...loadConfig(env), databaseUrl, temporalAddress: '127.0.0.1:1' };
    const log = createLogger(config.logLevel);
    // Connects lazily; nothing on this route uses Temporal, so the unused address is never dialled.
    const temporal = new TemporalGateway(config.temporalAddress, config.temporalNamespace);
    cleanups.push(() => temporal.close());
    const api = await startApi(createServices({ config, db, log, temporal }), 0, '127.0.0.1');
    cleanups.push(() => api.close());
    const bare = await startBareKoa();
    cleanups.push(() => bare.close());

    const authed: Target = {
      name: 'API  GET /v1/workspaces (Bearer)',
      url: `${api.url}/v1/workspaces`,
      headers: { authorization: `Bearer ${token.token}` },
    };
    const baseline: Target = { name: 'bare Koa  {items: []}', url: bare.url };

    // Fail fast if the authenticated route does not answer what we expect.
    const probe = await fetch(authed.url, { headers: authed.headers });
    const probeBody = (await probe.json()) as { items?: Array<{ id: string }> };
    if (probe.status !== 200 || probeBody.items?.[0]?.id !== workspace.id) {
      console.error(
        `Probe of ${authed.url} answered ${probe.status}: ${JSON.stringify(probeBody)}`,
      );
      return 1;
    }

    console.log(
      `bench:api  ${SECONDS}s x ${CONNECTIONS} connections per target, warm-up ${WARMUP_SECONDS}s, ` +
        `autocannon workers ${WORKERS}, API log level '${config.logLevel}', auth cache ${config.authCacheTtlMs} ms, ` +
        `rate limit quota ${config.rateLimitQuota}, ${os.cpus().length} CPUs, node ${process.version}`,
    );
    console.log(
      `database: ${process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded PostgreSQL'}`,
    );
    console.log('');

    const results: Array<{ name: string; r: autocannon.Result }> = [];
    let warmupNon2xx = 0;
    for (const target of [authed, baseline]) {
      if (WARMUP_SECONDS > 0) {
        const w = await load(target, WARMUP_SECONDS);
        if (target === authed) warmupNon2xx += w.non2xx;
      }
      const profiler = CPU_PROFILE ? await startProfiler() : undefined;
      results.push({ name: target.name, r: await load(target, SECONDS) });
      if (profiler) {
        const file = `${CPU_PROFILE}.${target === authed ? 'api' : 'bare'}.cpuprofile`;
        await profiler.stop(file);
        console.log(`CPU profile of ${target.name}: ${file}`);
      }
    }

    printTable(results);
    const a = results[0]!.r;
    const b = results[1]!.r;
    const ratio = a.requests.average / b.requests.average;
    console.log('');
    console.log(
      `ratio authenticated / bare throughput: ${ratio.toFixed(3)}  ` +
        `(target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'MET' : 'NOT MET'})`,
    );

    if (a.non2xx > 0 || warmupNon2xx > 0 || a.errors > 0) {
      console.error(
        `BROKEN: the authenticated route gave ${a.non2xx} non-2xx (${warmupNon2xx} during warm-up) and ` +
          `${a.errors} connection errors; statuses ${JSON.stringify(a.statusCodeStats ?? {})}`,
      );
      return 1;
    }
    return 0;
  } catch (err) {
    console.error(err);
    return 1;
  } finally {
    await cleanup();
  }
}

void main().then((code) => {
  process.exitCode = code;
});
