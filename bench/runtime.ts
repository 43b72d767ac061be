/**
 * `npm run bench:runtime`: what running compiled JavaScript instead of TypeScript through tsx
 * costs at start. For each way of running, BENCH_RUNS (default 5) times:
 * - API ready: process start to its `api listening` line (migrations already applied), and its
 *   resident memory (VmRSS) then;
 * - worker ready: process start to `worker running` (with the pre-built workflow bundle, as in
 *   the image), and its VmRSS then;
 * - `archaudit --help`: process start to exit.
 * "tsx" is how these ran before (`node --import tsx api/main.ts`, the old cli/bin.cjs that
 * registered tsx); "compiled" is how they run now (`node dist/app/...`, built first by
 * `npm run build`; the CLI through cli/bin.cjs, whose staleness check is included). PostgreSQL:
 * BENCH_DATABASE_URL or an embedded one; Temporal: TEMPORAL_ADDRESS or a dev server. Prints
 * p50 and the ratio, with the load before and after.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { ensureTemporalCli, freePort, startTemporalDevServer } from '../platform/dev-services';
import { benchDatabaseUrl, intEnv } from './env';

const ROOT = path.join(__dirname, '..');
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/** Starts `args`, waits for `ready` in its output; returns ms to ready and RSS then. */
async function startUntil(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ ms: number; rss: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  try {
    const ms = await new Promise<number>((resolve, reject) => {
      const check = (d: Buffer) => {
        out += d.toString();
        if (ready.test(out)) resolve(performance.now() - t0);
      };
      child.stdout.on('data', check);
      child.stderr.on('data', check);
      child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}:\n${out}`)));
      setTimeout(() => reject(new Error(`${args.join(' ')} not ready in 120 s:\n${out}`)), 120_000);
    });
    return { ms, rss: rssMiB(child.pid!) };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
}

function timeOnce(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: os.tmpdir(), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return performance.now() - t0;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const runs = intEnv('BENCH_RUNS', 5);
  const cleanups: Array<() => Promise<void>> = [];
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'run.cjs'), '--build'], {
      stdio: 'inherit',
    });
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-bench-runtime-'));
    cleanups.push(async () => fs.rmSync(tmp, { recursive: true, force: true }));
    const bundle = path.join(tmp, 'workflow-bundle.js');
    execFileSync('npm', ['run', '--silent', 'bundle:workflows', '--', bundle], {
      cwd: ROOT,
      stdio: 'ignore',
    });
    const databaseUrl = await benchDatabaseUrl(cleanups);
    const db = createDb(databaseUrl);
    await migrateLatest(db);
    await db.destroy();
    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    if (!temporalAddress) {
      const dev = await startTemporalDevServer({
        cli: ensureTemporalCli(path.join(ROOT, '.tools'), () => {}),
        port: await freePort(),
        uiPort: await freePort(),
        dbFile: path.join(tmp, 'temporal.db'),
        logFile: path.join(tmp, 'temporal.log'),
      });
      cleanups.push(() => dev.stop());
      temporalAddress = dev.address;
    }
    const env = {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_TASK_QUEUE: `bench-runtime-${process.pid}`,
      MIGRATE_ON_START: 'false',
      PORT: '0',
      LOG_LEVEL: 'info',
      WORKFLOW_BUNDLE: bundle,
      DATA_DIR: tmp,
    };
    // The CLI as cli/bin.cjs ran it before: TypeScript through tsx's require hook.
    const tsxCli = path.join(tmp, 'archaudit-tsx.cjs');
    fs.writeFileSync(
      tsxCli,
      `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register();\n` +
        `require(${JSON.stringify(path.join(ROOT, 'cli', 'main.ts'))}).run(process.argv);\n`,
    );
    const ways = {
      tsx: {
        api: ['--import', 'tsx', 'api/main.ts'],
        worker: ['--import', 'tsx', 'worker/main.ts'],
        cli: [tsxCli, '--help'],
      },
      compiled: {
        api: ['dist/app/api/main.js'],
        worker: ['dist/app/worker/main.js'],
        cli: [path.join(ROOT, 'cli', 'bin.cjs'), '--help'],
      },
    };
    console.log(`node ${process.version}, ${runs} runs each, ${os.cpus().length} CPUs`);
    console.log(`load before ${load()}`);
    const figures: Record<string, Record<string, number>> = {};
    for (const [way, cmd] of Object.entries(ways)) {
      const api: number[] = [];
      const apiRss: number[] = [];
      const worker: number[] = [];
      const workerRss: number[] = [];
      const cli: number[] = [];
      for (let i = 0; i < runs; i += 1) {
        const a = await startUntil(cmd.api, env, /"msg":"api listening"/);
        api.push(a.ms);
        apiRss.push(a.rss);
        const w = await startUntil(cmd.worker, env, /"msg":"worker running"/);
        worker.push(w.ms);
        workerRss.push(w.rss);
        cli.push(timeOnce(cmd.cli));
      }
      figures[way] = {
        api: p50(api),
        apiRss: p50(apiRss),
        worker: p50(worker),
        workerRss: p50(workerRss),
        cli: p50(cli),
      };
      const f = figures[way] as Record<'api' | 'apiRss' | 'worker' | 'workerRss' | 'cli', number>;
      console.log(
        `${way.padEnd(8)}  API ready p50 ${f.api.toFixed(0)} ms, RSS ${f.apiRss.toFixed(0)} MiB; ` +
          `worker ready p50 ${f.worker.toFixed(0)} ms, RSS ${f.workerRss.toFixed(0)} MiB; ` +
          `archaudit --help p50 ${f.cli.toFixed(0)} ms`,
      );
    }
    const before = figures.tsx!;
    const after = figures.compiled!;
    const ratio = (k: string) => (after[k]! / before[k]!).toFixed(2);
    console.log(
      `compiled / tsx: API start x${ratio('api')}, API RSS x${ratio('apiRss')}, worker start ` +
        `x${ratio('worker')}, worker RSS x${ratio('workerRss')}, --help x${ratio('cli')}`,
    );
    console.log(`load after ${load()}`);
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
