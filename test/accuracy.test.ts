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
import { EXPECTED_DIR, analyzeTree, listCorpora, readExpected, score } from '../bench/accuracy';
import { analyzeCloud } from '../analysis/cloud';
import { interpolate, parseDotenv } from '../analysis/cloud/compose';
import { classifyPath } from '../domain/audits/classify';
import type { Graph } from '../analysis/reconcile';

const corpora = listCorpora();

test('the ground truth: at least three systems, each naming its repository, commits and edges', (t) => {
  t.true(corpora.length >= 3, corpora.join(', '));
  for (const name of corpora) {
    const dir = path.join(EXPECTED_DIR, name);
    const source = fs.readFileSync(path.join(dir, 'SOURCE.md'), 'utf8');
    t.regex(source, /github\.com\/[\w.-]+\/[\w.-]+/, `${name}: SOURCE.md names the repository`);
    t.regex(source, /\b[0-9a-f]{40}\b/, `${name}: SOURCE.md names the commits`);
    const edges = readExpected(dir);
    t.true(edges.length >= 4, `${name}: a real graph, not a token one`);
    for (const e of edges) {
      t.regex(e.from, /^(service|datastore|queue):[a-z0-9-]+$/, `${name}: ${e.from}`);
      t.regex(e.to, /^(service|datastore|queue):[a-z0-9-]+$/, `${name}: ${e.to}`);
    }
  }
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
  t.is(classifyPath('.env.example'), null);
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
