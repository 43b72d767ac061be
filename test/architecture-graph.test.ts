/**
 * Reads derived from a snapshot: dependency paths (pure, then over HTTP) and the architecture
 * bundle of a real audit whose repository was written to trip every threat rule.
 */
import test from 'ava';
import {
  confidenceProduct,
  dependencyPaths,
  MAX_DEPENDENCY_PATHS,
  resolveEntityKey,
  type DependencyGraph,
} from '../analysis/dependencies';
import { OpenAiCompatibleProvider } from '../activities/audits/agents/model';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { startFakeModelServer, type FakeModelServer } from './helpers/fake-model';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call, isProblem } from './helpers/http';

// ---------------------------------------------------------------------------------------------
// dependencyPaths, pure

const rel = (source: string, target: string, confidence: string, ev: string[]) => ({
  canonical_key: `calls:${source}->${target}`,
  source_key: source,
  target_key: target,
  confidence,
  evidence_ids: ev,
});

/** a -> b -> c -> a (a cycle), b -> d. */
const CYCLE: DependencyGraph = {
  entities: ['a', 'b', 'c', 'd'].map((k) => ({
    canonical_key: k,
    attributes: { aliases: [`alias:${k}`] },
  })),
  relationships: [
    rel('a', 'b', '0.90', ['e2', 'e1']),
    rel('b', 'c', '0.80', ['e3']),
    rel('c', 'a', '0.50', ['e4', 'e1']),
    rel('b', 'd', '0.85', ['e5']),
  ],
};
const keys = (paths: ReturnType<typeof dependencyPaths>) => paths.map((p) => p.entity_keys);

test('downstream from a, depth 1: one path a->b with its relationship and evidence', (t) => {
  const paths = dependencyPaths(CYCLE, 'a', 'downstream', 1);
  t.deepEqual(paths, [
    {
      direction: 'downstream',
      entity_keys: ['a', 'b'],
      relationship_keys: ['calls:a->b'],
      evidence_ids: ['e1', 'e2'],
      confidence: '0.90',
    },
  ]);
});

test('downstream from a, depth 2: maximal paths only, confidences are products', (t) => {
  const paths = dependencyPaths(CYCLE, 'a', 'downstream', 2);
  t.deepEqual(keys(paths), [
    ['a', 'b', 'c'],
    ['a', 'b', 'd'],
  ]);
  t.is(paths[0]!.confidence, '0.72'); // 0.90 x 0.80
  t.is(paths[1]!.confidence, '0.77'); // 0.90 x 0.85 = 0.765, half up
  t.deepEqual(paths[0]!.relationship_keys, ['calls:a->b', 'calls:b->c']);
  t.deepEqual(paths[0]!.evidence_ids, ['e1', 'e2', 'e3']);
});

test('downstream from a, depth 5: the cycle c->a ends the path instead of looping', (t) => {
  const paths = dependencyPaths(CYCLE, 'a', 'downstream', 5);
  t.deepEqual(keys(paths), [
    ['a', 'b', 'c'],
    ['a', 'b', 'd'],
  ]);
  for (const p of paths) t.is(new Set(p.entity_keys).size, p.entity_keys.length, 'simple path');
});

test('upstream from d follows relationships backwards and stops at the cycle', (t) => {
  const paths = dependencyPaths(CYCLE, 'd', 'upstream', 5);
  t.deepEqual(paths, [
    {
      direction: 'upstream',
      entity_keys: ['d', 'b', 'a', 'c'],
      relationship_keys: ['calls:b->d', 'calls:a->b', 'calls:c->a'],
      evidence_ids: ['e1', 'e2', 'e4', 'e5'],
      confidence: '0.38', // 0.85 x 0.90 x 0.50 = 0.3825
    },
  ]);
  t.deepEqual(keys(dependencyPaths(CYCLE, 'd', 'upstream', 2)), [['d', 'b', 'a']]);
  t.deepEqual(dependencyPaths(CYCLE, 'd', 'downstream', 3), [], 'd depends on nothing');
  t.deepEqual(dependencyPaths(CYCLE, 'zzz', 'downstream', 3), [], 'unknown root');
});

test('parallel relationships give separate paths; self-loops and superseded ones are ignored; contradictions carried', (t) => {
  const claim = { field: 'engine', claims: [{ value: 'x', evidence_ids: ['e9'], sources: ['k'] }] };
  const graph: DependencyGraph = {
    entities: [{ canonical_key: 'a' }, { canonical_key: 'b' }],
    relationships: [
      { ...rel('a', 'b', '0.50', ['e1']), canonical_key: 'depends_on:a->b' },
      { ...rel('a', 'b', '0.60', ['e2']), contradictions: [claim] },
      rel('a', 'a', '0.99', ['e3']),
      { ...rel('a', 'b', '0.99', ['e4']), canonical_key: 'old:a->b', superseded_at: '2020-01-01' },
    ],
  };
  const paths = dependencyPaths(graph, 'a', 'downstream', 3);
  t.deepEqual(
    paths.map((p) => [p.relationship_keys, p.confidence, p.contradictions]),
    [
      [['calls:a->b'], '0.60', [claim]],
      [['depends_on:a->b'], '0.50', undefined],
    ],
  );
});

test('the walk is bounded at MAX_DEPENDENCY_PATHS and stays deterministic', (t) => {
  // root -> 10 nodes -> 10 nodes -> 10 nodes -> 10 nodes: 10,000 paths of depth 4.
  const layers = [
    ['root'],
    ...[1, 2, 3, 4].map((l) => [...Array(10).keys()].map((i) => `l${l}n${i}`)),
  ];
  const relationships = layers
    .slice(1)
    .flatMap((layer, i) =>
      layers[i]!.flatMap((from) => layer.map((to) => rel(from, to, '0.50', [`${from}>${to}`]))),
    );
  const graph = { entities: layers.flat().map((k) => ({ canonical_key: k })), relationships };
  const started = Date.now();
  const paths = dependencyPaths(graph, 'root', 'downstream', 10);
  t.is(paths.length, MAX_DEPENDENCY_PATHS);
  t.true(Date.now() - started < 2000);
  t.deepEqual(dependencyPaths(graph, 'root', 'downstream', 10), paths);
  t.is(paths[0]!.confidence, '0.06'); // 0.5^4 = 0.0625
});

test('confidence products are exact and aliases resolve to their entity', (t) => {
  t.is(confidenceProduct(['0.85', '0.50']), '0.43');
  t.is(confidenceProduct(['0.99', '0.99', '0.99']), '0.97');
  t.is(confidenceProduct(['1']), '1.00');
  t.is(confidenceProduct([]), '1.00');
  t.is(resolveEntityKey(CYCLE, 'b'), 'b');
  t.is(resolveEntityKey(CYCLE, 'alias:c'), 'c');
  t.is(resolveEntityKey(CYCLE, 'alias:zzz'), null);
});

// ---------------------------------------------------------------------------------------------
// Over HTTP, from a real audit

const FILES: Record<string, string> = {
  ...SAMPLE_FILES,
  'docker-compose.yml': [
    'services:',
    '  api:',
    '    build: services/api',
    '    ports:',
    '      - "0.0.0.0:8080:8080"',
    '    environment:',
    '      DATABASE_URL: postgres://db:5432/shop',
    '      API_TOKEN: abc123',
    '  db:',
    '    image: postgres:16',
    '',
  ].join('\n'),
  'infra/main.tf': [
    'resource "aws_db_instance" "shop" {',
    '  engine            = "postgres"',
    '  storage_encrypted = false',
    '}',
    '',
    'resource "aws_s3_bucket" "assets" {',
    '  bucket = "assets"',
    '}',
    '',
    'resource "aws_s3_bucket_server_side_encryption_configuration" "assets" {',
    '  bucket = aws_s3_bucket.assets.id',
    '  rule {',
    '    apply_server_side_encryption_by_default {',
    '      sse_algorithm = "aws:kms"',
    '    }',
    '  }',
    '}',
    '',
  ].join('\n'),
  '.github/workflows/release.yml': [
    'on: push',
    'jobs:',
    '  release:',
    '    runs-on: ubuntu-latest',
    '    permissions:',
    '      contents: write',
    '    steps:',
    '      - uses: actions/checkout@v4',
    '      - uses: someone/action@main',
    '',
  ].join('\n'),
};

let h: AuditHarness;
let fake: FakeModelServer;
let tenant: Tenant;
let repo: TestRepo;
let repositoryId: string;
let auditId: string;
let reviewedId: string;
let truth: any;

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const get = (path: string) => call(h.app.url, 'GET', `${ws()}${path}`, { token: tenant.token });
const deps = (query: string) =>
  get(`/repositories/${repositoryId}/architecture/dependencies?${query}`);

async function audit(body: Record<string, unknown> = {}) {
  const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: repositoryId, ...body },
  });
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  if (done.body.status !== 'completed') throw new Error(JSON.stringify(done.body.stages));
  return done.body;
}

test.before(async () => {
  fake = await startFakeModelServer();
  h = await startAuditHarness({
    model: new OpenAiCompatibleProvider({
      baseUrl: fake.baseUrl,
      apiKey: 'sk-test',
      modelId: 'test-model',
    }),
  });
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(FILES);
  const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  repositoryId = created.body.id;
  // The reviewed audit first, so that the plain one is the repository's latest snapshot.
  reviewedId = (await audit({ deep_review: true })).id;
  auditId = (await audit()).id;
  truth = (await get(`/audits/${auditId}/architecture`)).body;
});

test.after.always(async () => {
  await h?.close();
  await fake?.close();
  repo?.remove();
});

test('dependencies: downstream from service:api over the latest snapshot', async (t) => {
  const reply = await deps('entity_key=service:api');
  t.is(reply.status, 200, reply.text);
  const body = reply.body;
  t.is(body.repository_id, repositoryId);
  t.is(body.audit_id, auditId);
  t.is(body.max_depth, 3);
  t.deepEqual(
    body.root,
    truth.entities.find((e: any) => e.canonical_key === 'service:api'),
    'the root as the snapshot has it',
  );
  t.true(Math.abs(Date.parse(body.generated_at) - Date.now()) < 60_000);
  const toDb = body.paths.find((p: any) => p.entity_keys.join(' ') === 'service:api datastore:db');
  t.truthy(toDb, JSON.stringify(body.paths));
  t.is(toDb.direction, 'downstream');
  const relDb = truth.relationships.find(
    (r: any) => r.canonical_key === 'connects_to:service:api->datastore:db',
  );
  t.true(toDb.relationship_keys.includes(relDb.canonical_key));
  const ids = new Set(truth.evidence.map((e: any) => e.id));
  for (const p of body.paths) {
    t.is(p.entity_keys[0], 'service:api');
    t.is(p.relationship_keys.length, p.entity_keys.length - 1);
    t.true(p.relationship_keys.length <= 3);
    for (const id of p.evidence_ids) t.true(ids.has(id));
  }
  const snapshots = await get(`/repositories/${repositoryId}/architecture/snapshots`);
  t.is(body.snapshot_id, snapshots.body.items[0].id);
});

test('dependencies: an alias resolves to its entity; upstream; explicit snapshot_id', async (t) => {
  const db = truth.entities.find((e: any) => e.canonical_key === 'datastore:db');
  t.deepEqual(db.attributes.aliases, ['service:db']);
  const reply = await deps('entity_key=service:db&direction=upstream&max_depth=1');
  t.is(reply.status, 200, reply.text);
  t.is(reply.body.root.canonical_key, 'datastore:db');
  t.is(reply.body.max_depth, 1);
  t.true(
    reply.body.paths.some(
      (p: any) =>
        p.direction === 'upstream' && p.entity_keys.join(' ') === 'datastore:db service:api',
    ),
    JSON.stringify(reply.body.paths),
  );
  const snapshotId = (await deps('entity_key=service:api')).body.snapshot_id;
  const pinned = await deps(`entity_key=service:api&snapshot_id=${snapshotId}&max_depth=10`);
  t.is(pinned.status, 200, pinned.text);
  t.is(pinned.body.snapshot_id, snapshotId);
  t.is(pinned.body.max_depth, 10);
});

test('dependencies: unknown key, snapshot or repository is 404; bad query is 400', async (t) => {
  for (const q of [
    'entity_key=service:nope',
    'entity_key=service:api&snapshot_id=00000000-0000-4000-8000-000000000000',
  ]) {
    const r = await deps(q);
    t.is(r.status, 404, q);
    t.true(isProblem(r));
  }
  const noRepo = await get(
    '/repositories/00000000-0000-4000-8000-000000000000/architecture/dependencies?entity_key=service:api',
  );
  t.is(noRepo.status, 404);
  for (const q of [
    'entity_key=service:api&max_depth=0',
    'entity_key=service:api&max_depth=11',
    'entity_key=service:api&max_depth=two',
    'entity_key=service:api&direction=sideways',
    'direction=upstream',
    'entity_key=',
    `entity_key=${'x'.repeat(501)}`,
    'entity_key=service:api&snapshot_id=nope',
    'entity_key=service:api&extra=1',
  ]) {
    const r = await deps(q);
    t.is(r.status, 400, q);
    t.true(isProblem(r), q);
  }
  const other = await createTenant(h.app.services.db);
  const cross = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${other.workspaceId}/repositories/${repositoryId}/architecture/dependencies?entity_key=service:api`,
    { token: other.token },
  );
  t.is(cross.status, 404);
});

test('bundle: facts, observations and a Mermaid diagram of the snapshot', async (t) => {
  const reply = await get(`/audits/${auditId}/architecture/bundle`);
  t.is(reply.status, 200, reply.text);
  const b = reply.body;
  t.is(b.audit_id, auditId);
  t.is(b.version, truth.version);
  t.is(b.status, 'complete');
  t.is(b.model_id, null, 'no deep review ran');
  t.is(b.architecture_facts.length, truth.entities.length + truth.relationships.length);
  t.like(
    b.architecture_facts.find((f: any) => f.key === 'connects_to:service:api->datastore:db'),
    { fact: 'relationship', kind: 'connects_to', source: 'service:api', target: 'datastore:db' },
  );
  t.like(
    b.architecture_facts.find((f: any) => f.key === 'service:api'),
    { fact: 'entity', kind: 'service', name: 'api' },
  );
  const ids = new Set(truth.evidence.map((e: any) => e.id));
  t.like(b.observations[0], { type: 'coverage', missing_sources: [] });
  for (const o of b.observations) for (const id of o.evidence_ids) t.true(ids.has(id));
  for (const o of b.observations.filter((x: any) => x.type === 'low_confidence'))
    t.true(Number(o.confidence) < 0.5);

  t.is(b.diagrams.length, 1);
  const d = b.diagrams[0];
  t.is(d.format, 'mermaid');
  // The bundle carries the same Mermaid source getAuditArchitectureDiagram serves.
  const served = await get(`/audits/${auditId}/architecture/diagram?format=mermaid`);
  t.is(served.status, 200);
  t.is(d.text, served.text);
  const lines = d.text.split('\n');
  t.is(lines[0], 'flowchart LR');
  for (const e of truth.entities)
    t.true(d.text.includes(`"${e.name}`), `node for ${e.canonical_key}`);
  t.is(lines.filter((l: string) => l.includes('-->')).length, truth.relationships.length);
  t.regex(d.text, /-->\|"connects_to"\|/);
});

test('bundle: each threat rule fires on the repository, citing snapshot evidence; ids are stable', async (t) => {
  const first = (await get(`/audits/${auditId}/architecture/bundle`)).body;
  const ids = new Set(truth.evidence.map((e: any) => e.id));
  const evidence = (id: string) => truth.evidence.find((e: any) => e.id === id);
  for (const th of first.threats) {
    t.regex(th.id, /^[0-9a-f]{16}$/);
    t.true(['high', 'medium', 'low'].includes(th.severity));
    t.true(th.evidence_ids.length > 0, th.rule);
    for (const id of th.evidence_ids) t.true(ids.has(id), `${th.rule} cites ${id}`);
  }
  const find = (rule: string, pred: (th: any) => boolean = () => true) =>
    first.threats.find((th: any) => th.rule === rule && pred(th));

  const exposure = find(
    'public-exposure-reaches-datastore',
    (th) => th.entity_keys.join(' ') === 'service:api datastore:db',
  );
  t.truthy(exposure, JSON.stringify(first.threats, null, 1));
  t.is(exposure.severity, 'high');
  t.true(
    exposure.evidence_ids.some(
      (id: string) =>
        evidence(id).evidence_kind === 'port-exposed' && /publicly/.test(evidence(id).summary),
    ),
  );

  const unencrypted = find('unencrypted-storage', (th) => th.entity_keys[0] === 'datastore:shop');
  t.truthy(unencrypted);
  t.is(evidence(unencrypted.evidence_ids[0]).location.path, 'infra/main.tf');
  t.falsy(
    find('unencrypted-storage', (th) => th.entity_keys[0] === 'bucket:assets'),
    'the bucket is encrypted by its companion resource',
  );

  const action = find('unpinned-action-with-write-token');
  t.truthy(action);
  t.is(action.severity, 'high');
  t.deepEqual(action.entity_keys, ['job:github-actions/release/release']);
  t.deepEqual(action.evidence_ids.map((id: string) => evidence(id).evidence_kind).sort(), [
    'action-use',
    'job-declared',
  ]);
  t.falsy(
    first.threats.find((th: any) => /actions\/checkout/.test(th.title)),
    'first-party actions are not reported',
  );

  const secret = find('literal-secret', (th) => /API_TOKEN/.test(th.title));
  t.truthy(secret);
  t.deepEqual(secret.entity_keys, ['service:api']);
  t.is(evidence(secret.evidence_ids[0]).location.path, 'docker-compose.yml');
  t.false(JSON.stringify(first).includes('abc123'), 'the secret value never appears');

  const second = (await get(`/audits/${auditId}/architecture/bundle`)).body;
  t.deepEqual(
    second.threats.map((th: any) => th.id),
    first.threats.map((th: any) => th.id),
  );
  t.is(new Set(first.threats.map((th: any) => th.id)).size, first.threats.length);
});

test('bundle: 404 for an unknown audit or one without a snapshot', async (t) => {
  const unknown = await get('/audits/00000000-0000-4000-8000-000000000000/architecture/bundle');
  t.is(unknown.status, 404);
  t.true(isProblem(unknown));
  const failed = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: repositoryId, branch_ref: 'nope' },
  });
  await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, failed.body.id);
  const none = await get(`/audits/${failed.body.id}/architecture/bundle`);
  t.is(none.status, 404);
});

test('bundle: model_id names the model of a successful deep review', async (t) => {
  const runs = (await get(`/audits/${reviewedId}/agent-runs`)).body.runs.filter(
    (r: any) => r.agent_key === 'deep-review' && r.status === 'succeeded',
  );
  t.is(runs.length, 1);
  const b = (await get(`/audits/${reviewedId}/architecture/bundle`)).body;
  t.is(b.model_id, runs[0].model_id);
  t.is(b.model_id, 'test-model');
});
