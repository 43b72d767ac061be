/**
 * Runs in a worker thread of the analysis pool (analysis/pool.ts): the analyzers and reconcile
 * are pure, CPU-bound functions over plain data, so they run here rather than on the worker's
 * main thread. The `*-artifact` and `snapshot-rows` tasks take and give JSON text: what an audit
 * stores is parsed, built and serialised here too, so that the main thread only moves strings
 * (issue 24, fair sharing; docs/decisions.md).
 */
import { analyzeCode } from './code';
import { analyzeCloud } from './cloud';
import { analyzeCicd } from './cicd';
import { reconcile, type Graph, type StoredEvidence } from './reconcile';
import { assessControls, type Assessment, type ControlInput } from './controls';
import type { AnalyzerGap, AnalyzerOutput, SourceFile } from './evidence';
import {
  analyzerArtifact,
  graphArtifact,
  type AnalyzerArtifact,
  type AnalyzerArtifactText,
  type GraphArtifact,
} from './artifacts';
import { controlsArtifact, type SnapshotText } from './controls-artifact';
import { snapshotRows, type SnapshotRows, type SnapshotRowsInput } from './snapshot-rows';
import { changeGate, type ChangeGateInput, type ChangeGateOutput } from './change-gate';
import os from 'node:os';
import { isMainThread, threadId, workerData } from 'node:worker_threads';

/** What the pool gives each of its threads (analysis/pool.ts). */
export interface PoolThreadData {
  /** How much to lower this thread's CPU priority (a nice increment; 0: not at all). */
  nice: number;
}

/**
 * Lowers this thread's CPU priority by `nice`. On Linux a nice value belongs to a thread, and
 * `setpriority(PRIO_PROCESS, 0, n)` (os.setPriority(n)) sets the calling thread's only: the
 * worker's main thread and its other threads keep theirs. Elsewhere it would lower the whole
 * process, so it is not done.
 */
function lowerOwnPriority(nice: number): void {
  if (isMainThread || nice <= 0 || process.platform !== 'linux') return;
  os.setPriority(Math.min(19, os.getPriority() + nice));
}
lowerOwnPriority((workerData as PoolThreadData | undefined)?.nice ?? 0);

export type ThreadTask =
  | { kind: 'code' | 'cloud' | 'cicd'; files: SourceFile[] }
  | { kind: 'reconcile'; evidence: StoredEvidence[] }
  | { kind: 'controls'; input: ControlInput }
  /** An analyzer whose result comes back as its stored artifact (JSON text). */
  | {
      kind: 'analyzer-artifact';
      stage: 'code' | 'cloud' | 'cicd';
      files: SourceFile[];
      unread: AnalyzerGap[];
    }
  /** Reconcile from the analyzers' stored artifacts to its own (JSON text in and out). */
  | { kind: 'graph-artifact'; analyzers: AnalyzerArtifactText[] }
  /** The controls assessed on a snapshot given as JSON text, to their stored artifact. */
  | { kind: 'controls-artifact'; snapshot: SnapshotText; files: string[] }
  /** The rows of an audit's snapshot from its reconcile artifact (JSON text in and out). */
  | { kind: 'snapshot-rows'; input: SnapshotRowsInput }
  /** The `changes` stage's diff and gate, the two snapshots' graphs given as JSON text. */
  | { kind: 'change-gate'; input: ChangeGateInput };

const ANALYZERS = { code: analyzeCode, cloud: analyzeCloud, cicd: analyzeCicd } as const;

export type ThreadResult =
  | { kind: 'code' | 'cloud' | 'cicd'; threadId: number; output: AnalyzerOutput }
  | { kind: 'reconcile'; threadId: number; output: Graph }
  | { kind: 'controls'; threadId: number; output: Assessment[] }
  | { kind: 'analyzer-artifact'; threadId: number; output: AnalyzerArtifact }
  | { kind: 'graph-artifact'; threadId: number; output: GraphArtifact }
  | { kind: 'controls-artifact'; threadId: number; output: ReturnType<typeof controlsArtifact> }
  | { kind: 'snapshot-rows'; threadId: number; output: SnapshotRows }
  | { kind: 'change-gate'; threadId: number; output: ChangeGateOutput };

export default async function run(task: ThreadTask): Promise<ThreadResult> {
  if (task.kind === 'reconcile')
    return { kind: task.kind, threadId, output: reconcile(task.evidence) };
  // Controls over a 10,000-service graph take seconds: off the worker's main thread too.
  if (task.kind === 'controls')
    return { kind: task.kind, threadId, output: assessControls(task.input) };
  if (task.kind === 'snapshot-rows')
    return { kind: task.kind, threadId, output: snapshotRows(task.input) };
  if (task.kind === 'change-gate')
    return { kind: task.kind, threadId, output: changeGate(task.input) };
  if (task.kind === 'controls-artifact')
    return { kind: task.kind, threadId, output: controlsArtifact(task.snapshot, task.files) };
  if (task.kind === 'graph-artifact')
    return { kind: task.kind, threadId, output: graphArtifact(task.analyzers) };
  if (task.kind === 'analyzer-artifact') {
    const output = await ANALYZERS[task.stage](task.files);
    return { kind: task.kind, threadId, output: analyzerArtifact(task.stage, output, task.unread) };
  }
  return { kind: task.kind, threadId, output: await ANALYZERS[task.kind](task.files) };
}
