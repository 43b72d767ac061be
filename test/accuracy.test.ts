/**
 * The accuracy benchmark's parts (bench/accuracy.ts): its ground truth files, the scoring, and
 * the general analyzer behaviour real public systems needed (Compose `.env` files, code
 * defaults, client host arguments, env names read through helpers, layout folders), each on
 * fixtures written here. The systems themselves are other projects' code and are not in this
 * repository: `npm run bench:accuracy -- <checkouts>` measures them (docs/benchmarks.md).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { execFileSync } from 'node:child_process';
import {
  EXPECTED_DIR,
  MAX_STORED_FILE_BYTES,
  analyzeTree,
  checkoutOf,
  expectedOf,
  formatScore,
  listCorpora,
  overall,
  readExpected,
  score,
  tableRow,
} from '../bench/accuracy';
import { analyzeCloud } from '../analysis/cloud';
import { interpolate, parseDotenv } from '../analysis/cloud/compose';
import { classifyPath } from '../domain/audits/classify';
import type { Graph, StoredEvidence } from '../analysis/reconcile';

const corpora = listCorpora();
const KEY = /^(service|datastore|queue):[a-z0-9][a-z0-9.-]*$/;

test('the ground truth: at least twenty whole systems, each pinned to a commit with its derivation', (t) => {
  t.true(corpora.length >= 20, corpora.join(', '));
  const repositories = new Set<string>();
  let total = 0;
  for (const name of corpora) {
    const dir = path.join(EXPECTED_DIR, name);
    const source = fs.readFileSync(path.join(dir, 'SOURCE.md'), 'utf8');
    const exp = readExpected(dir);
    t.truthy(exp.repository, `${name}: expected.json names its repository`);
    t.truthy(exp.commit, `${name}: expected.json pins a commit`);
    t.true(
      source.includes(`github.com/${exp.repository}`),
      `${name}: SOURCE.md names the repository`,
    );
    t.true(source.includes(exp.commit!), `${name}: SOURCE.md names the pinned commit`);
    t.regex(source, /## Ground truth/, `${name}: SOURCE.md says how the ground truth was derived`);
    if (exp.subdir) t.true(source.includes(exp.subdir), `${name}: SOURCE.md names the subdir`);
    // A real graph, not a token one; a system with one edge must say why (the negative case of a
    // modular monolith, or a small system whose measure is its precision and false entities).
    t.true(
      exp.edges.length >= 2 || /negative case|small system/i.test(source),
      `${name}: a real graph, not a token one`,
    );
    const entities = new Set([...exp.services, ...exp.datastores]);
    for (const e of exp.edges) {
      t.regex(e.from, KEY, `${name}: ${e.from}`);
      t.regex(e.to, KEY, `${name}: ${e.to}`);
      t.true(
        entities.has(e.from) && entities.has(e.to),
        `${name}: ${e.from} -> ${e.to} joins listed entities`,
      );
    }
    for (const k of exp.datastores) t.regex(k, /^(datastore|queue):/, `${name}: ${k}`);
    for (const k of exp.services) t.regex(k, /^service:/, `${name}: ${k}`);
    repositories.add(exp.repository!);
    total += exp.edges.length;
  }
  t.true(repositories.size >= 19, [...repositories].join(', '));
  t.true(total >= 100, `${total} expected edges`);
});

function graph(
  entities: Array<[string, string[]]>,
  relationships: Array<[string, string, string]>,
): Graph {
  return {
    entities: entities.map(([key, aliases]) => ({
      canonical_key: key,
      kind: key.split(':')[0]!,
      name: key.split(':')[1]!,
      attributes: { aliases },
      confidence: '0.60',
      evidence_ids: [],
      sources: [],
      contradictions: [],
    })),
    relationships: relationships.map(([kind, source, target]) => ({
      canonical_key: `${kind}:${source}->${target}`,
      source_key: source,
      target_key: target,
      kind,
      attributes: {},
      confidence: '0.60',
      evidence_ids: [],
      sources: [],
      contradictions: [],
    })),
  };
}

test('scoring: aliases match, depends_on and image edges do not count, misses and extras are listed', (t) => {
  const g = graph(
    [
      ['datastore:cache', ['service:cache']],
      ['service:web', []],
      ['service:api', ['service:api-svc']],
      ['service:worker', []],
    ],
    [
      ['connects_to', 'service:web', 'service:api'],
      ['connects_to', 'service:api', 'datastore:cache'],
      ['connects_to', 'service:web', 'service:worker'],
      ['depends_on', 'service:worker', 'service:api'],
      ['uses_image', 'service:web', 'image:nginx'],
    ],
  );
  const s = score(
    'x',
    [
      { from: 'service:web', to: 'service:api-svc' },
      { from: 'service:api', to: 'service:cache' },
      { from: 'service:worker', to: 'service:api' },
    ],
    g,
  );
  t.deepEqual(
    s.truePositives.map((e) => `${e.from}->${e.to}`),
    ['service:web->service:api-svc', 'service:api->service:cache'],
  );
  t.deepEqual(s.falsePositives, [{ from: 'service:web', to: 'service:worker' }]);
  t.deepEqual(s.falseNegatives, [{ from: 'service:worker', to: 'service:api' }]);
  t.is(s.precision, 2 / 3);
  t.is(s.recall, 2 / 3);
});

test('scoring: service and data edges are scored apart; ambiguous edges and entities count neither way', (t) => {
  const g = graph(
    [
      ['service:web', ['service:web-app']],
      ['service:api', []],
      ['service:audit', []],
      ['datastore:postgres', []],
      ['queue:kafka', []],
      ['service:redis', []],
      ['service:tools', []],
      ['service:grafana', []],
    ],
    [
      ['connects_to', 'service:web', 'service:api'],
      ['connects_to', 'service:api', 'datastore:postgres'],
      ['connects_to', 'service:api', 'service:audit'],
      ['connects_to', 'service:web', 'service:grafana'],
      ['connects_to', 'service:api', 'service:redis'],
      ['connects_to', 'queue:kafka', 'datastore:postgres'],
    ],
  );
  const truth = expectedOf(
    [
      { from: 'service:web', to: 'service:api' },
      { from: 'service:api', to: 'datastore:db' },
      { from: 'service:api', to: 'queue:kafka' },
      { from: 'service:audit', to: 'queue:kafka' },
    ],
    {
      services: ['service:web', 'service:api', 'service:audit'],
      datastores: ['datastore:db', 'queue:kafka'],
      aliases: { 'datastore:db': ['datastore:postgres'] },
      ambiguousEdges: [{ from: 'service:api', to: 'service:audit' }],
      ambiguousEntities: ['service:grafana'],
    },
  );
  const s = score('shop', truth, g);
  // Service edges: web -> api found; api -> audit and web -> grafana are left open.
  t.is(s.service.expected, 1);
  t.is(s.service.truePositives.length, 1);
  t.deepEqual(s.service.ambiguous.map((e) => `${e.from}->${e.to}`).sort(), [
    'service:api->service:audit',
    'service:web->service:grafana',
  ]);
  // api -> redis: a cache the graph calls a service is a wrong service edge, not a data edge.
  t.deepEqual(s.service.falsePositives, [{ from: 'service:api', to: 'service:redis' }]);
  t.is(s.service.precision, 1 / 2);
  t.is(s.service.recall, 1);
  // Data edges: api -> db found through the alias postgres; the kafka edges are missed and the
  // broker -> database edge is a false positive.
  t.is(s.data.expected, 3);
  t.deepEqual(s.data.truePositives, [{ from: 'service:api', to: 'datastore:db' }]);
  t.deepEqual(
    s.data.falseNegatives.map((e) => e.from),
    ['service:api', 'service:audit'],
  );
  t.deepEqual(s.data.falsePositives, [{ from: 'queue:kafka', to: 'datastore:db' }]);
  t.is(s.data.precision, 1 / 2);
  t.is(s.data.recall, 1 / 3);
  // Entities: postgres is db, web-app's entity is web, grafana is ambiguous; redis and tools are
  // neither expected nor an alias.
  t.deepEqual(s.falseEntities, ['service:redis', 'service:tools']);
  // Overall (the issue-4 figures) pools both classes.
  t.is(s.precision, 2 / 4);
  t.is(s.recall, 2 / 4);
});

test('scoring: one graph entity standing for several expected things is reported as merged and credited once', (t) => {
  // The analyzer folded cart and checkout into one entity (its aliases name both).
  const g = graph(
    [
      ['service:shop', ['service:cart', 'service:checkout']],
      ['datastore:redis', []],
    ],
    [
      ['connects_to', 'service:shop', 'datastore:redis'],
      ['connects_to', 'service:shop', 'service:shop'],
    ],
  );
  const truth = expectedOf(
    [
      { from: 'service:cart', to: 'datastore:redis' },
      { from: 'service:checkout', to: 'service:cart' },
    ],
    { services: ['service:cart', 'service:checkout'], datastores: ['datastore:redis'] },
  );
  const s = score('shop', truth, g);
  t.deepEqual(s.mergedEntities, ['service:shop']);
  t.deepEqual(s.falseEntities, []);
  // Its edges are its own (service:shop), not a match for every name it swallowed.
  t.is(s.truePositives.length, 0);
  t.deepEqual(s.falsePositives, [
    { from: 'service:shop', to: 'service:shop' },
    { from: 'service:shop', to: 'datastore:redis' },
  ]);
  t.regex(
    formatScore(s),
    /merged entities \(one entity for several expected things\): 1 \(service:shop\)/,
  );
});

test('scoring: the share of relationship evidence with a location and a content hash, and the timing', (t) => {
  const ev = (over: Partial<StoredEvidence>): StoredEvidence => ({
    id: 'e',
    source_type: 'cloud',
    provider: 'docker-compose',
    evidence_kind: 'env-reference',
    subject_key: 'service:web',
    relationship_kind: 'connects_to',
    object_key: 'service:api',
    location: { path: 'compose.yml', start_line: 3, end_line: 4 },
    summary: '',
    content_sha256: 'a'.repeat(64),
    attributes: {},
    ...over,
  });
  const evidence = [
    ev({}),
    ev({ location: { path: '', start_line: 0, end_line: 0 } }),
    ev({ content_sha256: '' }),
    ev({ relationship_kind: null, object_key: null, content_sha256: '' }),
  ];
  const s = score('x', expectedOf([]), graph([], []), 3, { evidence, seconds: 1.5, analyzed: 2 });
  t.is(s.relationshipEvidence, 3);
  t.is(s.locatedEvidence, 1);
  t.is(s.seconds, 1.5);
  t.is(s.analyzed, 2);
  t.is(s.files, 3);
  // Nothing expected, nothing predicted: the ratios are 1, not NaN.
  t.is(s.service.precision, 1);
  t.is(s.data.recall, 1);
  const o = overall([s, { ...s, seconds: 2.5, locatedEvidence: 3, relationshipEvidence: 3 }]);
  t.is(o.seconds, 4);
  t.is(o.located, 4 / 6);
  t.regex(formatScore(s), /relationship evidence with location and content hash: 1\/3/);
  t.is(
    tableRow(s),
    '| x |  | 3 | 1.000 / 1.000 (0, 0, 0) | 1.000 / 1.000 (0, 0, 0) | 0 | 0.333 | 1.5 |',
  );
});

test('expected.json: subdir, aliases and ambiguous entries are read; contradictions are refused', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'accuracy-expected-'));
  try {
    const put = (doc: unknown) =>
      fs.writeFileSync(path.join(dir, 'expected.json'), JSON.stringify(doc));
    const edge = { from: 'service:a', to: 'datastore:b' };
    put({
      repository: 'owner/repo',
      commit: 'c'.repeat(40),
      subdir: 'samples/shop',
      services: ['service:a'],
      datastores: ['datastore:b'],
      aliases: { 'service:a': ['service:shop.a'] },
      edges: [edge],
      ambiguous: [{ from: 'service:a', to: 'service:c' }, 'service:c'],
    });
    const exp = readExpected(dir);
    t.is(exp.subdir, 'samples/shop');
    t.deepEqual(exp.ambiguousEdges, [{ from: 'service:a', to: 'service:c' }]);
    t.deepEqual(exp.ambiguousEntities, ['service:c']);
    t.is(checkoutOf('owner__repo__shop', exp, '/co'), path.join('/co', 'owner__repo'));
    put({ edges: [edge], ambiguous: [edge] });
    t.throws(() => readExpected(dir), { message: /both expected and ambiguous/ });
    put({ edges: [edge, edge] });
    t.throws(() => readExpected(dir), { message: /duplicate edges/ });
    put({ edges: [{ from: 'a', to: 'datastore:b' }] });
    t.throws(() => readExpected(dir), { message: /keys like service:name/ });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a whole git checkout: tracked files only, limited to the subdir, files over the stored size listed but not read', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'accuracy-git-'));
  try {
    const put = (rel: string, text: string) => {
      fs.mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    };
    put('shop/docker-compose.yml', 'services:\n  api:\n    image: shop/api:1\n');
    put('other/docker-compose.yml', 'services:\n  other:\n    image: other:1\n');
    put(
      'shop/big/docker-compose.yml',
      'services:\n  big:\n    image: big:1\n#' + 'x'.repeat(MAX_STORED_FILE_BYTES) + '\n',
    );
    execFileSync('git', ['init', '-q', dir]);
    execFileSync('git', ['-C', dir, 'add', '.']);
    put('shop/untracked/docker-compose.yml', 'services:\n  ghost:\n    image: ghost:1\n');
    const tree = await analyzeTree(dir, 'shop');
    t.is(tree.files, 2);
    t.is(tree.tooLarge, 1);
    t.is(tree.analyzed, 1);
    t.deepEqual(
      tree.graph.entities.filter((e) => e.kind === 'service').map((e) => e.canonical_key),
      ['service:api'],
    );
    t.is((await analyzeTree(dir)).files, 3);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('compose .env: values are interpolated like Compose does, unknown variables stay visible', (t) => {
  const vars = parseDotenv(
    [
      '# comment',
      'HOST=otel-collector',
      'PORT=4317',
      'URL=http://${HOST}:${PORT}',
      'QUOTED="a b"  # note',
      "RAW='${HOST}'",
      'INLINE=value # comment',
      'export EXPORTED=yes',
    ].join('\n'),
  );
  t.is(vars.get('URL'), 'http://otel-collector:4317');
  t.is(vars.get('QUOTED'), 'a b');
  t.is(vars.get('RAW'), '${HOST}');
  t.is(vars.get('INLINE'), 'value');
  t.is(vars.get('EXPORTED'), 'yes');
  t.is(interpolate('${MISSING:-db}:${PORT}', vars), 'db:4317');
  t.is(
    interpolate(
      '${MISSING-x}|${EMPTY:-y}|${HOST:+set}|$$HOST',
      new Map([
        ['EMPTY', ''],
        ['HOST', 'h'],
      ]),
    ),
    'x|y|set|$HOST',
  );
  t.is(interpolate('http://${UNKNOWN}:1', vars), 'http://${UNKNOWN}:1');
  t.is(interpolate('${MISSING:-${HOST}}:${PORT}', vars), 'otel-collector:4317');
  t.is(classifyPath('deploy/.env'), 'cloud');
  // A template is read, for an env_file the repository does not hold (test/misc-idioms.test.ts).
  t.is(classifyPath('.env.example'), 'cloud');
});

test('compose .env: pass-through and interpolated variables point at services; secrets are judged as written', async (t) => {
  const compose = `services:
  web:
    image: \${REGISTRY}/web:1
    environment:
      - API_ADDR
      - CACHE_URL=redis://\${CACHE_HOST}:6379
      - DB_PASSWORD=\${DB_PASSWORD}
      - BROKER_SERVICE_ADDR
      - UNRELATED_URL
  api:
    image: \${REGISTRY}/api:1
  cache:
    image: \${CACHE_IMAGE}
  broker:
    image: \${REGISTRY}/platform:1-broker
    build: ./broker
  kafka:
    image: \${REGISTRY}/platform:1-kafka
    build: ./kafka
`;
  const env = `REGISTRY=ghcr.io/acme
API_ADDR=api:8080
CACHE_HOST=cache
CACHE_IMAGE=valkey/valkey:8
DB_PASSWORD=hunter2hunter2
`;
  const run = async (files: Array<{ path: string; text: string }>) =>
    (await analyzeCloud(files)).evidence.filter((e) => e.subject_key === 'service:web');
  const withEnv = await run([
    { path: 'deploy/docker-compose.yml', text: compose },
    { path: 'deploy/.env', text: env },
  ]);
  const refs = (ev: typeof withEnv) =>
    ev
      .filter((e) => e.evidence_kind === 'env-reference')
      .map((e) => `${String(e.attributes.variable)}->${e.object_key}`)
      .sort();
  t.deepEqual(refs(withEnv), [
    'API_ADDR->service:api',
    'BROKER_SERVICE_ADDR->service:broker',
    'CACHE_URL->service:cache',
  ]);
  const api = withEnv.find((e) => e.attributes.variable === 'API_ADDR')!;
  t.is(api.attributes.interpolated, 'dotenv-passthrough');
  t.is(
    withEnv.find((e) => e.attributes.variable === 'BROKER_SERVICE_ADDR')!.attributes.resolution,
    'variable-name',
  );
  // `${DB_PASSWORD}` is a reference in the compose file, not a literal secret there.
  t.false(withEnv.some((e) => e.evidence_kind === 'literal-secret'));
  const declared = (
    await analyzeCloud([
      { path: 'deploy/docker-compose.yml', text: compose },
      { path: 'deploy/.env', text: env },
    ])
  ).evidence.filter((e) => /^(datastore|queue)-declared$/.test(e.evidence_kind));
  t.deepEqual(declared.map((e) => `${e.subject_key}:${String(e.attributes.engine)}`).sort(), [
    'datastore:cache:redis',
    'queue:kafka:kafka',
  ]);

  // A .env file of another directory is not this project's: no value resolves through it, and
  // only the variables' names (API_ADDR -> api, CACHE_URL -> cache) point at services.
  const elsewhere = await run([
    { path: 'deploy/docker-compose.yml', text: compose },
    { path: 'other/.env', text: env },
  ]);
  t.deepEqual(refs(elsewhere), refs(withEnv));
  t.true(
    elsewhere
      .filter((e) => e.evidence_kind === 'env-reference')
      .every((e) => e.attributes.resolution === 'variable-name' && !e.attributes.interpolated),
  );
});

test('the pipeline reads a checkout the way an audit does: classified files only, .git and notes skipped', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'accuracy-tree-'));
  try {
    const put = (rel: string, text: string) => {
      fs.mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    };
    put('docker-compose.yml', 'services:\n  api:\n    image: shop/api:1\n');
    put('SOURCE.md', '# notes\n');
    put('LICENSE', 'license text\n');
    put('.git/config', '[core]\n');
    put('.git/compose.yml', 'services:\n  ghost:\n    image: ghost:1\n');
    const { graph: g, files } = await analyzeTree(dir);
    t.is(files, 1);
    t.deepEqual(
      g.entities.filter((e) => e.kind === 'service').map((e) => e.canonical_key),
      ['service:api'],
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** The audit pipeline over in-memory files (classified like the source stage does). */
async function pipeline(files: Array<{ path: string; text: string }>): Promise<Graph> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'accuracy-'));
  try {
    for (const f of files) {
      fs.mkdirSync(path.join(dir, path.dirname(f.path)), { recursive: true });
      fs.writeFileSync(path.join(dir, f.path), f.text);
    }
    return (await analyzeTree(dir)).graph;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const edges = (g: Graph) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to')
    .map((r) => `${r.source_key}->${r.target_key}`)
    .sort();

const CSPROJ = `<Project Sdk="Microsoft.NET.Sdk"><ItemGroup><PackageReference Include="Npgsql" Version="8.0.3" /></ItemGroup></Project>`;
const WORKER = `var host = Environment.GetEnvironmentVariable("POSTGRES_HOST") ?? "db";
var cache = Environment.GetEnvironmentVariable("CACHE_HOST") ?? "nowhere";
`;

test('code defaults: a default host nobody overrides connects to the declared datastore', async (t) => {
  const compose = (env: string) => `services:
  worker:
    build: ./worker
${env}  db:
    image: postgres:16
  other-db:
    image: postgres:16
`;
  const base = [
    { path: 'worker/Worker.csproj', text: CSPROJ },
    { path: 'worker/Program.cs', text: WORKER },
  ];
  // Nothing sets POSTGRES_HOST: the default `db` is in effect; `nowhere` is no declared entity.
  t.deepEqual(edges(await pipeline([...base, { path: 'docker-compose.yml', text: compose('') }])), [
    'service:worker->datastore:db',
  ]);
  // The deployment overrides it: only the configured target is an edge.
  const overridden = await pipeline([
    ...base,
    {
      path: 'docker-compose.yml',
      text: compose('    environment:\n      POSTGRES_HOST: other-db\n'),
    },
  ]);
  t.deepEqual(edges(overridden), ['service:worker->datastore:other-db']);
});

test('code clients: a literal host argument names the datastore; local hosts and strings do not', async (t) => {
  const g = await pipeline([
    {
      path: 'docker-compose.yml',
      text: 'services:\n  vote:\n    build: ./vote\n  redis:\n    image: redis:7\n  queue:\n    image: rabbitmq:3\n',
    },
    { path: 'vote/requirements.txt', text: 'redis\npika\n' },
    {
      path: 'vote/app.py',
      text: [
        'from redis import Redis',
        'import pika',
        'r = Redis(host="redis", db=0, socket_timeout=5)',
        'local = Redis(host="localhost")',
        'doc = "call Redis(host=\\"elsewhere\\") to connect"',
        "params = pika.ConnectionParameters(host='queue')",
      ].join('\n'),
    },
  ]);
  t.deepEqual(edges(g), ['service:vote->datastore:redis', 'service:vote->queue:queue']);
});

test('code read through a helper corroborates the manifests; a Dockerfile in a layout folder names its service', async (t) => {
  const deployment = (name: string, env: Array<[string, string]>) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  template:
    spec:
      containers:
        - name: server
          image: shop/${name}:1.0
          env:
${env.map(([k, v]) => `            - name: ${k}\n              value: "${v}"`).join('\n') || '            []'}
---
apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  ports:
    - port: 8080
`;
  const g = await pipeline([
    {
      path: 'deploy/k8s/web.yaml',
      text: deployment('web', [
        ['BASKET_SERVICE_ADDR', 'basket:8080'],
        ['PRICES_SERVICE_ADDR', 'prices:8080'],
      ]),
    },
    { path: 'deploy/k8s/basket.yaml', text: deployment('basket', []) },
    { path: 'deploy/k8s/prices.yaml', text: deployment('prices', []) },
    { path: 'web/go.mod', text: 'module example.com/web\n\ngo 1.22\n' },
    { path: 'web/Dockerfile', text: 'FROM golang:1.22\nCOPY . .\n' },
    {
      path: 'web/main.go',
      text: `package main

import (
	"fmt"
	"os"
)

type clients struct{ basketAddr, pricesAddr string }

func lookup(target *string, name string) {
	v := os.Getenv(name)
	if v == "" {
		panic(fmt.Sprintf("%s is not set", name))
	}
	*target = v
}

func main() {
	c := new(clients)
	lookup(&c.basketAddr, "BASKET_SERVICE_ADDR")
	lookup(&c.pricesAddr, "PRICES_SERVICE_ADDR")
}
`,
    },
    { path: 'basket/src/Dockerfile', text: 'FROM mcr.microsoft.com/dotnet/aspnet:8.0\n' },
    {
      path: 'basket/src/basket.csproj',
      text: '<Project Sdk="Microsoft.NET.Sdk.Web"></Project>',
    },
  ]);
  const fromWeb = g.relationships.filter(
    (r) => r.kind === 'connects_to' && r.source_key === 'service:web',
  );
  t.deepEqual(fromWeb.map((r) => r.target_key).sort(), ['service:basket', 'service:prices']);
  for (const r of fromWeb) t.deepEqual(r.sources, ['cloud', 'code'], r.canonical_key);
  t.false(g.entities.some((e) => e.canonical_key === 'service:src'));
});
