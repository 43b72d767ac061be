/**
 * `npm run bench:analysis -- --services 1000,4000,10000`: the hostile probe's system of issue 24
 * (one docker-compose.yml of N services, each naming another in an environment URL and in
 * `depends_on`; test/helpers/large-compose.ts) through every analysis step an audit runs on it:
 * the three analyzers, reconcile, controls (with what the controls agent derives from them),
 * the uncertainty candidates and the diagram renderings. Each size runs in its own process so
 * its peak RSS is its own; a size that does not finish within BENCH_TIMEOUT_S (default 600) is
 * reported as such. Prints seconds per stage and per size, peak RSS, and the ratio of each
 * size's total to the previous size's next to the ratio of their sizes (linear: equal ratios).
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { analyzeCode } from '../analysis/code';
import { analyzeCloud } from '../analysis/cloud';
import { analyzeCicd } from '../analysis/cicd';
import { reconcile, type StoredEvidence } from '../analysis/reconcile';
import { assessControls } from '../analysis/controls';
import { uncertaintyCandidates } from '../analysis/uncertainty';
import { diagramGraphOf, mermaid, svg } from '../analysis/diagram';
import { classifyPath } from '../domain/audits/classify';
import type { SourceFile } from '../analysis/evidence';
import { largeComposeText } from '../test/helpers/large-compose';
import { intEnv } from './env';

interface SizeResult {
  services: number;
  stages: Array<{ stage: string; ms: number }>;
  entities: number;
  relationships: number;
  evidence: number;
  peakRssMiB: number;
}

/** One size, in this process: prints its result as one JSON line. */
export async function runOneSize(services: number): Promise<void> {
  const stages: SizeResult['stages'] = [];
  // BENCH_SKIP=diagram,...: stages not run (to measure the others where one is too slow).
  const skip = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
  const timed = async <T>(stage: string, fn: () => Promise<T> | T): Promise<T> => {
    const t = performance.now();
    const result = await fn();
    stages.push({ stage, ms: performance.now() - t });
    return result;
  };
  const files: SourceFile[] = [{ path: 'docker-compose.yml', text: largeComposeText(services) }];
  const cloudFiles = await timed('classify', () =>
    files.filter((f) => classifyPath(f.path, f.text.slice(0, 4096)) === 'cloud'),
  );
  const code = await timed('code', () => analyzeCode([]));
  const cloud = await timed('cloud', () => analyzeCloud(cloudFiles));
  const cicd = await timed('cicd', () => analyzeCicd([]));
  const evidence: StoredEvidence[] = [...code.evidence, ...cloud.evidence, ...cicd.evidence].map(
    (e, i) => ({ ...e, id: `e${i}` }),
  );
  const graph = await timed('reconcile', () => reconcile(evidence));
  if (!skip.has('controls'))
    await timed('controls', () => {
      const assessed = assessControls({
        evidence,
        entities: graph.entities,
        relationships: graph.relationships,
        files: files.map((f) => f.path),
      });
      // What the controls agent derives per assessment (activities/audits/agents/controls.ts).
      return assessed.map((a) => {
        const used = new Set(a.evidence_ids);
        return graph.relationships.filter((r) => r.evidence_ids.some((id) => used.has(id))).length;
      });
    });
  if (!skip.has('uncertainty'))
    await timed('uncertainty', () =>
      uncertaintyCandidates({
        entities: graph.entities,
        relationships: graph.relationships,
        evidence: evidence.map((e) => ({
          ...e,
          attributes: e.attributes ?? {},
          location: e.location ?? null,
          object_key: e.object_key ?? null,
        })),
        missingSources: ['code', 'cicd'],
        conflicts: graph.conflicts ?? [],
      }),
    );
  if (!skip.has('diagram'))
    await timed('diagram', () => {
      const g = diagramGraphOf(graph);
      return mermaid(g).length + svg(g).length;
    });
  const result: SizeResult = {
    services,
    stages,
    entities: graph.entities.length,
    relationships: graph.relationships.length,
    evidence: evidence.length,
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  console.log(JSON.stringify(result));
}

/** Every size in its own child process, then the table and the growth ratios. */
export function runSizes(sizes: number[]): void {
  const timeoutMs = intEnv('BENCH_TIMEOUT_S', 600) * 1000;
  const results: Array<SizeResult | { services: number; error: string }> = [];
  for (const services of sizes) {
    const t = performance.now();
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, process.argv[1]!, '--services-one', String(services)],
      { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
    );
    const line = child.stdout
      ?.split('\n')
      .reverse()
      .find((l) => l.startsWith('{'));
    if (child.status === 0 && line) results.push(JSON.parse(line) as SizeResult);
    else
      results.push({
        services,
        error: child.error
          ? `did not finish in ${Math.round((performance.now() - t) / 1000)} s (${child.error.message})`
          : `exit ${child.status ?? child.signal}: ${(child.stderr ?? '').split('\n').find((l) => /Error/.test(l)) ?? ''}`,
      });
  }
  const done = results.filter((r): r is SizeResult => !('error' in r));
  const stageNames = done[0]?.stages.map((s) => s.stage) ?? [];
  console.log(`hostile compose system (issue 24), seconds per stage`);
  console.log(['services'.padEnd(12), ...sizes.map((s) => String(s).padStart(10))].join(''));
  const cell = (r: (typeof results)[number], f: (x: SizeResult) => string) =>
    ('error' in r ? 'n/a' : f(r)).padStart(10);
  for (const stage of stageNames)
    console.log(
      [
        stage.padEnd(12),
        ...results.map((r) =>
          cell(r, (x) => ((x.stages.find((s) => s.stage === stage)?.ms ?? 0) / 1000).toFixed(2)),
        ),
      ].join(''),
    );
  const totalMs = (x: SizeResult) => x.stages.reduce((s, st) => s + st.ms, 0);
  console.log(
    [
      'total'.padEnd(12),
      ...results.map((r) => cell(r, (x) => (totalMs(x) / 1000).toFixed(2))),
    ].join(''),
  );
  console.log(
    ['peak RSS MiB'.padEnd(12), ...results.map((r) => cell(r, (x) => String(x.peakRssMiB)))].join(
      '',
    ),
  );
  for (const r of results) {
    if ('error' in r) console.log(`${r.services} services: ${r.error}`);
    else
      console.log(
        `${r.services} services: ${r.entities} entities, ${r.relationships} relationships, ${r.evidence} evidence`,
      );
  }
  for (let i = 1; i < results.length; i++) {
    const a = results[i - 1]!;
    const b = results[i]!;
    if ('error' in a || 'error' in b) continue;
    console.log(
      `${a.services} -> ${b.services}: size x${(b.services / a.services).toFixed(1)}, time x${(totalMs(b) / totalMs(a)).toFixed(1)}, peak RSS x${(b.peakRssMiB / a.peakRssMiB).toFixed(1)}`,
    );
  }
  const last = done.find((r) => r.services === 10_000);
  if (last)
    console.log(
      `target 10,000 services < 30 s: ${totalMs(last) < 30_000 ? 'met' : 'NOT met'} (${(totalMs(last) / 1000).toFixed(1)} s)`,
    );
}
