/**
 * Env templates (issue 23, session 12; docs/decisions.md, "A committed env template configures
 * the unit beside it"), and .NET nested settings keys in a deployment's environment
 * (`Redis__Configuration`, `RabbitMQ__Connections__Default__HostName`). File sets are built in
 * memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { analyzeFiles, connections, deployment, verifiable } from './helpers/pipeline';
import type { SourceFile } from '../analysis/evidence';

const PACKAGE = JSON.stringify({
  name: 'wiki-app',
  scripts: { start: 'node server/index.js' },
  dependencies: { pg: '^8.0.0', ioredis: '^5.0.0' },
});
const SERVER = `const { Pool } = require('pg');
const pool = new Pool({ connectionString: process.env.DATABASE_URL });
module.exports = pool;
`;
/** Compose runs only the stores; the application runs on the developer's machine. */
const DEPS_COMPOSE = `services:
  db:
    image: postgres:16
    ports:
      - "127.0.0.1:5432:5432"
  cache:
    image: redis:7
    ports:
      - "6379:6379"
`;

const base = (template: string, compose = DEPS_COMPOSE): SourceFile[] => [
  { path: 'package.json', text: PACKAGE },
  { path: 'server/index.js', text: SERVER },
  { path: 'docker-compose.yml', text: compose },
  { path: '.env.sample', text: template },
];

test('a template beside a unit nothing deploys gives that unit its addresses, capped', async (t) => {
  const files = base(`# copy to .env
DATABASE_URL=postgres://user:pass@db:5432/wiki
REDIS_URL=redis://cache:6379
FILE_STORAGE_URL=http://s3:4569
`);
  const { graph, evidence } = await analyzeFiles(files);
  t.deepEqual(connections(graph), [
    'service:wiki-app -> datastore:cache',
    'service:wiki-app -> datastore:db',
  ]);
  for (const r of graph.relationships.filter((x) => x.kind === 'connects_to'))
    t.true(Number(r.confidence) <= 0.45, `${r.canonical_key} ${r.confidence}`);
  const cited = evidence.filter((e) => e.evidence_kind === 'env-template-value');
  t.true(cited.length > 0 && cited.every((e) => verifiable(files, e)));
});

test('a local address reaches the one compose store of its engine published on its port', async (t) => {
  const { graph } = await analyzeFiles(
    base(`DATABASE_URL=postgres://user:pass@127.0.0.1:5432/wiki
REDIS_URL=redis://localhost:6380
`),
  );
  // 6380: no store publishes it, so the Redis address is no edge.
  t.deepEqual(connections(graph), ['service:wiki-app -> datastore:db']);
});

test('a deployment giving the unit its environment wins over the template', async (t) => {
  const compose = `${DEPS_COMPOSE}  app:
    build: .
    environment:
      DATABASE_URL: postgres://user:pass@db:5432/wiki
`;
  const { graph } = await analyzeFiles(
    base(
      `DATABASE_URL=postgres://user:pass@db:5432/wiki
REDIS_URL=redis://cache:6379
`,
      compose,
    ),
  );
  // The compose environment sets no REDIS_URL: the template's Redis is not what runs.
  t.deepEqual(connections(graph), ['service:app -> datastore:db']);
  const edge = graph.relationships.find((r) => r.target_key === 'datastore:db')!;
  t.true(Number(edge.confidence) > 0.45);
});

test('a template in a folder holding no unit configures nothing', async (t) => {
  const files = base('').filter((f) => f.path !== '.env.sample');
  files.push({ path: 'docs/.env.example', text: 'DATABASE_URL=postgres://u:p@db:5432/wiki\n' });
  const { graph } = await analyzeFiles(files);
  t.deepEqual(connections(graph), []);
});

test('.NET nested keys in a deployment env name the stores (Redis:Configuration, HostName)', async (t) => {
  const files: SourceFile[] = [
    {
      path: 'k8s/payment.yaml',
      text: deployment('payment', 'acme/payment:1', {
        Redis__Configuration: 'cache:6379,password=x',
        RabbitMQ__Connections__Default__HostName: 'broker',
        Logging__LogLevel__Default: 'Information',
      }),
    },
    { path: 'k8s/cache.yaml', text: deployment('cache', 'redis:7') },
    { path: 'k8s/broker.yaml', text: deployment('broker', 'rabbitmq:3') },
  ];
  const { graph } = await analyzeFiles(files);
  t.deepEqual(connections(graph), [
    'service:payment -> datastore:cache',
    'service:payment -> queue:broker',
  ]);
});

test('a unit built by Dockerfiles of its folder, deployed by nothing, is not named for a build stage', async (t) => {
  const files = base('DATABASE_URL=postgres://user:pass@db:5432/wiki\n');
  files.push(
    { path: 'Dockerfile', text: 'FROM node:20 AS runner\nCMD ["node", "server/index.js"]\n' },
    { path: 'Dockerfile.base', text: 'FROM node:20 AS deps\nCOPY package.json ./\n' },
  );
  const { graph } = await analyzeFiles(files);
  const app = graph.entities.find((e) => e.canonical_key === 'service:wiki-app');
  t.truthy(app);
  t.deepEqual(app!.attributes.aliases, ['service:deps', 'service:runner']);
  t.deepEqual(connections(graph), ['service:wiki-app -> datastore:db']);
});
