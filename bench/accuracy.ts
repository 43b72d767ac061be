/**
 * Long because the checkout reading, the scoring rules (aliases, ambiguous edges, merged
 * entities, calibration) and the report are one measure read top to bottom; it is no production file.
 *
 * `npm run bench:accuracy -- <checkouts>`: how well the architecture analyzers recover the
 * runtime graph of real public systems, measured on WHOLE checkouts (issue 4: at least 0.9 on
 * service-to-service and service-to-datastore edges; issue 12: the whole-checkout corpus).
 *
 * `bench/accuracy/<system>/` holds, per system, `expected.json`: the ground truth, written by hand
 * from the system's own documentation (README architecture section or diagram) and its
 * code/manifests (never from this analyzer's output), and `SOURCE.md`: the repository, the pinned
 * commit, the sub-folder if the system is one folder of a checkout, and how the ground truth was
 * derived. The systems' files are not part of this repository (they are other projects' code):
 * `<checkouts>` (or ACCURACY_CHECKOUTS) is a folder holding a git checkout of each repository as
 * `<owner>__<repo>/` (the `repository` of expected.json; several systems may share one checkout,
 * each with its own `subdir`); systems without one are listed as skipped.
 * `bench/corpus-checkouts.sh [folder]` builds that folder (default /tmp/corpus) from the pins.
 *
 * expected.json:
 *   {
 *     "repository": "owner/repo", "commit": "<40 hex>", "subdir": "samples/x" (optional),
 *     "services": ["service:a", ...], "datastores": ["datastore:db", "queue:kafka", ...],
 *     "aliases": { "service:a": ["service:a-svc"] },      // other names of one thing
 *     "edges": [{ "from": "service:a", "to": "datastore:db" }],   // the core edges
 *     "ambiguous": [{ "from": ..., "to": ... } | "service:x"]    // count neither way
 *   }
 *
 * Each checkout runs through what an audit runs: every file git tracks (under `subdir`, like a
 * source scope `include`), symlinks and files over the maximum stored file size
 * (MAX_STORED_FILE_BYTES, 2 MiB by default, as in platform/config.ts) listed but not read, binary
 * files skipped, classifyPath on each path (with the head of YAML files and the README), then analyzeCode,
 * analyzeCloud, analyzeCicd and reconcile (activities/audits/index.ts, agents/analyzers.ts).
 *
 * What counts as an edge: a `connects_to` relationship (a runtime connection; `depends_on` is
 * start-up order and `uses_image`/`mounts` are no calls) between two entities of the kinds
 * service, datastore or queue (a broker is the backing store of the services using it). An
 * expected key matches an entity whose canonical key or identity aliases include it, or one of
 * the expected.json aliases of it. A service edge joins two services; a data edge has a datastore
 * or queue at one end. Precision is over the predicted edges of that class that are not
 * ambiguous; core recall over the expected edges of that class.
 *
 * Prints, per system and overall: service-edge and data-edge precision and core recall, the
 * false entities (services, datastores and queues in the graph that are neither expected nor an
 * alias nor ambiguous), the share of relationship evidence that carries a location and a content
 * hash, and seconds per system. Exits 0 always: it is a measurement (test/accuracy.test.ts tests
 * the scoring and the analyzer behaviour on fixtures of our own).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { classifyPath, headBytes, type SourceType } from '../domain/audits/classify';
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
/** Files a corpus folder keeps for people, skipped when a tree is not a git checkout. */
const NOT_ANALYZED = new Set(['SOURCE.md', 'expected.json', 'LICENSE']);
/** The audit's maximum stored file size (platform/config.ts, MAX_STORED_FILE_BYTES). */
export const MAX_STORED_FILE_BYTES =
  Number(process.env.MAX_STORED_FILE_BYTES) > 0
    ? Number(process.env.MAX_STORED_FILE_BYTES)
    : 2 * 1024 * 1024;

export interface Edge {
  from: string;
  to: string;
}

/** A system's ground truth (expected.json). */
export interface Expected {
  repository: string | null;
  commit: string | null;
  subdir: string | null;
  services: string[];
  datastores: string[];
  /** Expected key -> other names of the same thing. */
  aliases: Record<string, string[]>;
  edges: Edge[];
  ambiguousEdges: Edge[];
  ambiguousEntities: string[];
}

/** Precision and core recall of one edge class (service -> service, or with a datastore/queue). */
export interface ClassScore {
  expected: number;
  truePositives: Edge[];
  falsePositives: Edge[];
  falseNegatives: Edge[];
  /** Predicted edges the ground truth leaves open: counted neither way. */
  ambiguous: Edge[];
  precision: number;
  recall: number;
}

export interface CorpusScore {
  corpus: string;
  commit: string | null;
  files: number;
  /** Files read by the analyzers (classified, stored, not binary). */
  analyzed: number;
  expected: number;
  service: ClassScore;
  data: ClassScore;
  /** All classes together (the issue-4 figures). */
  truePositives: Edge[];
  falsePositives: Edge[];
  falseNegatives: Edge[];
  precision: number;
  recall: number;
  /** Graph services/datastores/queues that are neither expected, an alias, nor ambiguous. */
  falseEntities: string[];
  /** Graph entities whose names cover several expected things (they merged them). */
  mergedEntities: string[];
  /** Relationship evidence records, and how many carry a location and a content hash. */
  relationshipEvidence: number;
  locatedEvidence: number;
  seconds: number;
  calibration: Calibration;
}

/**
 * Whether confidence means something (docs/decisions.md, "Edge confidence"): of the predicted
 * edges at confidence >= 0.7, how many are true; of those below the gate floor 0.5, how many
 * there are and how many are true. Edges the ground truth leaves open count in neither share.
 */
export interface Calibration {
  high: { edges: number; true: number };
  low: { edges: number; true: number };
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

/** Every file git tracks in the checkout at `root` (null if it is not a git checkout). */
function tracked(root: string): string[] | null {
  if (!fs.existsSync(path.join(root, '.git'))) return null;
  let out: Buffer;
  try {
    out = execFileSync('git', ['-C', root, 'ls-files', '-z'], {
      maxBuffer: 256 << 20,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch {
    return null; // a `.git` that is no repository: read the folder as it is
  }
  return out
    .toString('utf8')
    .split('\0')
    .filter((p) => p !== '')
    .sort();
}

/** The checkout's HEAD commit, or null. */
export function headCommit(root: string): string | null {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { stdio: 'pipe' })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

export interface TreeAnalysis {
  graph: Graph;
  evidence: StoredEvidence[];
  /** Files listed (tracked by git under subdir, or every file when not a git checkout). */
  files: number;
  /** Files the analyzers read. */
  analyzed: number;
  /** Files over the stored size limit (listed, not read, as in an audit). */
  tooLarge: number;
}

/**
 * The reconciled graph of a checkout, built the way an audit builds it: every file git tracks
 * (or, outside git, every file but .git/, node_modules/ and the corpus notes), limited to
 * `subdir/` when given (paths stay relative to the checkout, like a source scope include).
 */
export async function analyzeTree(root: string, subdir?: string | null): Promise<TreeAnalysis> {
  const byType: Record<SourceType, SourceFile[]> = { code: [], cloud: [], cicd: [] };
  const prefix = subdir ? subdir.replace(/^\/+|\/+$/g, '') + '/' : '';
  const paths = (tracked(root) ?? walk(root)).filter((p) => p.startsWith(prefix));
  let analyzed = 0;
  let tooLarge = 0;
  for (const p of paths) {
    const full = path.join(root, p);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(full);
    } catch {
      continue; // tracked but absent from the work tree
    }
    if (!stat.isFile()) continue; // symlinks and submodules are listed, never read
    if (stat.size > MAX_STORED_FILE_BYTES) {
      tooLarge += 1;
      continue;
    }
    const data = fs.readFileSync(full);
    const head = headBytes(p) ? data.subarray(0, headBytes(p)).toString('utf8') : undefined;
    const type = classifyPath(p, head);
    if (!type || data.subarray(0, 8192).includes(0)) continue;
    byType[type].push({ path: p, text: data.toString('utf8') });
    analyzed += 1;
  }
  const outputs = [
    await analyzeCode(byType.code),
    await analyzeCloud(byType.cloud),
    await analyzeCicd(byType.cicd),
  ];
  const evidence: StoredEvidence[] = outputs
    .flatMap((o) => o.evidence)
    .map((e, i) => ({ ...e, id: `e${i}` }));
  return { graph: reconcile(evidence), evidence, files: paths.length, analyzed, tooLarge };
}

const kindOf = (key: string) => key.slice(0, key.indexOf(':'));
const edgeId = (e: Edge) => `${e.from} -> ${e.to}`;
const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b);

/** The graph's runtime edges, each endpoint with every key it is known by (canonical + aliases). */
export function predictedEdges(
  graph: Graph,
): Array<{ from: string[]; to: string[]; confidence: number }> {
  const keys = entityKeys(graph);
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
      confidence: Number(r.confidence),
    }));
}

function entityKeys(graph: Graph): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  for (const e of graph.entities) {
    const aliases = Array.isArray(e.attributes.aliases) ? e.attributes.aliases.map(String) : [];
    keys.set(e.canonical_key, [e.canonical_key, ...aliases]);
  }
  return keys;
}

/** A ground truth with nothing but edges (the entities are their endpoints). */
export function expectedOf(edges: Edge[], more: Partial<Expected> = {}): Expected {
  return {
    repository: null,
    commit: null,
    subdir: null,
    services: [],
    datastores: [],
    aliases: {},
    edges,
    ambiguousEdges: [],
    ambiguousEntities: [],
    ...more,
  };
}

/** Service edge: both ends services (after aliases); data edge: a datastore or queue at one end. */
const classOf = (from: string, to: string): 'service' | 'data' =>
  kindOf(from) === 'service' && kindOf(to) === 'service' ? 'service' : 'data';

/**
 * Compares the graph with a system's ground truth. An expected key matches a graph entity whose
 * canonical key or identity aliases include it or one of its expected.json aliases.
 */
export function score(
  corpus: string,
  truth: Expected | Edge[],
  graph: Graph,
  files = 0,
  extra: { evidence?: StoredEvidence[]; seconds?: number; analyzed?: number } = {},
): CorpusScore {
  const exp = Array.isArray(truth) ? expectedOf(truth) : truth;
  // Every name of an expected thing -> its expected key.
  const nameOf = new Map<string, string>();
  const known = [
    ...exp.services,
    ...exp.datastores,
    ...exp.edges.flatMap((e) => [e.from, e.to]),
    ...exp.ambiguousEdges.flatMap((e) => [e.from, e.to]),
    ...exp.ambiguousEntities,
  ];
  for (const k of known) nameOf.set(k, k);
  for (const [k, names] of Object.entries(exp.aliases)) for (const n of names) nameOf.set(n, k);
  /**
   * The expected keys an entity (given by all its keys) stands for, best first. An entity whose
   * names cover several declared things (services/datastores) merged them: it stands only for
   * what its canonical key names, and is reported as merged.
   */
  const declared = new Set([...exp.services, ...exp.datastores]);
  const merged = new Set<string>();
  const resolve = (keys: string[]): string[] => {
    const all = [...new Set(keys.filter((k) => nameOf.has(k)).map((k) => nameOf.get(k)!))];
    if (all.filter((k) => declared.has(k)).length <= 1) return all;
    merged.add(keys[0]!);
    return nameOf.has(keys[0]!) ? [nameOf.get(keys[0]!)!] : [];
  };
  const predicted = predictedEdges(graph).map((p) => {
    const from = resolve(p.from);
    const to = resolve(p.to);
    return {
      from: from[0] ?? p.from[0]!,
      to: to[0] ?? p.to[0]!,
      froms: from.length ? from : [p.from[0]!],
      tos: to.length ? to : [p.to[0]!],
      confidence: p.confidence,
    };
  });
  const ambiguousIds = new Set(exp.ambiguousEdges.map(edgeId));
  const ambiguousEntities = new Set(exp.ambiguousEntities);
  const classes = { service: emptyClass(), data: emptyClass() };
  const matched = new Set<number>();
  for (const e of exp.edges) {
    const c = classes[classOf(e.from, e.to)];
    c.expected += 1;
    const i = predicted.findIndex(
      (p, j) => !matched.has(j) && p.froms.includes(e.from) && p.tos.includes(e.to),
    );
    if (i >= 0) {
      matched.add(i);
      c.truePositives.push(e);
    } else c.falseNegatives.push(e);
  }
  // A predicted edge that repeats a matched one (two entities for one thing) is no new claim.
  const seen = new Set<string>([
    ...[...matched].map((j) => edgeId(predicted[j]!)),
    ...classes.service.truePositives.map(edgeId),
    ...classes.data.truePositives.map(edgeId),
  ]);
  // Per predicted edge: true (matched or repeating a match), false, or left open.
  const verdict = new Map<number, boolean | null>([...matched].map((j) => [j, true]));
  predicted.forEach((p, j) => {
    if (matched.has(j)) return;
    if (seen.has(edgeId(p))) {
      verdict.set(j, verdict.get(predicted.findIndex((q) => edgeId(q) === edgeId(p))) ?? true);
      return;
    }
    seen.add(edgeId(p));
    const edge = { from: p.from, to: p.to };
    const c = classes[classOf(p.from, p.to)];
    const open =
      p.froms.some((f) => p.tos.some((t) => ambiguousIds.has(edgeId({ from: f, to: t })))) ||
      p.froms.some((f) => ambiguousEntities.has(f)) ||
      p.tos.some((t) => ambiguousEntities.has(t));
    verdict.set(j, open ? null : false);
    if (open) c.ambiguous.push(edge);
    else c.falsePositives.push(edge);
  });
  const calibration: Calibration = { high: { edges: 0, true: 0 }, low: { edges: 0, true: 0 } };
  predicted.forEach((p, j) => {
    const t = verdict.get(j);
    if (t === null || t === undefined) return;
    const band =
      p.confidence >= 0.7 ? calibration.high : p.confidence < 0.5 ? calibration.low : null;
    if (!band) return;
    band.edges += 1;
    if (t) band.true += 1;
  });
  for (const c of Object.values(classes)) {
    c.precision = ratio(c.truePositives.length, c.truePositives.length + c.falsePositives.length);
    c.recall = ratio(c.truePositives.length, c.expected);
  }

  const falseEntities = [...entityKeys(graph).entries()]
    .filter(([key]) => NODE_KINDS.has(kindOf(key)))
    .filter(([key, keys]) => resolve(keys).length === 0 && !merged.has(key))
    .map(([key]) => key)
    .sort();
  const mergedEntities = [...merged].sort();

  const relationshipEvidence = (extra.evidence ?? []).filter((e) => e.relationship_kind !== null);
  const locatedEvidence = relationshipEvidence.filter(
    (e) =>
      typeof e.location?.path === 'string' &&
      e.location.path !== '' &&
      Number.isInteger(e.location.start_line) &&
      e.location.start_line >= 1 &&
      e.location.end_line >= e.location.start_line &&
      /^[0-9a-f]{64}$/.test(e.content_sha256 ?? ''),
  ).length;

  const all = (k: 'truePositives' | 'falsePositives' | 'falseNegatives') => [
    ...classes.service[k],
    ...classes.data[k],
  ];
  const tp = all('truePositives');
  const fp = all('falsePositives');
  return {
    corpus,
    commit: exp.commit,
    files,
    analyzed: extra.analyzed ?? files,
    expected: exp.edges.length,
    service: classes.service,
    data: classes.data,
    truePositives: tp,
    falsePositives: fp,
    falseNegatives: all('falseNegatives'),
    precision: ratio(tp.length, tp.length + fp.length),
    recall: ratio(tp.length, exp.edges.length),
    falseEntities,
    mergedEntities,
    relationshipEvidence: relationshipEvidence.length,
    locatedEvidence,
    seconds: extra.seconds ?? 0,
    calibration,
  };
}

function emptyClass(): ClassScore {
  return {
    expected: 0,
    truePositives: [],
    falsePositives: [],
    falseNegatives: [],
    ambiguous: [],
    precision: 1,
    recall: 1,
  };
}

const KEY = /^(service|datastore|queue):[a-z0-9][a-z0-9.-]*$/;

/** Reads and checks a corpus's expected.json (see the header for its shape). */
export function readExpected(dir: string): Expected {
  const where = `${dir}/expected.json`;
  const doc = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const fail = (msg: string): never => {
    throw new Error(`${where}: ${msg}`);
  };
  const keys = (name: string): string[] => {
    const v = doc[name] ?? [];
    if (!Array.isArray(v) || v.some((k) => typeof k !== 'string' || !KEY.test(k)))
      fail(`${name} must be a list of keys like service:name`);
    return v as string[];
  };
  const edgeList = (name: string, v: unknown[]): Edge[] =>
    v.map((e: any, i: number) => {
      if (typeof e?.from !== 'string' || typeof e?.to !== 'string')
        fail(`${name}[${i}] needs string from and to`);
      if (!KEY.test(e.from) || !KEY.test(e.to)) fail(`${name}[${i}]: keys like service:name`);
      return { from: e.from as string, to: e.to as string };
    });
  if (!Array.isArray(doc.edges)) fail('edges must be a list');
  const edges = edgeList('edges', doc.edges as unknown[]);
  if (new Set(edges.map(edgeId)).size !== edges.length) fail('duplicate edges');
  const ambiguous = doc.ambiguous ?? [];
  if (!Array.isArray(ambiguous)) fail('ambiguous must be a list');
  const ambiguousEntities = (ambiguous as unknown[]).filter(
    (a): a is string => typeof a === 'string',
  );
  if (ambiguousEntities.some((k) => !KEY.test(k))) fail('ambiguous: keys like service:name');
  const ambiguousEdges = edgeList(
    'ambiguous',
    (ambiguous as unknown[]).filter((a) => typeof a !== 'string'),
  );
  const overlap = ambiguousEdges.filter((a) => edges.some((e) => edgeId(e) === edgeId(a)));
  if (overlap.length) fail(`edges both expected and ambiguous: ${overlap.map(edgeId).join(', ')}`);
  const aliases = (doc.aliases ?? {}) as Record<string, unknown>;
  if (typeof aliases !== 'object' || Array.isArray(aliases)) fail('aliases must be an object');
  for (const [k, v] of Object.entries(aliases))
    if (!KEY.test(k) || !Array.isArray(v) || v.some((n) => typeof n !== 'string' || !KEY.test(n)))
      fail(`aliases.${k} must be a list of keys`);
  const str = (name: string, re: RegExp): string | null => {
    const v = doc[name];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string' || !re.test(v)) fail(`${name} is malformed`);
    return v as string;
  };
  return {
    repository: str('repository', /^[\w.-]+\/[\w.-]+$/),
    commit: str('commit', /^[0-9a-f]{40}$/),
    subdir: str('subdir', /^[^/.][^\0]*$/),
    services: keys('services'),
    datastores: keys('datastores'),
    aliases: aliases as Record<string, string[]>,
    edges,
    ambiguousEdges,
    ambiguousEntities,
  };
}

/** Where a system's checkout is: `<checkouts>/<owner>__<repo>` of its repository, else its name. */
export function checkoutOf(name: string, exp: Expected, checkouts: string): string {
  return path.join(checkouts, exp.repository ? exp.repository.replace('/', '__') : name);
}

/** Scores the checkout of system `name` against `bench/accuracy/<name>/expected.json`. */
export async function scoreCorpus(name: string, checkouts: string): Promise<CorpusScore> {
  const exp = readExpected(path.join(EXPECTED_DIR, name));
  const started = process.hrtime.bigint();
  const tree = await analyzeTree(checkoutOf(name, exp, checkouts), exp.subdir);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return score(name, exp, tree.graph, tree.files, {
    evidence: tree.evidence,
    seconds,
    analyzed: tree.analyzed,
  });
}

const f3 = (n: number) => n.toFixed(3);
const pr = (c: ClassScore) =>
  `P ${f3(c.precision)} / R ${f3(c.recall)} (TP ${c.truePositives.length}, FP ${c.falsePositives.length}, FN ${c.falseNegatives.length}, ambiguous ${c.ambiguous.length})`;

export function formatScore(s: CorpusScore): string {
  const cls = (label: string, c: ClassScore) => [
    `  ${label}: ${pr(c)}`,
    ...c.falsePositives.map((e) => `    + ${edgeId(e)}`),
    ...c.falseNegatives.map((e) => `    - ${edgeId(e)}`),
    ...c.ambiguous.map((e) => `    ? ${edgeId(e)}`),
  ];
  const lines = [
    `${s.corpus}${s.commit ? ` @ ${s.commit.slice(0, 12)}` : ''} (${s.files} files tracked, ${s.analyzed} analysed, ${s.expected} expected edges, ${s.seconds.toFixed(1)} s)`,
    ...cls('service edges', s.service),
    ...cls('data edges   ', s.data),
    `  false entities: ${s.falseEntities.length}${s.falseEntities.length ? ` (${s.falseEntities.join(', ')})` : ''}`,
    `  merged entities (one entity for several expected things): ${s.mergedEntities.length}${s.mergedEntities.length ? ` (${s.mergedEntities.join(', ')})` : ''}`,
    `  relationship evidence with location and content hash: ${s.locatedEvidence}/${s.relationshipEvidence} (${f3(ratio(s.locatedEvidence, s.relationshipEvidence))})`,
    `  all edges: precision ${f3(s.precision)}  recall ${f3(s.recall)}`,
    `  calibration: ${calibrationText(s.calibration)}`,
  ];
  return lines.join('\n');
}

function calibrationText(c: Calibration): string {
  return `confidence >= 0.7: ${c.high.true}/${c.high.edges} true (${f3(ratio(c.high.true, c.high.edges))}); < 0.5: ${c.low.edges} edges, ${c.low.true} true (${f3(ratio(c.low.true, c.low.edges))})`;
}

/** The figures over several systems (edges pooled). */
export function overall(scores: CorpusScore[]): {
  service: { precision: number; recall: number };
  data: { precision: number; recall: number };
  falseEntities: number;
  mergedEntities: number;
  located: number;
  seconds: number;
  calibration: Calibration;
} {
  const pool = (k: 'service' | 'data') => {
    const tp = scores.reduce((n, s) => n + s[k].truePositives.length, 0);
    const fp = scores.reduce((n, s) => n + s[k].falsePositives.length, 0);
    const ex = scores.reduce((n, s) => n + s[k].expected, 0);
    return { precision: ratio(tp, tp + fp), recall: ratio(tp, ex) };
  };
  return {
    service: pool('service'),
    data: pool('data'),
    falseEntities: scores.reduce((n, s) => n + s.falseEntities.length, 0),
    mergedEntities: scores.reduce((n, s) => n + s.mergedEntities.length, 0),
    located: ratio(
      scores.reduce((n, s) => n + s.locatedEvidence, 0),
      scores.reduce((n, s) => n + s.relationshipEvidence, 0),
    ),
    seconds: scores.reduce((n, s) => n + s.seconds, 0),
    calibration: {
      high: {
        edges: scores.reduce((n, s) => n + s.calibration.high.edges, 0),
        true: scores.reduce((n, s) => n + s.calibration.high.true, 0),
      },
      low: {
        edges: scores.reduce((n, s) => n + s.calibration.low.edges, 0),
        true: scores.reduce((n, s) => n + s.calibration.low.true, 0),
      },
    },
  };
}

/** One Markdown table row per system (the docs/benchmarks.md "whole checkouts" table). */
export function tableRow(s: CorpusScore): string {
  const c = (x: ClassScore) =>
    `${f3(x.precision)} / ${f3(x.recall)} (${x.truePositives.length}, ${x.falsePositives.length}, ${x.falseNegatives.length})`;
  return `| ${s.corpus} | ${s.commit?.slice(0, 12) ?? ''} | ${s.files} | ${c(s.service)} | ${c(s.data)} | ${s.falseEntities.length}${s.mergedEntities.length ? ` + ${s.mergedEntities.length} merged` : ''} | ${f3(ratio(s.locatedEvidence, s.relationshipEvidence))} | ${s.seconds.toFixed(1)} |`;
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
  const only = process.argv.slice(3);
  const scores: CorpusScore[] = [];
  for (const name of listCorpora()) {
    if (only.length && !only.includes(name)) continue;
    const exp = readExpected(path.join(EXPECTED_DIR, name));
    const dir = checkoutOf(name, exp, checkouts);
    if (!fs.existsSync(dir)) {
      console.log(`${name}: skipped, no checkout at ${dir}\n`);
      continue;
    }
    const head = headCommit(dir);
    if (exp.commit && head && head !== exp.commit)
      console.log(`${name}: warning: checkout is at ${head}, expected.json pins ${exp.commit}`);
    const s = await scoreCorpus(name, checkouts);
    scores.push(s);
    console.log(formatScore(s) + '\n');
  }
  const o = overall(scores);
  console.log(
    '| system | commit | files | service P / R (TP, FP, FN) | data P / R (TP, FP, FN) | false entities | located evidence | seconds |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const s of scores) console.log(tableRow(s));
  console.log(
    `| overall (${scores.length} systems) | | ${scores.reduce((n, s) => n + s.files, 0)} | ${f3(o.service.precision)} / ${f3(o.service.recall)} | ${f3(o.data.precision)} / ${f3(o.data.recall)} | ${o.falseEntities}${o.mergedEntities ? ` + ${o.mergedEntities} merged` : ''} | ${f3(o.located)} | ${o.seconds.toFixed(1)} |`,
  );
  console.log(`\nCalibration over ${scores.length} systems: ${calibrationText(o.calibration)}`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    // A measurement: report the failure, but exit 0 as documented.
    console.error(err);
  });
}
