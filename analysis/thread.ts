/**
 * Runs in a worker thread of the analysis pool (analysis/pool.ts): the analyzers and reconcile
 * are pure, CPU-bound functions over plain data, so they run here rather than on the worker's
 * main thread.
 */
import { analyzeCode } from './code';
import { analyzeCloud } from './cloud';
import { analyzeCicd } from './cicd';
import { reconcile, type Graph, type StoredEvidence } from './reconcile';
import type { AnalyzerOutput, SourceFile } from './evidence';
import { threadId } from 'node:worker_threads';

export type ThreadTask =
  | { kind: 'code' | 'cloud' | 'cicd'; files: SourceFile[] }
  | { kind: 'reconcile'; evidence: StoredEvidence[] };

const ANALYZERS = { code: analyzeCode, cloud: analyzeCloud, cicd: analyzeCicd } as const;

export type ThreadResult =
  | { kind: 'code' | 'cloud' | 'cicd'; threadId: number; output: AnalyzerOutput }
  | { kind: 'reconcile'; threadId: number; output: Graph };

export default async function run(task: ThreadTask): Promise<ThreadResult> {
  if (task.kind === 'reconcile')
    return { kind: task.kind, threadId, output: reconcile(task.evidence) };
  return { kind: task.kind, threadId, output: await ANALYZERS[task.kind](task.files) };
}
