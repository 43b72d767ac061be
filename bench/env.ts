/** Benchmark settings from the environment, and the database a benchmark runs against. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startEmbeddedPostgres } from '../platform/dev-services';

/** An integer setting >= `min`, or `fallback` when unset; anything else stops the benchmark. */
export function intEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got ${raw}`);
  }
  return value;
}

/**
 * BENCH_DATABASE_URL, or a fresh embedded PostgreSQL in a temporary folder (its stop and removal
 * are pushed onto `cleanups`).
 */
export async function benchDatabaseUrl(cleanups: Array<() => Promise<void>>): Promise<string> {
  if (process.env.BENCH_DATABASE_URL) return process.env.BENCH_DATABASE_URL;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-bench-'));
  cleanups.push(async () => fs.rmSync(tmp, { recursive: true, force: true }));
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(tmp, 'postgres'),
    port: await freePort(),
    database: 'archaudit',
    logFile: path.join(tmp, 'postgres.log'),
  });
  cleanups.push(() => pg.stop());
  return pg.url;
}
