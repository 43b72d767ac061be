/**
 * Deployment variants and images to folders (issue 23, items 1 and 4), on small repositories
 * written here: a base manifest folder beside an alternative one that puts the databases behind
 * a connection pooler, dev and prod compose files, Skaffold and CI deciding which is deployed;
 * and images pulled by name whose Dockerfile elsewhere in the repository says what they run.
 * Pure: no database.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { architectureStatus } from '../analysis/uncertainty';
import {
  analyzeFiles,
  connections as edges,
  deployment,
  entityKeys as keys,
} from './helpers/pipeline';

/** The base folder: each service its own database. */
const BASE: SourceFile[] = [
  {
    path: 'k8s/apps.yaml',
    text:
      deployment('orders', 'acme/orders:1', { DB_HOST: 'orders-db' }) +
      deployment('users', 'acme/users:1', { DATABASE_URL: 'postgres://users-db:5432/users' }) +
      deployment('catalog', 'acme/catalog:1', { DB_HOST: 'catalog-db' }),
  },
  {
    path: 'k8s/databases.yaml',
    text:
      deployment('orders-db', 'postgres:16') +
      deployment('users-db', 'postgres:16') +
      deployment('catalog-db', 'postgres:16'),
  },
];
/** The alternative folder: the same services behind a pooler, a name resolved differently. */
const POOLED: SourceFile[] = [
  {
    path: 'k8s-pooled/apps.yaml',
    text:
      deployment('orders', 'acme/orders:1', { DB_HOST: 'pg-pool' }) +
      deployment('users', 'acme/users:1', { DATABASE_URL: 'postgres://pg-pool:6432/users' }) +
      deployment('catalog', 'acme/catalog:1', { DB_HOST: 'orders-db' }),
  },
  {
    path: 'k8s-pooled/pool.yaml',
    text:
      deployment('pg-pool', 'bitnami/pgbouncer:1', { POSTGRESQL_HOST: 'orders-db' }) +
      deployment('orders-db', 'postgres:16'),
  },
];

const BASE_EDGES = [
  'service:catalog -> datastore:catalog-db',
  'service:orders -> datastore:orders-db',
  'service:users -> datastore:users-db',
];

test('variants: a deploy step chooses the primary; the other folder adds no edge and no entity', async (t) => {
  const ci: SourceFile = {
    path: '.github/workflows/deploy.yml',
    text: `on: push
jobs:
  deploy:
    runs-on: ubuntu-latest
    environment: production
    steps:
      - run: kubectl apply -f k8s/
`,
  };
  const { graph } = await analyzeFiles([...BASE, ...POOLED, ci]);
  const got = edges(graph);
  for (const e of BASE_EDGES) t.true(got.includes(e), `${e} in ${got.join(', ')}`);
  // The alternative's wiring never lands on the primary's entities.
  t.false(
    got.some((e) => e.includes('pg-pool')),
    got.join(', '),
  );
  t.false(got.includes('service:catalog -> datastore:orders-db'));
  t.false(keys(graph).some((k) => k.includes('pg-pool')));
  const v = graph.variants?.[0];
  t.like(v, { family: 'kubernetes', primary: 'k8s', others: ['k8s-pooled'], guessed: false });
  t.is(v?.chosen_by, 'deploy-step');
  t.true(
    v!.dropped_edges.includes('service:catalog -> service:orders-db'),
    v!.dropped_edges.join('; '),
  );
  t.is(
    architectureStatus({
      missingSources: [],
      guessedVariant: graph.variants!.some((x) => x.guessed),
    }),
    'complete',
  );
});

test('variants: Skaffold naming the alternative folder makes it the primary', async (t) => {
  const skaffold: SourceFile = {
    path: 'skaffold.yaml',
    text: `apiVersion: skaffold/v4beta6
kind: Config
build:
  artifacts:
    - image: acme/orders
      context: src/orders
manifests:
  rawYaml:
    - ./k8s-pooled/*.yaml
profiles:
  - name: base
    manifests:
      rawYaml: [./k8s/*.yaml]
`,
  };
  const { graph } = await analyzeFiles([...BASE, ...POOLED, skaffold]);
  const got = edges(graph);
  t.true(got.includes('service:orders -> datastore:pg-pool'), got.join(', '));
  t.true(got.includes('service:catalog -> datastore:orders-db'));
  t.false(got.includes('service:catalog -> datastore:catalog-db'));
  t.false(got.includes('service:users -> datastore:users-db'));
  t.like(graph.variants?.[0], { primary: 'k8s-pooled', others: ['k8s'], guessed: false });
});

test('variants: with nothing saying which is deployed, the most complete is chosen and the guess is said', async (t) => {
  const { graph } = await analyzeFiles([...BASE, ...POOLED]);
  const v = graph.variants?.[0];
  // The base declares six deployables, the pooled folder five.
  t.like(v, { primary: 'k8s', others: ['k8s-pooled'], guessed: true, chosen_by: 'most-complete' });
  t.regex(v!.detail, /a guess/);
  t.deepEqual(
    edges(graph).filter((e) => e.includes('-db') || e.includes('pool')),
    BASE_EDGES,
  );
  t.is(architectureStatus({ missingSources: [], guessedVariant: true }), 'partial');
});

test('variants: one deployment split over folders with distinct names is no variant', async (t) => {
  const { graph } = await analyzeFiles([
    { path: 'deploy/apps/apps.yaml', text: BASE[0]!.text },
    { path: 'deploy/data/databases.yaml', text: BASE[1]!.text },
  ]);
  t.is(graph.variants, undefined);
  t.deepEqual(edges(graph), BASE_EDGES);
});

test('variants: a dev and a prod compose project are variants; override and layered files are not', async (t) => {
  const files: SourceFile[] = [
    {
      path: 'deploy/dev/docker-compose.yml',
      text: 'services:\n  api:\n    image: acme/api:1\n    environment:\n      DB_URL: postgres://db:5432/x\n  db:\n    image: postgres:16\n  worker:\n    image: acme/worker:1\n',
    },
    {
      // Layered onto the file beside it (`-f docker-compose.yml -f docker-compose.override.yml`).
      path: 'deploy/dev/docker-compose.override.yml',
      text: 'services:\n  api:\n    environment:\n      CACHE_URL: redis://cache:6379\n  cache:\n    image: redis:7\n',
    },
    {
      path: 'deploy/prod/docker-compose.yml',
      text: 'services:\n  api:\n    image: acme/api:1\n    environment:\n      DB_URL: postgres://managed-db.internal:5432/x\n  worker:\n    image: acme/worker:1\n',
    },
  ];
  const { graph } = await analyzeFiles(files);
  t.deepEqual(edges(graph), ['service:api -> datastore:cache', 'service:api -> datastore:db']);
  t.like(graph.variants?.[0], {
    family: 'docker-compose',
    primary: 'deploy/dev',
    others: ['deploy/prod'],
    guessed: true,
  });
  t.deepEqual(graph.variants?.[0]?.dropped_edges, ['service:api -> external:managed-db.internal']);
});

test('variants: a per-service dev stack beside the full compose project is no variant: both count', async (t) => {
  const { graph } = await analyzeFiles([
    {
      path: 'app/docker-compose.yml',
      text: 'services:\n  ui:\n    image: acme/ui:1\n    environment:\n      CART_URL: http://cart:8080\n  cart:\n    image: acme/cart:1\n  catalog:\n    image: acme/catalog:1\n  orders:\n    image: acme/orders:1\n',
    },
    {
      path: 'src/cart/docker-compose.yml',
      text: 'services:\n  cart:\n    image: acme/cart:1\n    environment:\n      DB_URL: postgres://carts-db:5432/carts\n  carts-db:\n    image: postgres:16\n',
    },
  ]);
  t.is(graph.variants, undefined);
  t.deepEqual(edges(graph), ['service:cart -> datastore:carts-db', 'service:ui -> service:cart']);
});

// ---------------------------------------------------------------------------------------------
// Images to folders

const MONGO_SHOP: SourceFile[] = [
  {
    path: 'docker-compose.yml',
    text: `services:
  account-service:
    image: acme/shop-account:1
    environment:
      MONGODB_URI: mongodb://account-mongodb:27017/accounts
  account-mongodb:
    image: acme/shop-mongodb:1
  notifier:
    image: acme/shop-notifier:1
    environment:
      CACHE_URL: redis://session-cache:6379
  session-cache:
    image: acme/session-cache:1
  gateway:
    image: acme/shop-gateway:1
    environment:
      ACCOUNT_URL: http://account-service:8080
`,
  },
  {
    path: 'docker-compose.dev.yml',
    text: `services:
  account-mongodb:
    build: mongodb
    ports: ["27017:27017"]
`,
  },
  {
    path: 'mongodb/Dockerfile',
    text: 'FROM mongo:4.4\nCOPY init.js /docker-entrypoint-initdb.d/\n',
  },
  {
    path: 'skaffold.yaml',
    text: `apiVersion: skaffold/v4beta6
kind: Config
build:
  artifacts:
    - image: acme/session-cache
      context: infra/cache
    - image: acme/shop-gateway
      context: gateway
`,
  },
  {
    path: 'infra/cache/Dockerfile',
    text: 'FROM redis:7-alpine AS base\nFROM base\nCOPY redis.conf /etc/\n',
  },
  { path: 'gateway/Dockerfile', text: 'FROM node:20\nCOPY . .\nCMD ["node", "main.js"]\n' },
];

test('images to folders: an image pulled by name is what the Dockerfile that builds it is FROM', async (t) => {
  const { graph, evidence } = await analyzeFiles(MONGO_SHOP);
  const k = keys(graph);
  t.true(k.includes('datastore:account-mongodb'), k.join(', '));
  t.false(k.includes('service:account-mongodb'));
  t.true(k.includes('datastore:session-cache'), k.join(', '));
  const got = edges(graph);
  t.true(got.includes('service:account-service -> datastore:account-mongodb'), got.join(', '));
  t.true(got.includes('service:notifier -> datastore:session-cache'), got.join(', '));
  const clue = evidence.find(
    (e) => e.evidence_kind === 'datastore-declared' && e.subject_key === 'datastore:session-cache',
  );
  t.regex(String(clue?.attributes.engine_clue), /infra\/cache\/Dockerfile.*FROM redis:7-alpine/);
  t.is(clue?.attributes.engine, 'redis');
});

test('images to folders: an image built FROM a runtime stays a service; an unknown image is not guessed', async (t) => {
  const { graph } = await analyzeFiles([
    ...MONGO_SHOP,
    {
      path: 'extra/docker-compose.yml',
      text: 'services:\n  reports:\n    image: acme/reports:1\n',
    },
  ]);
  const k = keys(graph);
  t.true(k.includes('service:gateway'));
  t.false(k.includes('datastore:gateway'));
  t.true(k.includes('service:reports'));
  t.false(
    k.some((x) => /^(datastore|queue):(gateway|reports|notifier)$/.test(x)),
    k.join(', '),
  );
});

test('images to folders: a Kubernetes workload running an image Skaffold builds FROM redis is a datastore', async (t) => {
  const { graph } = await analyzeFiles([
    {
      path: 'k8s/apps.yaml',
      text:
        deployment('api', 'acme/api:1', { CACHE_HOST: 'session-cache' }) +
        deployment('session-cache', 'acme/session-cache:1') +
        deployment('web', 'acme/web:1'),
    },
    {
      path: 'skaffold.yaml',
      text: 'apiVersion: skaffold/v4beta6\nkind: Config\nbuild:\n  artifacts:\n    - image: acme/session-cache\n      context: infra/cache\n    - image: acme/web\n      context: web\nmanifests:\n  rawYaml: [k8s/*.yaml]\n',
    },
    { path: 'infra/cache/Dockerfile', text: 'FROM redis:7-alpine\nCOPY redis.conf /etc/\n' },
    { path: 'web/Dockerfile', text: 'FROM nginx:1.27\nCOPY dist /usr/share/nginx/html\n' },
  ]);
  const k = keys(graph);
  t.true(k.includes('datastore:session-cache'), k.join(', '));
  t.true(k.includes('service:web'));
  t.false(k.includes('datastore:web'));
  t.true(edges(graph).includes('service:api -> datastore:session-cache'), edges(graph).join(', '));
});

test('images to folders: a CI docker build step links the image to its folder; FROM postgres makes a datastore, FROM node a service', async (t) => {
  const { graph } = await analyzeFiles([
    {
      path: 'docker-compose.yml',
      text: 'services:\n  orders:\n    image: acme/orders:1\n    environment:\n      DB_URL: postgres://orders-store:5432/orders\n  orders-store:\n    image: ghcr.io/acme/orders-store:1\n',
    },
    {
      path: '.github/workflows/images.yml',
      text: `on: push
jobs:
  images:
    runs-on: ubuntu-latest
    steps:
      - run: docker build -t ghcr.io/acme/orders-store:1 -f db/store/Dockerfile.db db/store
      - run: docker build -t acme/orders:1 services/orders
`,
    },
    {
      path: 'db/store/Dockerfile.db',
      text: 'FROM postgres:16\nCOPY init.sql /docker-entrypoint-initdb.d/\n',
    },
    {
      path: 'services/orders/Dockerfile',
      text: 'FROM node:20\nCOPY . .\nCMD ["node", "main.js"]\n',
    },
  ]);
  const k = keys(graph);
  t.true(k.includes('datastore:orders-store'), k.join(', '));
  t.false(k.includes('service:orders-store'));
  t.true(k.includes('service:orders'));
  t.false(k.includes('datastore:orders'));
  t.true(
    edges(graph).includes('service:orders -> datastore:orders-store'),
    edges(graph).join(', '),
  );
});

test('images to folders: docker/build-push-action context and file link the image to its Dockerfile', async (t) => {
  const { graph } = await analyzeFiles([
    {
      path: 'docker-compose.yml',
      text: 'services:\n  api:\n    image: acme/api:1\n    environment:\n      SEARCH_URL: http://search-index:9200\n  search-index:\n    image: ghcr.io/acme/search-index:1\n',
    },
    {
      path: '.github/workflows/images.yml',
      text: `on: push
jobs:
  images:
    runs-on: ubuntu-latest
    steps:
      - uses: docker/build-push-action@v6
        with:
          context: ./infra/search
          file: ./infra/search/Containerfile
          tags: ghcr.io/acme/search-index:1
          push: true
`,
    },
    {
      path: 'infra/search/Containerfile',
      text: 'FROM elasticsearch:8.15.0\nCOPY synonyms.txt /usr/share/elasticsearch/config/\n',
    },
  ]);
  const k = keys(graph);
  t.true(k.includes('datastore:search-index'), k.join(', '));
  t.true(edges(graph).includes('service:api -> datastore:search-index'), edges(graph).join(', '));
});

/** A Compose deployment of `orders` with its own PostgreSQL and a Redis cache. */
const COMPOSE_ORDERS: SourceFile = {
  path: 'docker-compose.yml',
  text: `services:
  orders:
    build: ./src/orders
    environment:
      DB_ENDPOINT: orders-db:5432
      CACHE_URL: redis://orders-cache:6379
  orders-db:
    image: postgres:16.1
  orders-cache:
    image: redis:7
`,
};

/**
 * The chart of the same `orders`, whose in-cluster PostgreSQL (and, with `queue.create`, a
 * RabbitMQ the Compose deployment does not run) a helmfile turns on.
 */
function ordersChart(helmfileValues: string, dbImage = 'postgres:16.1'): SourceFile[] {
  const gated = (flag: string, name: string, image: string, port: number) =>
    `{{- if .Values.${flag}.create }}
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: ${name} }
spec: { template: { spec: { containers: [{ name: ${flag}, image: "${image}" }] } } }
---
apiVersion: v1
kind: Service
metadata: { name: ${name} }
spec: { ports: [{ port: ${port} }] }
{{- end }}
`;
  return [
    { path: 'src/orders/chart/Chart.yaml', text: 'apiVersion: v2\nname: orders\nversion: 1.0.0\n' },
    {
      path: 'src/orders/chart/values.yaml',
      text: 'postgresql:\n  create: false\nqueue:\n  create: false\ndb:\n  endpoint: localhost:5432\n',
    },
    {
      path: 'src/orders/chart/templates/deployment.yaml',
      text: deployment('orders', 'acme/orders:1.0', {
        DB_ENDPOINT:
          '{{ if .Values.postgresql.create }}orders-postgresql:5432{{ else }}{{ .Values.db.endpoint }}{{ end }}',
        AMQP_ADDRESSES: '{{ if .Values.queue.create }}orders-rabbitmq:5672{{ end }}',
      }),
    },
    {
      path: 'src/orders/chart/templates/postgresql.yaml',
      text: gated('postgresql', 'orders-postgresql', dbImage, 5432),
    },
    {
      path: 'src/orders/chart/templates/rabbitmq.yaml',
      text: gated('queue', 'orders-rabbitmq', 'rabbitmq:3-management', 5672),
    },
    {
      path: 'deploy/helmfile.yaml',
      text: `releases:
  - name: orders
    chart: ../src/orders/chart
    values:
      - ${helmfileValues}
`,
    },
  ];
}

test('one system deployed by Compose and by Helm: the chart copy of a Compose store is a variant, not a second store', async (t) => {
  const { graph } = await analyzeFiles([
    COMPOSE_ORDERS,
    ...ordersChart('postgresql: {create: true}'),
  ]);
  const k = keys(graph);
  t.true(k.includes('datastore:orders-db'), k.join(', '));
  t.false(k.includes('datastore:orders-postgresql'), k.join(', '));
  t.false(k.includes('service:orders-postgresql'), k.join(', '));
  t.true(edges(graph).includes('service:orders -> datastore:orders-db'), edges(graph).join(', '));
  t.false(
    edges(graph).some((e) => e.includes('orders-postgresql')),
    edges(graph).join(', '),
  );
  const copy = (graph.variants ?? []).find((v) => v.detail.includes('orders-postgresql'));
  t.truthy(copy, JSON.stringify(graph.variants));
  t.is(copy!.family, 'helm');
  t.is(copy!.primary, 'docker-compose.yml');
  t.deepEqual(copy!.others, ['src/orders/chart/templates/postgresql.yaml']);
  t.true(copy!.guessed);
  t.true(copy!.dropped_edges.includes('service:orders -> service:orders-postgresql'));
  t.regex(copy!.detail, /copy of datastore:orders-db \(postgres, docker-compose\.yml\)/);
});

test('a chart store with no Compose counterpart of its engine stays: a queue only Helm runs is the system', async (t) => {
  const { graph } = await analyzeFiles([
    COMPOSE_ORDERS,
    ...ordersChart('{postgresql: {create: true}, queue: {create: true}}'),
  ]);
  const k = keys(graph);
  t.false(k.includes('datastore:orders-postgresql'), k.join(', '));
  t.true(k.includes('queue:orders-rabbitmq'), k.join(', '));
  t.true(edges(graph).includes('service:orders -> queue:orders-rabbitmq'), edges(graph).join(', '));
  // Without the Compose deployment, the chart's stores are the only ones and stay.
  const alone = await analyzeFiles(ordersChart('postgresql: {create: true}'));
  t.true(keys(alone.graph).includes('datastore:orders-postgresql'), keys(alone.graph).join(', '));
  t.true(
    edges(alone.graph).includes('service:orders -> datastore:orders-postgresql'),
    edges(alone.graph).join(', '),
  );
});

test('Compose and Helm copies: MariaDB copies MySQL; a service with two Compose stores of the engine keeps the chart store (which one it copies is unknown)', async (t) => {
  const compose = (dbs: string[]): SourceFile => ({
    path: 'docker-compose.yml',
    text: `services:\n  orders:\n    build: ./src/orders\n    environment:\n${dbs.map((d, i) => `      DB${i}_ENDPOINT: ${d}:3306\n`).join('')}${dbs.map((d) => `  ${d}:\n    image: mariadb:10.9\n`).join('')}`,
  });
  const chart = ordersChart('postgresql: {create: true}', 'mysql:8.0');
  const one = await analyzeFiles([compose(['orders-db']), ...chart]);
  t.deepEqual(
    keys(one.graph).filter((k) => k.startsWith('datastore:')),
    ['datastore:orders-db'],
  );
  const copy = (one.graph.variants ?? []).find((v) => v.detail.includes('orders-postgresql'));
  t.regex(
    copy?.detail ?? '',
    /\(mysql, .*copy of datastore:orders-db \(mariadb, docker-compose\.yml\)/,
  );
  const two = await analyzeFiles([compose(['orders-db', 'audit-db']), ...chart]);
  t.true(keys(two.graph).includes('datastore:orders-postgresql'), keys(two.graph).join(', '));
  t.true(
    edges(two.graph).includes('service:orders -> datastore:orders-postgresql'),
    edges(two.graph).join(', '),
  );
});

test('Compose and Helm copies: the chart workload may be named after the Compose service hostname', async (t) => {
  const compose = (hostname: string): SourceFile => ({
    path: 'docker-compose.yml',
    text: `services:\n  order:\n    build: ./src/orders\n${hostname}    environment:\n      DB_ENDPOINT: orders-db:5432\n  orders-db:\n    image: postgres:16.1\n`,
  });
  const chart = ordersChart('postgresql: {create: true}');
  const named = await analyzeFiles([compose('    hostname: orders\n'), ...chart]);
  const k = keys(named.graph);
  t.true(k.includes('datastore:orders-db'), k.join(', '));
  t.false(k.includes('datastore:orders-postgresql'), k.join(', '));
  t.true(
    (named.graph.variants ?? []).some((v) => v.detail.includes('orders-postgresql')),
    JSON.stringify(named.graph.variants),
  );
  // Without the hostname nothing says the chart's `orders` is Compose's `order`: both stores stay.
  const unnamed = await analyzeFiles([compose(''), ...chart]);
  t.true(
    keys(unnamed.graph).includes('datastore:orders-postgresql'),
    keys(unnamed.graph).join(', '),
  );
});
