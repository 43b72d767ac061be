/**
 * Issue 24's hostile system through the analyzers: a compose file of 2,000 services, each naming
 * another in an environment URL and in `depends_on` (test/helpers/large-compose.ts), gives the
 * right edges, cited at the right lines, and no stage overflows the stack (a dependency chain as
 * long as the input, a cycle through every service). No timing is asserted here: the figures are
 * bench:analysis's (docs/benchmarks.md). Also the budget rules at each limit and one past it.
 */
import test from 'ava';
import { analyzeCloud } from '../analysis/cloud';
import { assessControls } from '../analysis/controls';
import { diagramGraphOf, LAYERED_MAX_ITEMS, mermaid, svg } from '../analysis/diagram';
import { reconcile, type Relationship, type StoredEvidence } from '../analysis/reconcile';
import { uncertaintyCandidates } from '../analysis/uncertainty';
import {
  artifactOverflow,
  countsOf,
  budgetCut,
  filesBudgetGap,
  jsonBytesUpTo,
  timeOverflow,
} from '../domain/audits/budgets';
import {
  dependsTarget,
  largeComposeText,
  largeServiceName,
  urlTarget,
} from './helpers/large-compose';

const N = 2_000;
/** Line of service i's `UPSTREAM_URL` and of its `depends_on` item (9 lines per service). */
const urlLine = (i: number) => 2 + 9 * i + 3;
const dependsLine = (i: number) => 2 + 9 * i + 8;
const key = (i: number) => `service:${largeServiceName(i)}`;

test('2,000 services: every service, its depends_on and its URL edge, cited where written; controls see one cycle through all', async (t) => {
  const text = largeComposeText(N);
  const out = await analyzeCloud([{ path: 'docker-compose.yml', text }]);
  t.deepEqual(out.gaps, []);
  const evidence: StoredEvidence[] = out.evidence.map((e, i) => ({ ...e, id: `e${i}` }));
  const byId = new Map(evidence.map((e) => [e.id, e]));
  const graph = reconcile(evidence);
  t.is(graph.entities.filter((e) => e.kind === 'service').length, N);
  t.is(graph.relationships.length, 2 * N);
  const rels = new Map(graph.relationships.map((r) => [r.canonical_key, r]));

  for (const i of [0, 1, 333, 999, 1_500, N - 1]) {
    const dep = rels.get(`depends_on:${key(i)}->${key(dependsTarget(i, N))}`);
    t.truthy(dep, `service ${i} depends_on`);
    t.deepEqual(
      dep!.evidence_ids.map((id) => byId.get(id)!.location),
      [{ path: 'docker-compose.yml', start_line: dependsLine(i), end_line: dependsLine(i) }],
    );
    const url = rels.get(`connects_to:${key(i)}->${key(urlTarget(i, N))}`);
    t.truthy(url, `service ${i} URL`);
    const cited = url!.evidence_ids.map((id) => byId.get(id)!);
    t.deepEqual(
      cited.map((e) => e.location.start_line),
      [urlLine(i)],
    );
    t.regex(
      text.split('\n')[urlLine(i) - 1]!,
      new RegExp(`UPSTREAM_URL: http://${largeServiceName(urlTarget(i, N))}:8080`),
    );
  }

  const assessments = assessControls({
    evidence,
    entities: graph.entities,
    relationships: graph.relationships,
    files: ['docker-compose.yml'],
  });
  const cycle = assessments.find((a) => a.control_key === 'no-service-dependency-cycle');
  t.is(cycle?.status, 'fail');
  // One strongly connected component holding every service (the depends_on ring).
  t.is(cycle!.findings.length, 1);

  const cases = uncertaintyCandidates({
    entities: graph.entities,
    relationships: graph.relationships,
    evidence: evidence.map((e) => ({ ...e, object_key: e.object_key ?? null })),
    missingSources: ['code', 'cicd'],
  });
  t.deepEqual(
    cases.map((c) => c.reason),
    ['missing_source', 'missing_source'],
  );

  const drawing = diagramGraphOf(graph);
  const picture = svg(drawing);
  t.is(picture.match(/<g class="node" /g)?.length, N);
  t.regex(picture, /placed on a grid by kind/);
  t.is(
    mermaid(drawing)
      .split('\n')
      .filter((l) => l.includes('-->')).length,
    2 * N,
  );
});

test('a service dependency chain of 30,000 services is assessed without overflowing the stack', (t) => {
  const n = 30_000;
  const entities = Array.from({ length: n }, (_, i) => ({
    canonical_key: key(i),
    kind: 'service',
    name: largeServiceName(i),
    attributes: {},
    confidence: '0.60',
    evidence_ids: [],
    sources: ['cloud'],
    contradictions: [],
  }));
  // A chain 0 -> 1 -> ... -> n-1 closed by n-1 -> 0: one cycle, depth n for a recursive walk.
  const relationships: Relationship[] = entities.map((_, i) => ({
    canonical_key: `depends_on:${key(i)}->${key((i + 1) % n)}`,
    source_key: key(i),
    target_key: key((i + 1) % n),
    kind: 'depends_on',
    attributes: {},
    confidence: '0.50',
    evidence_ids: [],
    sources: ['cloud'],
    contradictions: [],
  }));
  const open = assessControls({
    evidence: [],
    entities,
    relationships: relationships.slice(0, -1),
    files: [],
  });
  t.is(open.find((a) => a.control_key === 'no-service-dependency-cycle')?.status, 'pass');
  const closed = assessControls({ evidence: [], entities, relationships, files: [] });
  const cycle = closed.find((a) => a.control_key === 'no-service-dependency-cycle');
  t.is(cycle?.status, 'fail');
  t.is(cycle!.findings.length, 1);
});

test('the SVG is laid out by dagre up to LAYERED_MAX_ITEMS entities plus relationships, on a grid past it', (t) => {
  const graphOf = (nodes: number, edges: number) =>
    diagramGraphOf({
      entities: Array.from({ length: nodes }, (_, i) => ({
        canonical_key: key(i),
        kind: 'service',
        name: largeServiceName(i),
      })),
      relationships: Array.from({ length: edges }, (_, i) => ({
        canonical_key: `calls:${key(i)}->${key(i + 1)}`,
        source_key: key(i),
        target_key: key(i + 1),
        kind: 'calls',
      })),
    });
  // A chain of 99 relationships; the other entities stand alone.
  const edges = 99;
  const limitNodes = LAYERED_MAX_ITEMS - edges;
  t.notRegex(svg(graphOf(limitNodes, edges)), /placed on a grid/);
  const past = svg(graphOf(limitNodes + 1, edges));
  t.regex(past, /placed on a grid/);
  t.is(past.match(/<path class="edge" /g)?.length, edges);
});

test('budgets: evidence, entities and output size at the limit pass, one past fails with its code', (t) => {
  const budgets = { maxEvidence: 3, maxEntities: 2, maxOutputBytes: 100 };
  const artifact = (evidence: number, entities: number) => ({
    evidence: Array.from({ length: evidence }, () => ({})),
    entities: Array.from({ length: entities }, () => ({})),
  });
  t.is(artifactOverflow(countsOf(artifact(3, 2)), 100, budgets), null);
  t.like(artifactOverflow(countsOf(artifact(4, 2)), 100, budgets), {
    code: 'evidence_budget_exceeded',
  });
  t.regex(
    artifactOverflow(countsOf(artifact(4, 2)), 100, budgets)!.message,
    /4 evidence records, over the audit's budget of 3 \(AUDIT_MAX_EVIDENCE\)/,
  );
  t.like(artifactOverflow(countsOf(artifact(3, 3)), 100, budgets), {
    code: 'entity_budget_exceeded',
  });
  t.like(artifactOverflow(countsOf(artifact(3, 2)), 101, budgets), {
    code: 'output_budget_exceeded',
  });
  // An artifact without evidence or entities (control assessments) counts only its size.
  t.is(artifactOverflow(countsOf({ assessments: [] }), 100, budgets), null);
});

test('budgets: analysis time at the limit passes, one millisecond past fails; the files gap names its budget', (t) => {
  t.is(timeOverflow(5_000, 5), null);
  t.like(timeOverflow(5_001, 5), { code: 'analysis_time_budget_exceeded' });
  const gap = filesBudgetGap(10, 3);
  t.like(gap, { kind: 'budget', budget: 'files', reason: 'budget_exceeded', limit: 10 });
  t.regex(String(gap.message), /3 files beyond the audit's budget of 10 files \(AUDIT_MAX_FILES\)/);
  t.true(budgetCut([{ kind: 'source_type' }, gap]));
  t.false(budgetCut([{ kind: 'source_type' }]));
});

test('budgets: the JSON size of a result is counted exactly without serializing it, and stops past the limit', (t) => {
  const values: unknown[] = [
    { a: 'xyz', b: [1, 2.5, true, false, null], c: {}, d: [], e: undefined, é: 'ü' },
    [[[]], { x: { y: 'z' } }],
    'plain',
    0,
  ];
  for (const v of values) t.is(jsonBytesUpTo(v, 1_000), Buffer.byteLength(JSON.stringify(v)));
  const big = { items: Array.from({ length: 100_000 }, (_, i) => ({ id: `e${i}` })) };
  const size = Buffer.byteLength(JSON.stringify(big));
  t.is(jsonBytesUpTo(big, size), size, 'at the limit: the exact size');
  t.true(jsonBytesUpTo(big, size - 1) > size - 1, 'one byte less: over it');
  t.true(jsonBytesUpTo(big, 1_000) < size / 10, 'counting stops soon after the limit');
});
