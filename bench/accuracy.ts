/**
 * `npm run bench:accuracy -- <checkouts>`: precision and recall of the architecture analyzers on
 * real public systems (issue 4: at least 0.9 on service-to-service and service-to-datastore
 * edges).
 *
 * `bench/accuracy/<owner>__<repo>/` holds, per system, `expected.json`: the ground-truth edges,
 * written by hand from the system's own documentation and manifests (never from this analyzer's
 * output), and `SOURCE.md`: the repository, the files and commits the figures were measured on,
 * and how the ground truth was derived. The systems' files are not part of this repository (they
 * are other projects' code): `<checkouts>` (or ACCURACY_CHECKOUTS) is a folder holding a checkout
 * of each system as `<owner>__<repo>/`; systems without one are listed as skipped.
 * Each checkout runs through the pipeline an audit runs after its source stage (classifyPath,
 * analyzeCode, analyzeCloud, analyzeCicd, reconcile) and the reconciled runtime edges are
 * compared with the expected ones.
 *
 * What counts as an edge: a `connects_to` relationship (a runtime connection; `depends_on` is
 * start-up order and `uses_image`/`mounts` are no calls) between two entities of the kinds
 * service, datastore or queue (a broker is the backing store of the services using it). An
 * expected key matches an entity whose canonical key or identity aliases include it.
 *
 * Prints, per system: true positives, false positives and false negatives (listed), precision
 * and recall. Exits 0 always: it is a measurement (test/accuracy.test.ts tests the scoring and
 * the analyzer behaviour on fixtures of our own).
 */
import fs from 'node:fs';
import path from 'node:path';
import { classifyPath, type SourceType } from '../domain/audits/classify';
import type { SourceFile } from '../analysis/evidence';
import { analyzeCode } from '../analysis/code';
import { analyzeCloud } from '../analysis/cloud';
import { analyzeCicd } from '../analysis/cicd';
import { reconcile, type Graph, type StoredEvidence } from '../analysis/reconcile';

/** The ground truth per system (expected.json, SOURCE.md). */
export const EXPECTED_DIR = path.join(__dirname, 'accuracy');

/** Relationship kinds that are runtime connections, and the entity kinds an edge joins. */
const EDGE_KINDS = new Set(['connects_to']);
const NODE_KINDS = new Set(['service', 'datastore', 'queue']);
/** Files the corpus keeps for people, not for the analyzers. */
const NOT_ANALYZED = new Set(['SOURCE.md', 'expected.json', 'LICENSE']);

export interface Edge {
  from: string;
  to: string;
}

export interface CorpusScore {
  corpus: string;
  files: number;
  expected: number;
  truePositives: Edge[];
  falsePositives: Edge[];
  falseNegatives: Edge[];
  precision: number;
  recall: number;
}

/** Systems with a ground truth, sorted. */
export function listCorpora(dir = EXPECTED_DIR): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, 'expected.json')))
    .map((e) => e.name)
    .sort();
}

function walk(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== '.git' && entry.name !== 'node_modules') visit(full);
      } else if (entry.isFile()) out.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  visit(root);
  return out.filter((p) => !NOT_ANALYZED.has(p)).sort();
}

/** The reconciled graph of a checkout, built the way an audit builds it. */
export async function analyzeTree(root: string): Promise<{ graph: Graph; files: number }> {
  const byType: Record<SourceType, SourceFile[]> = { code: [], cloud: [], cicd: [] };
  const paths = walk(root);
  for (const p of paths) {
    const data = fs.readFileSync(path.join(root, p));
    const head = /\.ya?ml$/i.test(p) ? data.subarray(0, 4096).toString('utf8') : undefined;
    const type = classifyPath(p, head);
    if (!type || data.subarray(0, 8192).includes(0)) continue;
    byType[type].push({ path: p, text: data.toString('utf8') });
  }
  const outputs = [
    await analyzeCode(byType.code),
    await analyzeCloud(byType.cloud),
    await analyzeCicd(byType.cicd),
  ];
  const evidence: StoredEvidence[] = outputs
    .flatMap((o) => o.evidence)
    .map((e, i) => ({ ...e, id: `e${i}` }));
  return { graph: reconcile(evidence), files: paths.length };
}

const kindOf = (key: string) => key.slice(0, key.indexOf(':'));
const edgeId = (e: Edge) => `${e.from} -> ${e.to}`;

/** The graph's runtime edges, each endpoint with every key it is known by (canonical + aliases). */
export function predictedEdges(graph: Graph): Array<{ from: string[]; to: string[] }> {
  const keys = new Map<string, string[]>();
  for (const e of graph.entities) {
    const aliases = Array.isArray(e.attributes.aliases) ? e.attributes.aliases.map(String) : [];
    keys.set(e.canonical_key, [e.canonical_key, ...aliases]);
  }
  return graph.relationships
    .filter(
      (r) =>
        EDGE_KINDS.has(r.kind) &&
        NODE_KINDS.has(kindOf(r.source_key)) &&
        NODE_KINDS.has(kindOf(r.target_key)),
    )
    .map((r) => ({
      from: keys.get(r.source_key) ?? [r.source_key],
      to: keys.get(r.target_key) ?? [r.target_key],
    }));
}

/** Compares predicted edges with the expected ones; an expected key matches any alias. */
export function score(corpus: string, expected: Edge[], graph: Graph, files = 0): CorpusScore {
  const predicted = predictedEdges(graph);
  const matched = new Set<number>();
  const truePositives: Edge[] = [];
  const falseNegatives: Edge[] = [];
  for (const e of expected) {
    const i = predicted.findIndex(
      (p, j) => !matched.has(j) && p.from.includes(e.from) && p.to.includes(e.to),
    );
    if (i >= 0) {
      matched.add(i);
      truePositives.push(e);
    } else falseNegatives.push(e);
  }
  const falsePositives = predicted
    .filter((_, j) => !matched.has(j))
    .map((p) => ({ from: p.from[0]!, to: p.to[0]! }));
  const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b);
  return {
    corpus,
    files,
    expected: expected.length,
    truePositives,
    falsePositives,
    falseNegatives,
    precision: ratio(truePositives.length, truePositives.length + falsePositives.length),
    recall: ratio(truePositives.length, expected.length),
  };
}

/** Reads a corpus's expected.json: `{ "edges": [{ "from": "service:a", "to": "datastore:b" }] }`. */
export function readExpected(dir: string): Edge[] {
  const doc = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8')) as {
    edges?: unknown;
  };
  if (!Array.isArray(doc.edges)) throw new Error(`${dir}/expected.json: edges must be a list`);
  const edges = doc.edges.map((e: any, i: number) => {
    if (typeof e?.from !== 'string' || typeof e?.to !== 'string')
      throw new Error(`${dir}/expected.json: edges[${i}] needs string from and to`);
    return { from: e.from, to: e.to };
  });
  const ids = new Set(edges.map(edgeId));
  if (ids.size !== edges.length) throw new Error(`${dir}/expected.json: duplicate edges`);
  return edges;
}

/** Scores the checkout `<checkouts>/<name>` against `bench/accuracy/<name>/expected.json`. */
export async function scoreCorpus(name: string, checkouts: string): Promise<CorpusScore> {
  const { graph, files } = await analyzeTree(path.join(checkouts, name));
  return score(name, readExpected(path.join(EXPECTED_DIR, name)), graph, files);
}

export function formatScore(s: CorpusScore): string {
  const lines = [
    `${s.corpus} (${s.files} files analysed, ${s.expected} expected edges)`,
    `  true positives:  ${s.truePositives.length}`,
    `  false positives: ${s.falsePositives.length}`,
    ...s.falsePositives.map((e) => `    + ${edgeId(e)}`),
    `  false negatives: ${s.falseNegatives.length}`,
    ...s.falseNegatives.map((e) => `    - ${edgeId(e)}`),
    `  precision ${s.precision.toFixed(3)}  recall ${s.recall.toFixed(3)}`,
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const checkouts = process.argv[2] ?? process.env.ACCURACY_CHECKOUTS;
  if (!checkouts) {
    console.error(
      'usage: npm run bench:accuracy -- <folder with checkouts named <owner>__<repo>> ' +
        `(systems: ${listCorpora().join(', ')}; see bench/accuracy/*/SOURCE.md)`,
    );
    process.exitCode = 2;
    return;
  }
  const scores: CorpusScore[] = [];
  for (const name of listCorpora()) {
    if (!fs.existsSync(path.join(checkouts, name))) {
      console.log(`${name}: skipped, no checkout at ${path.join(checkouts, name)}\n`);
      continue;
    }
    const s = await scoreCorpus(name, checkouts);
    scores.push(s);
    console.log(formatScore(s) + '\n');
  }
  const tp = scores.reduce((n, s) => n + s.truePositives.length, 0);
  const fp = scores.reduce((n, s) => n + s.falsePositives.length, 0);
  const fn = scores.reduce((n, s) => n + s.falseNegatives.length, 0);
  console.log(
    `all corpora: precision ${(tp / Math.max(1, tp + fp)).toFixed(3)}  recall ${(tp / Math.max(1, tp + fn)).toFixed(3)}  (target 0.9 each)`,
  );
}

if (require.main === module) {
  main().catch((err: unknown) => {
    // A measurement: report the failure, but exit 0 as documented.
    console.error(err);
  });
}
