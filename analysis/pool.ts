/**
 * The analysis pool: worker threads (piscina) that run the analyzers and reconcile.
 *
 * They are pure functions over plain data, and CPU-bound: a 10,000-file checkout is ~1.4 s of
 * code analysis, a large monorepo tens of seconds. On the worker's main thread that time would
 * stop everything else the process does: activity heartbeats, the workflow tasks of every other
 * audit (whose timeout is 10 s), database replies. In the pool the main thread stays free.
 *
 * Threads: ANALYSIS_THREADS, by default one less than the CPUs available, from 1 to 4 (each thread
 * holds ~100 MB: its own V8 heap and loaded modules). A thread idle for a minute ends; the next
 * task starts one again (~0.5 s). Input and output are copied between threads (structured clone).
 */
import path from 'node:path';
import { Piscina } from 'piscina';
import { analysisThreads } from '../platform/config';
import type { ThreadResult, ThreadTask } from './thread';

let pool: Piscina | undefined;

function thePool(): Piscina {
  // The thread module is what this one is: TypeScript (threads inherit this process's loader,
  // tsx) or the compiled JavaScript beside it (dist/app).
  return (pool ??= new Piscina({
    filename: path.join(__dirname, `thread${path.extname(__filename)}`),
    minThreads: 0,
    maxThreads: analysisThreads(),
    idleTimeout: 60_000,
  }));
}

/** Runs one analysis task in the pool; `signal` aborts it (its thread is ended). */
export async function runInPool(task: ThreadTask, signal?: AbortSignal): Promise<ThreadResult> {
  return (await thePool().run(task, signal ? { signal } : {})) as ThreadResult;
}

/** Ends the pool's threads (worker shutdown). */
export async function closeAnalysisPool(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.destroy();
}
