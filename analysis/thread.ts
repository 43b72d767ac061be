/**
 * Runs in a worker thread of the analysis pool (analysis/pool.ts): the analyzers and reconcile
 * are pure, CPU-bound functions over plain data, so they run here rather than on the worker's
 * main thread.
 */
import { analyzeCode } from './code';
import { analyzeCloud } from './cloud';
import { analyzeCicd } from './cicd';
import { reconcile, type Graph, type StoredEvidence } from './reconcile';
import { assessControls, type Assessment, type ControlInput } from './controls';
import type { AnalyzerOutput, SourceFile } from './evidence';
import { threadId } from 'node:worker_threads';

export type ThreadTask =
  | { kind: 'code' | 'cloud' | 'cicd'; files: SourceFile[] }
  | { kind: 'reconcile'; evidence: StoredEvidence[] }
  | { kind: 'controls'; input: ControlInput };

const ANALYZERS = { code: analyzeCode, cloud: analyzeCloud, cicd: analyzeCicd } as const;

export type ThreadResult =
  | { kind: 'code' | 'cloud' | 'cicd'; threadId: number; output: AnalyzerOutput }
  | { kind: 'reconcile'; threadId: number; output: Graph }
  | { kind: 'controls'; threadId: number; output: Assessment[] };

export default async function run(task: ThreadTask): Promise<ThreadResult> {
  if (task.kind === 'reconcile')
    return { kind: task.kind, threadId, output: reconcile(task.evidence) };
  // Controls over a 10,000-service graph take seconds: off the worker's main thread too.
  if (task.kind === 'controls')
    return { kind: task.kind, threadId, output: assessControls(task.input) };
  return { kind: task.kind, threadId, output: await ANALYZERS[task.kind](task.files) };
}
