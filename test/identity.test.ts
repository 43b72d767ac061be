/**
 * Identity and unit classification (docs/decisions.md "Identity and unit classification"), on
 * small file sets written here: deployables never collapse into one entity, only deployable units
 * become services, engines are datastores even when built here, one-shot Jobs are jobs, and an
 * identity conflict makes the snapshot partial with an `ambiguous_identity` case.
 */
import test from 'ava';
import { analyzeFiles } from './helpers/pipeline';
import type { Graph } from '../analysis/reconcile';
import { architectureStatus, uncertaintyCandidates } from '../analysis/uncertainty';

const pipeline = analyzeFiles;

const keys = (g: Graph, kind?: string) =>
  g.entities
    .filter((e) =>
      kind ? e.kind === kind : ['service', 'datastore', 'queue', 'job'].includes(e.kind),
    )
    .map((e) => e.canonical_key)
    .sort();

const NODE_PKG = JSON.stringify({ name: 'shop', private: true, scripts: { start: 'node x.js' } });

test('a build context shared by every service: each service is its own Dockerfile, the root package joins none', async (t) => {
  const { graph } = await pipeline([
    { path: 'package.json', text: NODE_PKG },
    {
      path: 'docker-compose.yml',
      text: `services:
  orders:
    build:
      context: ./
      dockerfile: src/orders/Dockerfile
  payments:
    build:
      context: ./
      dockerfile: src/payments/Dockerfile
  search:
    build:
      context: ./
      dockerfile: src/search/Dockerfile
`,
    },
    { path: 'src/orders/Dockerfile', text: 'FROM node:20\nCOPY . .\n' },
    { path: 'src/payments/Dockerfile', text: 'FROM node:20\nCOPY . .\n' },
    { path: 'src/search/Dockerfile', text: 'FROM elasticsearch:8.13.0\n' },
  ]);
  // Three deployables, three entities; the search engine is a datastore of its own, and the
  // others stay services (not typed by a member running a search engine).
  t.deepEqual(keys(graph), [
    'datastore:search',
    'service:orders',
    'service:payments',
    'service:shop',
  ]);
  t.is(
    graph.entities.find((e) => e.canonical_key === 'datastore:search')?.attributes.engine,
    'elasticsearch',
  );
  t.is(graph.conflicts, undefined);
});

test('a build Dockerfile named by a .env variable is the one Compose builds; an unset one names no unit', async (t) => {
  const compose = `services:
  agent:
    build:
      context: ./
      dockerfile: \${AGENT_DOCKERFILE}
`;
  const files = [
    { path: 'package.json', text: NODE_PKG },
    { path: 'docker-compose.yml', text: compose },
    { path: 'src/agent/Dockerfile', text: 'FROM python:3.12\nCOPY . .\nCMD ["python", "a.py"]\n' },
    { path: 'src/agent/requirements.txt', text: 'fastapi==0.110.0\n' },
  ];
  // With the variable in the project's .env, the build is src/agent's: the root package (the
  // repository's tooling) stays its own unit and is not read as the agent.
  const resolved = await pipeline([
    ...files,
    { path: '.env', text: 'AGENT_DOCKERFILE=src/agent/Dockerfile\n' },
  ]);
  const agent = resolved.graph.entities.find((e) => e.canonical_key === 'service:agent');
  t.is(agent?.attributes.dockerfile, 'src/agent/Dockerfile');
  t.is(agent?.attributes.dir, 'src/agent', 'the agent is the unit its Dockerfile builds');
  t.deepEqual(agent?.attributes.manifests, ['src/agent/requirements.txt']);
  t.true(keys(resolved.graph).includes('service:shop'));
  // Unset, the Dockerfile is unknown: the build names no unit by its root context.
  const unset = await pipeline(files);
  t.true(keys(unset.graph).includes('service:shop'));
});

test('two deployables that evidence would merge are kept apart, with an ambiguous_identity case and a partial status', async (t) => {
  const { graph, evidence } = await pipeline([
    {
      path: 'api/package.json',
      text: JSON.stringify({ name: 'api', private: true, scripts: { start: 'node s.js' } }),
    },
    { path: 'api/Dockerfile', text: 'FROM node:20\nCOPY . .\n' },
    {
      path: 'docker-compose.yml',
      text: `services:
  web:
    build: ./api
  worker:
    build: ./api
    command: node worker.js
`,
    },
  ]);
  t.deepEqual(keys(graph, 'service'), ['service:web', 'service:worker']);
  t.is(graph.conflicts?.length, 1);
  const conflict = graph.conflicts![0]!;
  t.deepEqual(conflict.keys, ['service:web', 'service:worker']);
  t.is(conflict.rule, 'build');
  // The record that would have merged them and both declarations are cited.
  const cited = conflict.evidence_ids.map((id) => evidence.find((e) => e.id === id)!);
  t.true(
    cited.some((e) => e.evidence_kind === 'service-declared' && e.subject_key === 'service:web'),
  );
  t.true(
    cited.some((e) => e.evidence_kind === 'service-declared' && e.subject_key === 'service:worker'),
  );

  const cases = uncertaintyCandidates({
    entities: graph.entities,
    relationships: graph.relationships,
    evidence,
    missingSources: [],
    conflicts: graph.conflicts,
  }).filter((c) => c.reason === 'ambiguous_identity');
  t.is(cases.length, 1);
  t.is(cases[0]!.scope, 'entity');
  t.is(cases[0]!.subject_key, 'service:web');
  t.regex(cases[0]!.detail, /service:web and service:worker/);
  t.regex(cases[0]!.detail, /docker-compose\.yml:\d+/);
  t.deepEqual(cases[0]!.source_keys, ['docker-compose.yml']);

  t.is(architectureStatus({ missingSources: [], conflicts: graph.conflicts }), 'partial');
  t.is(architectureStatus({ missingSources: [], conflicts: [] }), 'complete');
  t.is(architectureStatus({ missingSources: ['cicd'] }), 'partial');
});

test('a compose service and a Kubernetes workload of other names, built from one unit, are one thing', async (t) => {
  const { graph } = await pipeline([
    { path: 'cart/go.mod', text: 'module example.com/cart\n\ngo 1.22\n' },
    { path: 'cart/main.go', text: 'package main\n\nfunc main() {}\n' },
    { path: 'cart/Dockerfile', text: 'FROM golang:1.22\nCOPY . .\n' },
    { path: 'docker-compose.yml', text: 'services:\n  cart-svc:\n    build: ./cart\n' },
    {
      path: 'k8s/cart.yaml',
      text: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: cartservice
spec:
  template:
    spec:
      containers:
        - name: server
          image: cart:1.0
`,
    },
  ]);
  // Different providers declaring the same unit: merged, no conflict; named by a deployable.
  t.deepEqual(keys(graph, 'service'), ['service:cart-svc']);
  t.deepEqual(
    graph.entities.find((e) => e.canonical_key === 'service:cart-svc')!.attributes.aliases,
    ['service:cart', 'service:cartservice'],
  );
  t.is(graph.conflicts, undefined);
});

const CSPROJ = (body: string, sdk = 'Microsoft.NET.Sdk') =>
  `<Project Sdk="${sdk}">\n${body}\n</Project>\n`;

test('unit classes: only deployables become services; tests, libraries, clients, tools, orchestrators and jobs stay evidence', async (t) => {
  const { graph, evidence } = await pipeline([
    // Deployable: the web SDK.
    { path: 'src/Shop.Api/Shop.Api.csproj', text: CSPROJ('', 'Microsoft.NET.Sdk.Web') },
    {
      path: 'src/Shop.Api/Program.cs',
      text: 'var app = WebApplication.Create(args);\napp.Run();\n',
    },
    // Test projects.
    {
      path: 'tests/Shop.Api.Tests/Shop.Api.Tests.csproj',
      text: CSPROJ(
        '<ItemGroup><PackageReference Include="Microsoft.NET.Test.Sdk" Version="17.0.0" /></ItemGroup>',
      ),
    },
    { path: 'src/Shop.UnitTests/Shop.UnitTests.csproj', text: CSPROJ('') },
    // A class library.
    {
      path: 'src/Shop.Contracts/Shop.Contracts.csproj',
      text: CSPROJ('<PropertyGroup><TargetFramework>net8.0</TargetFramework></PropertyGroup>'),
    },
    { path: 'src/Shop.Contracts/Order.cs', text: 'public record Order(int Id);\n' },
    // An orchestrator (.NET Aspire AppHost).
    {
      path: 'src/Shop.AppHost/Shop.AppHost.csproj',
      text: CSPROJ(
        '<PropertyGroup><OutputType>Exe</OutputType></PropertyGroup><ItemGroup><PackageReference Include="Aspire.Hosting.AppHost" Version="8.0.0" /></ItemGroup>',
      ),
    },
    {
      path: 'src/Shop.AppHost/Program.cs',
      text: 'var builder = DistributedApplication.CreateBuilder(args);\n',
    },
    // A mobile client, a browser SPA without a server, a tool.
    {
      path: 'mobile/package.json',
      text: JSON.stringify({
        name: 'shop-mobile',
        private: true,
        dependencies: { 'react-native': '0.74.0' },
        scripts: { start: 'expo start' },
      }),
    },
    {
      path: 'web/package.json',
      text: JSON.stringify({
        name: 'shop-web',
        private: true,
        dependencies: { react: '18.0.0' },
        devDependencies: { vite: '5.0.0' },
        scripts: { dev: 'vite' },
      }),
    },
    { path: 'tools/gen/package.json', text: JSON.stringify({ name: 'gen', private: true }) },
    // A Go library and a one-shot migration unit.
    { path: 'pkg/money/go.mod', text: 'module example.com/money\n\ngo 1.22\n' },
    { path: 'pkg/money/money.go', text: 'package money\n' },
    { path: 'db-migrations/go.mod', text: 'module example.com/db-migrations\n\ngo 1.22\n' },
    { path: 'db-migrations/main.go', text: 'package main\n\nfunc main() {}\n' },
  ]);
  const classOf = (name: string) => {
    const e = evidence.find(
      (x) => x.evidence_kind === 'unit-declared' && x.subject_key === `service:${name}`,
    );
    return e ? `${String(e.attributes.unit_class)}` : 'absent';
  };
  t.is(classOf('shop.api'), 'service');
  t.is(classOf('shop.api.tests'), 'test');
  t.is(classOf('shop.unittests'), 'test');
  t.is(classOf('shop.contracts'), 'library');
  t.is(classOf('shop.apphost'), 'orchestrator');
  t.is(classOf('shop-mobile'), 'client');
  t.is(classOf('shop-web'), 'client');
  t.is(classOf('gen'), 'tool');
  t.is(classOf('money'), 'library');
  t.is(classOf('db-migrations'), 'job');
  for (const e of evidence.filter((x) => x.evidence_kind === 'unit-declared'))
    t.true(
      typeof e.attributes.class_reason === 'string' && e.attributes.class_reason !== '',
      e.subject_key,
    );
  t.regex(
    String(
      evidence.find(
        (x) => x.subject_key === 'service:shop.apphost' && x.evidence_kind === 'unit-declared',
      )!.attributes.class_reason,
    ),
    /Aspire\.Hosting/,
  );
  t.deepEqual(keys(graph), ['service:shop.api']);
});

test('a deployment declaration makes a non-deployable unit a deployable: a compose-built class library is a service', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'worker/Worker.csproj',
      text: CSPROJ('<ItemGroup><PackageReference Include="Npgsql" Version="8.0.3" /></ItemGroup>'),
    },
    { path: 'docker-compose.yml', text: 'services:\n  worker:\n    build: ./worker\n' },
  ]);
  t.deepEqual(keys(graph), ['service:worker']);
});

test('helm charts are no services; a chart dependency on an engine is a datastore', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'charts/shop/Chart.yaml',
      text: `apiVersion: v2
name: shop-chart
version: 1.0.0
dependencies:
  - name: postgresql
    version: 15.0.0
    repository: https://charts.bitnami.com/bitnami
`,
    },
  ]);
  t.false(graph.entities.some((e) => e.canonical_key === 'service:shop-chart'));
  t.true(graph.entities.some((e) => e.canonical_key === 'datastore:postgresql'));
});

const workload = (
  kind: string,
  name: string,
  image: string,
  extra = '',
) => `apiVersion: ${kind === 'Job' || kind === 'CronJob' ? 'batch/v1' : 'apps/v1'}
kind: ${kind}
metadata:
  name: ${name}
spec:
${extra}  template:
    spec:
      containers:
        - name: main
          image: ${image}
`;

test('one-shot Jobs are jobs, never datastores; a StatefulSet built FROM postgres is a datastore', async (t) => {
  const { graph } = await pipeline([
    { path: 'k8s/migrate.yaml', text: workload('Job', 'db-migrate', 'postgres:16') },
    { path: 'k8s/seed.yaml', text: workload('Job', 'seed', 'ghcr.io/acme/seed:1') },
    {
      path: 'k8s/orders-db.yaml',
      text: workload(
        'StatefulSet',
        'orders-db',
        'ghcr.io/acme/orders-db:1',
        '  serviceName: orders-db\n',
      ),
    },
    {
      path: 'orders-db/Dockerfile',
      text: 'FROM postgres:16\nCOPY init.sql /docker-entrypoint-initdb.d/\n',
    },
    { path: 'k8s/api.yaml', text: workload('Deployment', 'api', 'ghcr.io/acme/api:1') },
  ]);
  t.deepEqual(keys(graph), ['datastore:orders-db', 'job:db-migrate', 'job:seed', 'service:api']);
  t.is(
    graph.entities.find((e) => e.canonical_key === 'datastore:orders-db')?.attributes.kind,
    'StatefulSet',
  );
});

test('a compose service built from a job unit is a job', async (t) => {
  const { graph } = await pipeline([
    { path: 'seed-data/requirements.txt', text: 'requests\n' },
    { path: 'seed-data/Dockerfile', text: 'FROM python:3.12\nCOPY . .\n' },
    {
      path: 'docker-compose.yml',
      text: 'services:\n  seed:\n    build: ./seed-data\n    restart: "no"\n  db:\n    image: postgres:16\n',
    },
  ]);
  t.deepEqual(keys(graph), ['datastore:db', 'job:seed']);
});

test('a Dockerfile without a manifest is the identity of its folder; a compose one-shot seeding service is a job', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'docker-compose.yml',
      text: `services:
  seed:
    build: ./seed-data
    restart: "no"
  e2e-runner:
    build: ./checks
    restart: "no"
  db:
    image: postgres:16
`,
    },
    { path: 'seed-data/Dockerfile', text: 'FROM python:3.12\nCMD ["python", "make-data.py"]\n' },
    { path: 'checks/Dockerfile', text: 'FROM alpine:3.20\nCMD ["sh", "run.sh"]\n' },
  ]);
  // `seed` and its Dockerfile's service are one job; `restart: "no"` alone (e2e-runner) is no job.
  t.deepEqual(keys(graph), ['datastore:db', 'job:seed', 'service:e2e-runner']);
  t.deepEqual(graph.entities.find((e) => e.canonical_key === 'job:seed')!.attributes.aliases, [
    'service:seed',
    'service:seed-data',
  ]);
  t.deepEqual(
    graph.entities.find((e) => e.canonical_key === 'service:e2e-runner')!.attributes.aliases,
    ['service:checks'],
  );
});

test('compose projects in different folders are different deployments: their services of one build merge', async (t) => {
  const files = (second: string) => [
    { path: 'vote/requirements.txt', text: 'flask\n' },
    { path: 'vote/Dockerfile', text: 'FROM python:3.12\nCOPY . .\n' },
    { path: 'docker-compose.yml', text: 'services:\n  votes:\n    build: ./vote\n' },
    { path: second, text: 'services:\n  vote:\n    build: ../vote/\n' },
  ];
  const { graph } = await pipeline(files('result/docker-compose.yml'));
  t.deepEqual(keys(graph), ['service:vote']);
  t.deepEqual(graph.entities[0]!.attributes.aliases, ['service:votes']);
  t.is(graph.conflicts, undefined);
  // A test stack (`docker-compose.test.yml`) is no deployment (docs/decisions.md, session 14):
  // still one entity, named by the deployment, the test stack's name an alias of it.
  const tested = (await pipeline(files('result/docker-compose.test.yml'))).graph;
  t.deepEqual(keys(tested), ['service:votes']);
  t.deepEqual(tested.entities[0]!.attributes.aliases, ['service:vote']);
  t.is(tested.conflicts, undefined);
});

test('a Dockerfile no deployment runs, with no code unit and no fixed EXPOSE, is an image recipe, not a service', async (t) => {
  const { graph } = await pipeline([
    { path: 'tools/graphs/Dockerfile', text: 'FROM python:3.12-alpine\nCMD ["/bin/sh", "-c"]\n' },
    {
      path: 'build/Dockerfile',
      text: 'FROM eclipse-temurin:17\nARG EXPOSED_PORT\nEXPOSE ${EXPOSED_PORT}\nCOPY app.jar .\n',
    },
    { path: 'gateway/Dockerfile', text: 'FROM nginx:1.27\nEXPOSE 8080\n' },
    { path: 'checks/Dockerfile', text: 'FROM alpine:3.20\nCMD ["sh", "run.sh"]\n' },
    { path: 'docker-compose.yml', text: 'services:\n  smoke:\n    build: ./checks\n' },
  ]);
  // gateway exposes a fixed port (a server); checks is run by compose; the others are recipes.
  t.deepEqual(keys(graph), ['service:gateway', 'service:smoke']);
});

test('an image published from a unit joins the compose service running it by the repository last segment', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'shop-api/pom.xml',
      text: '<project><artifactId>shop-api</artifactId><packaging>jar</packaging></project>',
    },
    { path: 'docker-compose.yml', text: 'services:\n  api:\n    image: acme/shop-api:1.2\n' },
  ]);
  t.deepEqual(keys(graph), ['service:api']);
  t.deepEqual(graph.entities.find((e) => e.canonical_key === 'service:api')!.attributes.aliases, [
    'service:shop-api',
  ]);
});

test('an image of no known engine is a datastore when its own declaration says so: port names, server-only variables, engine ports', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'deploy/compose.yml',
      text: `services:
  catalogue-db:
    image: acme/catalogue-db:0.3
    environment:
      - MYSQL_ROOT_PASSWORD=\${ROOT_PW}
      - MYSQL_DATABASE=socks
  sessions:
    image: acme/sessions:1
    expose: ["6379"]
  api:
    image: acme/api:1
    environment:
      - POSTGRES_PASSWORD=\${PW}
    ports: ["8080:8080"]
  confused:
    image: acme/confused:1
    expose: ["6379", "5432"]
`,
    },
    {
      path: 'deploy/k8s/user-db.yaml',
      text: `apiVersion: apps/v1
kind: Deployment
metadata: { name: user-db }
spec:
  template:
    metadata: { labels: { name: user-db } }
    spec:
      containers:
        - name: user-db
          image: acme/user-db:0.4
          ports: [{ name: mongo, containerPort: 27017 }]
`,
    },
  ]);
  // A client's POSTGRES_PASSWORD says nothing; clues that disagree (redis and postgres) neither.
  t.deepEqual(keys(graph), [
    'datastore:catalogue-db',
    'datastore:sessions',
    'datastore:user-db',
    'service:api',
    'service:confused',
  ]);
  const engine = (k: string) => graph.entities.find((e) => e.canonical_key === k)!.attributes;
  t.is(engine('datastore:catalogue-db').engine, 'mysql');
  t.is(engine('datastore:user-db').engine, 'mongodb');
  t.is(engine('datastore:user-db').engine_clue, 'port named mongo');
  t.is(engine('datastore:sessions').engine, 'redis');
});

test('DynamoDB Local is a datastore', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'docker-compose.yml',
      text: `services:
  cart:
    image: acme/cart:1
    environment:
      - CART_DYNAMODB_ENDPOINT=http://carts-db:8000
  carts-db:
    image: amazon/dynamodb-local:1.20.0
`,
    },
  ]);
  t.deepEqual(keys(graph), ['datastore:carts-db', 'service:cart']);
  t.true(
    graph.relationships.some(
      (r) => r.source_key === 'service:cart' && r.target_key === 'datastore:carts-db',
    ),
  );
});

test('a script package (no server framework, no datastore client, no listening code, no Dockerfile) is a tool; one that listens is a service', async (t) => {
  const pkg = (name: string, deps: Record<string, string>) =>
    JSON.stringify({ name, scripts: { start: 'node dist/main.js' }, dependencies: deps });
  const { graph, evidence } = await pipeline([
    { path: 'oss/attribution/package.json', text: pkg('attribution', { axios: '^1' }) },
    {
      path: 'oss/attribution/src/main.ts',
      text: "import axios from 'axios';\nawait axios.get(url);\n",
    },
    { path: 'api/package.json', text: pkg('api', { dotenv: '^16' }) },
    {
      path: 'api/src/main.ts',
      text: "import http from 'node:http';\nhttp.createServer(handler).listen(8080);\n",
    },
    { path: 'consumer/package.json', text: pkg('consumer', { kafkajs: '^2' }) },
    { path: 'consumer/src/main.ts', text: 'await consumer.run({ eachMessage });\n' },
    // Nothing to judge by (no dependencies): the default, a service.
    { path: 'bare/package.json', text: JSON.stringify({ name: 'bare' }) },
    { path: 'bare/index.js', text: 'console.log(process.env.API_URL);\n' },
  ]);
  t.deepEqual(keys(graph), ['service:api', 'service:bare', 'service:consumer']);
  const unit = evidence.find(
    (e) => e.evidence_kind === 'unit-declared' && e.subject_key === 'service:attribution',
  )!;
  t.is(unit.attributes.unit_class, 'tool');
});

test('terraform: the `this` resource of a reusable module, named by a variable, is a template and no entity', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'terraform/lib/service/main.tf',
      text: `variable "service_name" {}
resource "aws_ecs_service" "this" {
  name          = var.service_name
  desired_count = 1
}
`,
    },
    {
      path: 'terraform/main.tf',
      text: `resource "aws_ecs_service" "ui" {
  name = "ui"
}
module "orders" {
  source       = "./lib/service"
  service_name = "orders"
}
`,
    },
  ]);
  t.deepEqual(keys(graph), ['service:ui']);
});
