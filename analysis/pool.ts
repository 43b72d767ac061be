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
 *
 * Two lanes, so that a heavy audit cannot hold a light one behind it (issue 24, fair sharing): a
 * task whose input is small (SMALL_TASK_WEIGHT: about a megabyte of text or a few thousand
 * evidence records) runs in the express lane, one thread of its own, and never waits behind a
 * large task that may hold every main-lane thread for tens of seconds (a 10,000-service compose
 * file). Large tasks queue in the main lane as before.
 *
 * The operating system shares the CPUs between the lanes and the rest of the process, and a
 * main-lane thread asks it for less: on Linux each of those threads lowers its own priority by
 * ANALYSIS_NICE (default 10) when it starts (thread.ts), so that while a large audit keeps a CPU
 * busy for minutes, the work of every other audit (the express lane, the main thread's database
 * replies and heartbeats, PostgreSQL) is run first; the large one still gets every CPU cycle
 * nobody else wants.
 */
import path from 'node:path';
import { Piscina } from 'piscina';
import { analysisNice, analysisThreads } from '../platform/config';
import type { PoolThreadData, ThreadResult, ThreadTask } from './thread';
import { changeGateWeight } from './change-gate';

type Lane = 'main' | 'express';
const pools: Partial<Record<Lane, Piscina>> = {};

function poolOf(lane: Lane): Piscina {
  // The thread module is what this one is: TypeScript (threads inherit this process's loader,
  // tsx) or the compiled JavaScript beside it (dist/app).
  return (pools[lane] ??= new Piscina({
    filename: path.join(__dirname, `thread${path.extname(__filename)}`),
    minThreads: 0,
    maxThreads: lane === 'main' ? analysisThreads() : 1,
    idleTimeout: 60_000,
    workerData: { nice: lane === 'main' ? analysisNice() : 0 } satisfies PoolThreadData,
  }));
}

/** Up to this weight a task is small: it runs in the express lane. */
const SMALL_TASK_WEIGHT = 1_000_000;
/** About how many characters of input one evidence record, entity or relationship stands for. */
const RECORD_WEIGHT = 300;

/** A task's size, in characters of input (records counted at RECORD_WEIGHT each). */
function weightOf(task: ThreadTask): number {
  if (task.kind === 'reconcile') return task.evidence.length * RECORD_WEIGHT;
  if (task.kind === 'controls')
    return (
      (task.input.evidence.length + task.input.entities.length + task.input.relationships.length) *
      RECORD_WEIGHT
    );
  let chars = 0;
  if (task.kind === 'snapshot-rows')
    return task.input.graphJson.length + (task.input.previousItems?.length ?? 0);
  if (task.kind === 'change-gate') return changeGateWeight(task.input);
  if (task.kind === 'controls-artifact')
    return (
      task.snapshot.entities.length +
      task.snapshot.relationships.length +
      task.snapshot.evidence.length
    );
  if (task.kind === 'graph-artifact') {
    for (const a of task.analyzers) chars += a.json.length;
    return chars;
  }
  for (const f of task.files) chars += f.text.length;
  return chars;
}

/** Runs one analysis task in the pool; `signal` aborts it (its thread is ended). */
export async function runInPool(task: ThreadTask, signal?: AbortSignal): Promise<ThreadResult> {
  const lane: Lane = weightOf(task) <= SMALL_TASK_WEIGHT ? 'express' : 'main';
  return (await poolOf(lane).run(task, signal ? { signal } : {})) as ThreadResult;
}

/** Ends the pool's threads (worker shutdown). */
export async function closeAnalysisPool(): Promise<void> {
  const all = Object.values(pools);
  for (const lane of Object.keys(pools) as Lane[]) delete pools[lane];
  await Promise.all(all.map((p) => p.destroy()));
}
