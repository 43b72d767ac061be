/**
 * The analysis pool (analysis/pool.ts): analyzers, reconcile and controls run in worker threads, not on the
 * main thread, and answer exactly what they answer when called directly.
 */
import test from 'ava';
import { isMainThread, threadId } from 'node:worker_threads';
import { runInPool } from '../analysis/pool';
import fs from 'node:fs';
import { analysisNice, analysisThreads } from '../platform/config';
import { analyzeCode } from '../analysis/code';
import { analyzeCloud } from '../analysis/cloud';
import { analyzeCicd } from '../analysis/cicd';
import { reconcile, type StoredEvidence } from '../analysis/reconcile';
import { assessControls } from '../analysis/controls';
import { classifyPath } from '../domain/audits/classify';
import type { SourceFile } from '../analysis/evidence';
import { polyglotFiles } from './fixtures/polyglot';
import { largeComposeText } from './helpers/large-compose';
import { evaluateChangeGate } from '../domain/changes/service';
import { DEFAULT_GATE_POLICY } from '../domain/changes/gate';
import { impactOf, normalizeObserved } from '../domain/changes/change-sets';
import type { DependencyGraph } from '../analysis/dependencies';

const files = Object.entries(polyglotFiles()).map(([path, text]) => ({ path, text }));
const ofType = (type: string): SourceFile[] =>
  files.filter((f) => classifyPath(f.path, f.text.slice(0, 4096)) === type);

test('each analyzer answers in a pool thread what it answers when called here', async (t) => {
  const direct = { code: analyzeCode, cloud: analyzeCloud, cicd: analyzeCicd } as const;
  const evidence: StoredEvidence[] = [];
  for (const kind of ['code', 'cloud', 'cicd'] as const) {
    const input = ofType(kind);
    t.true(input.length > 0, kind);
    const pooled = await runInPool({ kind, files: input });
    t.is(pooled.kind, kind);
    t.not(pooled.threadId, threadId, `${kind} ran in another thread`);
    const here = await direct[kind](input);
    t.deepEqual(pooled.output, here, kind);
    if (pooled.kind === kind)
      for (const e of pooled.output.evidence) evidence.push({ ...e, id: `e${evidence.length}` });
  }
  const graph = await runInPool({ kind: 'reconcile', evidence });
  t.is(graph.kind, 'reconcile');
  t.deepEqual(graph.output, reconcile(evidence));
  const g = reconcile(evidence);
  const controlInput = {
    evidence,
    entities: g.entities,
    relationships: g.relationships,
    files: files.map((f) => f.path),
  };
  const assessed = await runInPool({ kind: 'controls', input: controlInput });
  t.is(assessed.kind, 'controls');
  t.deepEqual(assessed.output, assessControls(controlInput));
  t.true(isMainThread);
});

test('the stored artifacts built in a pool thread are the JSON of what the analyzers and reconcile answer here', async (t) => {
  // Issue 24, fair sharing: the main thread stores these texts without building or parsing them.
  const direct = { code: analyzeCode, cloud: analyzeCloud, cicd: analyzeCicd } as const;
  const unread = [{ path: 'big.bin', reason: 'binary_file', message: 'big.bin looks binary' }];
  const texts: Array<{ agentKey: string; json: string }> = [];
  const evidence: StoredEvidence[] = [];
  const gaps: unknown[] = [];
  // In agent-key order, as reconcile numbers the evidence.
  for (const kind of ['cicd', 'cloud', 'code'] as const) {
    const input = ofType(kind);
    const pooled = await runInPool({
      kind: 'analyzer-artifact',
      stage: kind,
      files: input,
      unread,
    });
    if (pooled.kind !== 'analyzer-artifact') return t.fail(pooled.kind);
    t.not(pooled.threadId, threadId);
    const here = await direct[kind](input);
    const artifact = {
      source_type: kind,
      evidence: here.evidence,
      gaps: [...unread, ...here.gaps],
    };
    t.deepEqual(JSON.parse(pooled.output.artifact.json), JSON.parse(JSON.stringify(artifact)));
    t.like(pooled.output, {
      artifact: { evidence: here.evidence.length, entities: 0 },
      subjects: new Set(here.evidence.map((e) => e.subject_key)).size,
      gaps: artifact.gaps,
    });
    texts.push({ agentKey: `${kind}-analyzer`, json: pooled.output.artifact.json });
    for (const e of here.evidence) evidence.push({ ...e, id: `e${evidence.length}` });
    gaps.push(...artifact.gaps);
  }
  const graph = await runInPool({ kind: 'graph-artifact', analyzers: [...texts].reverse() });
  if (graph.kind !== 'graph-artifact') return t.fail(graph.kind);
  const g = reconcile(JSON.parse(JSON.stringify(evidence)) as StoredEvidence[]);
  t.deepEqual(
    JSON.parse(graph.output.artifact.json),
    JSON.parse(JSON.stringify({ ...g, evidence, gaps })),
  );
  t.like(graph.output, {
    artifact: { evidence: evidence.length, entities: g.entities.length },
    relationships: g.relationships.length,
  });
});

test('the change gate evaluated in a pool thread from the graphs as text is the one evaluated here', async (t) => {
  // Issue 24, fair sharing: the `changes` stage passes both snapshots' graphs as JSON text.
  const graphOf = async (input: SourceFile[]) => {
    const evidence: StoredEvidence[] = [];
    for (const kind of ['code', 'cloud', 'cicd'] as const) {
      const { evidence: found } = await {
        code: analyzeCode,
        cloud: analyzeCloud,
        cicd: analyzeCicd,
      }[kind](input.filter((f) => classifyPath(f.path, f.text.slice(0, 4096)) === kind));
      for (const e of found) evidence.push({ ...e, id: `e${evidence.length}` });
    }
    return reconcile(evidence);
  };
  const before = await graphOf(files.filter((f) => !f.path.includes('docker-compose')));
  const after = await graphOf(files);
  const side = (id: string, g: typeof after) => ({
    id,
    sources: ['code', 'cloud', 'cicd'],
    entities: g.entities as unknown as Array<Record<string, unknown>>,
    relationships: g.relationships as unknown as Array<Record<string, unknown>>,
  });
  const asText = (s: ReturnType<typeof side>) => ({
    ...s,
    entities: JSON.stringify(s.entities),
    relationships: JSON.stringify(s.relationships),
  });
  const context = {
    policy: DEFAULT_GATE_POLICY,
    version: 1,
    currentAssessments: [],
    previousAssessments: [],
    decisions: [],
    uncertainties: [],
  };
  const [prev, cur] = [side('s1', before), side('s2', after)];
  const pooled = await runInPool({
    kind: 'change-gate',
    input: { current: asText(cur), previous: asText(prev), context, changeRefs: ['main'] },
  });
  if (pooled.kind !== 'change-gate') return t.fail(pooled.kind);
  t.not(pooled.threadId, threadId);
  const here = evaluateChangeGate(
    JSON.parse(JSON.stringify(cur)) as typeof cur,
    JSON.parse(JSON.stringify(prev)) as typeof prev,
    context,
    ['main'],
  );
  t.true(here.gate.items.length > 0, 'the compose file adds services');
  const { observed, ...evaluated } = pooled.output;
  t.deepEqual(evaluated, here);
  const normalized = normalizeObserved(here.gate.items);
  t.deepEqual(observed, {
    normalized,
    impact: impactOf(JSON.parse(JSON.stringify(cur)) as DependencyGraph, normalized),
  });
  const first = await runInPool({
    kind: 'change-gate',
    input: { current: asText(cur), previous: null, context, changeRefs: [] },
  });
  if (first.kind !== 'change-gate') return t.fail(first.kind);
  t.is(first.output.observed, null);
  t.is(first.output.gate.outcome, evaluateChangeGate(cur, null, context, []).gate.outcome);
});

test('an aborted task rejects', async (t) => {
  const controller = new AbortController();
  const running = runInPool({ kind: 'code', files: ofType('code') }, controller.signal);
  controller.abort();
  await t.throwsAsync(running, { name: 'AbortError' });
  // The pool keeps serving.
  t.is((await runInPool({ kind: 'cicd', files: ofType('cicd') })).kind, 'cicd');
});

test('a small task is not held behind a large one: it answers while the large one still runs', async (t) => {
  // Issue 24's fair sharing: a 10,000-service compose file (seconds of analysis) occupies every
  // main-lane thread; a tiny audit's analysis runs in the express lane meanwhile.
  const order: string[] = [];
  const large = runInPool({
    kind: 'cloud',
    files: [{ path: 'docker-compose.yml', text: largeComposeText(10_000) }],
  }).then((r) => {
    order.push('large');
    return r;
  });
  const small = runInPool({ kind: 'cicd', files: ofType('cicd') }).then((r) => {
    order.push('small');
    return r;
  });
  const [big, tiny] = await Promise.all([large, small]);
  t.deepEqual(order, ['small', 'large']);
  t.is(tiny.kind, 'cicd');
  t.not(tiny.threadId, big.threadId, 'another thread');
  if (big.kind === 'cloud') t.true(big.output.evidence.length >= 10_000);
});

/** The nice value of each thread of this process, by its thread id (Linux: /proc/self/task). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis; nice is field 19 of stat(5).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    nices.set(Number(tid), Number(fields[16]));
  }
  return nices;
}

(process.platform === 'linux' ? test : test.skip)(
  'a main-lane thread runs at a lower CPU priority (ANALYSIS_NICE); the main thread keeps its own',
  async (t) => {
    // Issue 24, fair sharing: while a large audit's analysis holds a CPU, everyone else's work
    // is scheduled first. `ps -L -o tid,ni,comm -p <worker pid>` shows the same.
    const big = await runInPool({
      kind: 'cloud',
      // Over a megabyte: the main lane.
      files: [{ path: 'docker-compose.yml', text: largeComposeText(6_000) }],
    });
    t.is(big.kind, 'cloud');
    const nices = threadNices();
    t.is(nices.get(process.pid), 0, 'the main thread is not lowered');
    t.true(
      [...nices.values()].includes(analysisNice()),
      `a thread at nice ${analysisNice()}: ${JSON.stringify([...nices])}`,
    );
  },
);

test('ANALYSIS_NICE: 10 by default, 0 to 19, a bad value is refused', (t) => {
  t.is(analysisNice({}), 10);
  t.is(analysisNice({ ANALYSIS_NICE: '0' }), 0);
  t.is(analysisNice({ ANALYSIS_NICE: '19' }), 19);
  t.throws(() => analysisNice({ ANALYSIS_NICE: '20' }), { message: /ANALYSIS_NICE/ });
  t.throws(() => analysisNice({ ANALYSIS_NICE: '-1' }), { message: /ANALYSIS_NICE/ });
});

test('ANALYSIS_THREADS: at least one thread, a bad value is refused', (t) => {
  t.is(analysisThreads({ ANALYSIS_THREADS: '3' }), 3);
  t.true(analysisThreads({}) >= 1);
  t.throws(() => analysisThreads({ ANALYSIS_THREADS: '0' }), { message: /ANALYSIS_THREADS/ });
  t.throws(() => analysisThreads({ ANALYSIS_THREADS: 'two' }), { message: /ANALYSIS_THREADS/ });
});
