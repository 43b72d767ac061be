/**
 * Smaller idioms of systems the analyzers had not seen (issue 23, session 11): each capability
 * with a small system written for this test, a case that must be found and one that must not.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { classifyPath } from '../domain/audits/classify';
import { assessFiles, control } from './helpers/assess-files';
import { analyzeFiles, connections, entityKeys } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const nodeUnit = (name: string, code: string): Record<string, string> => ({
  [`${name}/package.json`]: JSON.stringify({
    name,
    scripts: { start: 'node main.js' },
    dependencies: { '@nestjs/microservices': '^10.0.0' },
  }),
  [`${name}/main.js`]: code,
  [`${name}/Dockerfile`]: 'FROM node:20\nCOPY . .\nCMD ["node", "main.js"]\n',
});

const SHARED_ENV_COMPOSE = `services:
  gateway:
    build: ./gateway
    env_file: .env
  orders:
    build: ./orders
    env_file: .env
  billing:
    build: ./billing
    env_file: .env
`;

const GATEWAY = `const { Transport, ClientProxyFactory } = require('@nestjs/microservices');
module.exports = ClientProxyFactory.create({
  transport: Transport.TCP,
  options: { host: process.env.ORDERS_SERVICE_HOST, port: process.env.ORDERS_SERVICE_PORT },
});
const mail = process.env.MAILER_DSN;
`;

test('an absent env_file: the committed .env.example documents the hosts, weaker, only for what the code reads', async (t) => {
  t.is(classifyPath('.env.example'), 'cloud');
  t.is(classifyPath('deploy/app.env.sample'), 'cloud');
  const input = files({
    'docker-compose.yml': SHARED_ENV_COMPOSE,
    '.env.example': [
      'ORDERS_SERVICE_HOST=orders',
      'ORDERS_SERVICE_PORT=8001',
      'BILLING_SERVICE_HOST=billing',
      'MAILER_DSN=smtps://user:pw@mail.example.org',
      '',
    ].join('\n'),
    ...nodeUnit('gateway', GATEWAY),
    ...nodeUnit('orders', 'require("http").createServer().listen(8001);\n'),
    ...nodeUnit('billing', 'require("http").createServer().listen(8002);\n'),
  });
  const { graph, evidence } = await analyzeFiles(input);
  // The gateway reads ORDERS_SERVICE_HOST; nobody reads BILLING_SERVICE_HOST; the DSN's host is
  // an example, not one of the project's services.
  t.deepEqual(connections(graph), ['service:gateway -> service:orders']);
  const edge = graph.relationships.find((r) => r.target_key === 'service:orders')!;
  t.true(Number(edge.confidence) < 0.6, edge.confidence);
  const record = evidence.find(
    (e) => e.evidence_kind === 'env-reference' && e.subject_key === 'service:gateway',
  )!;
  t.is(record.attributes.documented_by, '.env.example');
  t.is(record.attributes.env_file, '.env');
  t.is(record.location.path, 'docker-compose.yml');

  // The user's .env, when committed, is what is in effect: the template is not read.
  const withEnv = await analyzeFiles([
    ...input,
    { path: '.env', text: 'ORDERS_SERVICE_HOST=billing\n' },
  ]);
  t.deepEqual(connections(withEnv.graph), ['service:gateway -> service:billing']);
  t.false(withEnv.evidence.some((e) => e.attributes.documented_by !== undefined));
  t.false(entityKeys(withEnv.graph).some((k) => k.includes('example')));
});

test('npm packages that run nothing are no services: a shared config package, a task-running root, a private library rebuilt by tsc --watch', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'package.json': JSON.stringify({
        name: 'acme-platform',
        scripts: { lint: 'npm --prefix api run lint && npm --prefix worker run lint' },
      }),
      'packages/tsconfig/package.json': JSON.stringify({
        name: '@acme/tsconfig',
        private: true,
        publishConfig: { access: 'public' },
      }),
      'packages/tsconfig/base.json': '{ "compilerOptions": {} }',
      'packages/common/package.json': JSON.stringify({
        name: '@acme/common',
        private: true,
        main: './dist/index.js',
        types: './dist/index.d.ts',
        exports: { '.': './dist/index.js' },
        scripts: { build: 'tsc', dev: 'tsc --watch' },
        dependencies: { zod: '^3.0.0', pg: '^8.0.0' },
      }),
      'packages/common/src/index.ts': 'export const x = 1;\n',
      // Private, with types, but started: a service.
      'api/package.json': JSON.stringify({
        name: 'api',
        private: true,
        types: './dist/index.d.ts',
        scripts: { start: 'node dist/index.js', lint: 'eslint .' },
        dependencies: { express: '^4.0.0' },
      }),
      'api/src/index.ts': 'import express from "express";\nexpress().listen(3000);\n',
      // No dependency and no start script, but source of its own: the default stands.
      'worker/package.json': JSON.stringify({ name: 'worker', scripts: { lint: 'eslint .' } }),
      'worker/index.js': 'setInterval(() => {}, 1000);\n',
    }),
  );
  const services = entityKeys(graph).filter((k) => k.startsWith('service:'));
  t.deepEqual(services, ['service:api', 'service:worker']);
  const reason = (name: string) =>
    evidence.find((e) => e.evidence_kind === 'unit-declared' && e.attributes.name === name)
      ?.attributes.class_reason;
  t.regex(String(reason('tsconfig')), /nothing to run/);
  t.regex(String(reason('acme-platform')), /nothing to run/);
  t.regex(String(reason('common')), /built to be imported/);
});

test('Maven layout: Dockerfiles under <project>/src/main/docker build that project, a docs site is no service', async (t) => {
  const pom = (artifact: string, deps = '') =>
    `<project><modelVersion>4.0.0</modelVersion><groupId>acme</groupId><artifactId>${artifact}</artifactId><version>1</version><dependencies>${deps}</dependencies></project>`;
  const { graph, evidence } = await analyzeFiles(
    files({
      'heroes/pom.xml': pom('heroes'),
      'heroes/src/main/java/Heroes.java':
        'class Heroes { public static void main(String[] a) {} }\n',
      'heroes/src/main/docker/Dockerfile.jvm': 'FROM eclipse-temurin:21\nEXPOSE 8080\n',
      'heroes/src/main/docker/Dockerfile.native': 'FROM ubi-minimal:9\nEXPOSE 8080\n',
      'villains/pom.xml': pom('villains'),
      'villains/src/main/java/Villains.java': 'class Villains {}\n',
      'villains/src/main/docker/Dockerfile.jvm': 'FROM eclipse-temurin:21\nEXPOSE 8084\n',
      'docs/pom.xml': pom('docs'),
      'docs/src/main/resources/content/index.md': '# Docs\n',
    }),
  );
  const services = entityKeys(graph).filter((k) => k.startsWith('service:'));
  t.deepEqual(services, ['service:heroes', 'service:villains']);
  const docs = evidence.find(
    (e) => e.evidence_kind === 'unit-declared' && e.attributes.name === 'docs',
  );
  t.is(docs?.attributes.unit_class, 'tool');
  t.regex(String(docs?.attributes.class_reason), /documentation site/);
});

test("Ingress: a default backend no manifest declares is the controller's own; declared backends are routes", async (t) => {
  const ingress = (backend: string) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: edge
spec:
  defaultBackend:
    service:
      name: ${backend}
      port:
        number: 80
  rules:
    - host: shop.example.org
      http:
        paths:
          - path: /api
            pathType: Prefix
            backend:
              service:
                name: api
                port:
                  number: 8080
`;
  const api = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector: { matchLabels: { app: api } }
  template:
    metadata: { labels: { app: api } }
    spec:
      containers:
        - name: api
          image: acme/api:1
---
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: { app: api }
  ports: [{ port: 8080 }]
`;
  const routes = (g: Awaited<ReturnType<typeof analyzeFiles>>['graph']) =>
    g.relationships.filter((r) => r.kind === 'routes_to').map((r) => r.target_key);
  const undeclared = await analyzeFiles(
    files({ 'k8s/ingress.yaml': ingress('default-http-backend'), 'k8s/api.yaml': api }),
  );
  t.deepEqual(routes(undeclared.graph), ['service:api']);
  t.false(entityKeys(undeclared.graph).includes('service:default-http-backend'));
  const record = undeclared.evidence.find(
    (e) => e.evidence_kind === 'ingress-route' && e.attributes.service === 'default-http-backend',
  );
  t.is(record?.attributes.undeclared_default_backend, true);
  // A default backend the manifests declare is a route like any other.
  const declared = await analyzeFiles(
    files({ 'k8s/ingress.yaml': ingress('api'), 'k8s/api.yaml': api }),
  );
  t.deepEqual(routes(declared.graph), ['service:api']);
  t.true(
    declared.evidence.some(
      (e) =>
        e.evidence_kind === 'ingress-route' &&
        e.relationship_kind === 'routes_to' &&
        e.location.start_line <= 8,
    ),
  );
});

test('images: cluster and local-emulator images of known stores are datastores', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  cache-node-0:
    image: docker.io/bitnami/redis-cluster:8.0
  carts-store:
    image: public.ecr.aws/aws-dynamodb-local/aws-dynamodb-local:1.25.1
  web:
    image: acme/web:1
`,
    }),
  );
  const keys = entityKeys(graph);
  t.true(keys.includes('datastore:cache-node-0'), keys.join(', '));
  t.true(keys.includes('datastore:carts-store'), keys.join(', '));
  t.true(keys.includes('service:web'));
});

test('a managed store reached by its SDK: the one table of that engine the infrastructure declares', async (t) => {
  const table = (label: string, name: string) => `resource "aws_dynamodb_table" "${label}" {
  name         = "${name}"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
}
`;
  const api = {
    'api/package.json': JSON.stringify({
      name: 'api',
      scripts: { start: 'node index.js' },
      dependencies: { '@aws-sdk/client-dynamodb': '^3.0.0', express: '^4.0.0' },
    }),
    'api/index.js':
      'const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");\nconst db = new DynamoDBClient({});\nrequire("express")().listen(3000);\n',
    'api/Dockerfile': 'FROM node:20\nCOPY . .\nCMD ["node", "index.js"]\n',
  };
  const one = await analyzeFiles(
    files({ 'infra/main.tf': table('orders', 'orders-table'), ...api }),
  );
  t.deepEqual(connections(one.graph), ['service:api -> datastore:orders-table']);
  const edge = one.graph.relationships.find((r) => r.kind === 'connects_to')!;
  t.true(Number(edge.confidence) < 0.5, edge.confidence);
  // Two tables: which one the code names is unknown, so nothing is drawn.
  const two = await analyzeFiles(
    files({
      'infra/main.tf': table('orders', 'orders-table') + table('carts', 'carts-table'),
      ...api,
    }),
  );
  t.deepEqual(connections(two.graph), []);
});

test('local Terraform modules: a parametric resource is a template, each call an instance; an ECS service and the task definition it runs are one unit; a deployment-notification topic is no queue', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'infra/main.tf': `module "orders_table" {
  source = "./modules/table"
  name   = "orders-\${var.env}"
}
module "task_api" {
  source = "./modules/task"
  name   = "api"
}
module "service_api" {
  source              = "./modules/service"
  name                = "api"
  arn_task_definition = module.task_api.arn
}
module "alerts" {
  source = "./modules/topic"
  name   = "alerts"
}
module "deploy_api" {
  source        = "./modules/deploy"
  sns_topic_arn = module.alerts.arn
}
`,
      'infra/modules/table/main.tf': `resource "aws_dynamodb_table" "table" {
  name     = var.name
  hash_key = "id"
}
`,
      'infra/modules/task/main.tf': `resource "aws_ecs_task_definition" "task" {
  family                = "task-\${var.name}"
  container_definitions = "[]"
}
`,
      'infra/modules/service/main.tf': `resource "aws_ecs_service" "service" {
  name            = "svc-\${var.name}"
  task_definition = var.arn_task_definition
}
`,
      'infra/modules/topic/main.tf': `resource "aws_sns_topic" "topic" {
  name = var.name
}
`,
      'infra/modules/deploy/main.tf': `resource "aws_codedeploy_deployment_group" "group" {
  app_name              = "app"
  deployment_group_name = "group"
  service_role_arn      = "arn"
  trigger_configuration {
    trigger_events     = ["DeploymentFailure"]
    trigger_name       = "failure"
    trigger_target_arn = var.sns_topic_arn
  }
}
`,
    }),
  );
  const keys = entityKeys(graph).filter((k) => /^(service|datastore|queue):/.test(k));
  t.deepEqual(keys, ['datastore:orders-table', 'service:service-api']);
  const task = evidence.find(
    (e) => e.attributes.resource_type === 'aws_ecs_task_definition' && e.attributes.module_call,
  );
  t.is(task?.subject_key, 'service:service-api');
  t.is(task?.location.path, 'infra/main.tf');
  t.is(task?.location.start_line, 5);
  // The instance carries the template's settings; the template is judged through it.
  const table = evidence.find(
    (e) => e.evidence_kind === 'datastore-declared' && e.subject_key === 'datastore:orders-table',
  );
  t.is(table?.attributes.name_source, 'module-instance');
  t.truthy(table?.attributes.security);
  const template = evidence.find(
    (e) => e.evidence_kind === 'datastore-declared' && e.subject_key.startsWith('resource:'),
  );
  t.is(template?.attributes.instantiated, true);
  const topic = evidence.find((e) => e.evidence_kind === 'notification-topic');
  t.deepEqual(topic?.attributes.used_by, ['module.deploy_api']);
});

test('a code generator folder without sources and a SQL database project are no services', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'src/recommendation/requirements.txt': 'grpcio==1.60.0\nflask==3.0.0\n',
      'src/recommendation/server.py': 'import grpc\nserver = grpc.server(None)\nserver.start()\n',
      'src/recommendation/genproto/requirements.txt': 'grpcio-tools==1.60.0\nprotobuf==4.25.0\n',
      'src/Db/Shop.Database.Build/Shop.Database.Build.csproj':
        '<Project Sdk="MSBuild.Sdk.SqlProj/2.6.1"><PropertyGroup><SqlServerVersion>Sql130</SqlServerVersion></PropertyGroup></Project>',
    }),
  );
  const services = entityKeys(graph).filter((k) => k.startsWith('service:'));
  t.deepEqual(services, ['service:recommendation']);
  const cls = (name: string) =>
    evidence.find((e) => e.evidence_kind === 'unit-declared' && e.attributes.name === name)
      ?.attributes;
  t.like(cls('genproto'), { unit_class: 'tool' });
  t.like(cls('shop.database.build'), { unit_class: 'library' });
});

test('a local wrapper module: storage encryption is judged once per call, at the call', async (t) => {
  const a = control(
    await assessFiles({
      'infra/main.tf': `module "orders_queue" {
  source = "./modules/queue"
  name   = "orders"
}
`,
      'infra/modules/queue/main.tf': `resource "aws_sqs_queue" "queue" {
  name                    = var.name
  sqs_managed_sse_enabled = false
}
`,
    }),
    'storage-encrypted-at-rest',
  );
  t.is(a.status, 'fail');
  t.is(a.findings.length, 1);
  t.is(a.findings[0]?.location?.path, 'infra/main.tf');
  t.regex(a.findings[0]?.title ?? '', /queue:orders-queue is not encrypted at rest/);
});

test('a nameless package.json that only holds dependencies (no script, no source) is no service', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'package.json': JSON.stringify({ dependencies: { '@ngxs/store': '^3.7.3' } }),
      'yarn.lock': '# yarn lockfile v1\n',
      'services/orders/Orders.csproj':
        '<Project Sdk="Microsoft.NET.Sdk.Web"><PropertyGroup><TargetFramework>net8.0</TargetFramework></PropertyGroup></Project>',
      'services/orders/Program.cs': 'var app = WebApplication.Create(args); app.Run();\n',
      // Named and started: still a service.
      'web/package.json': JSON.stringify({
        name: 'web',
        scripts: { start: 'node server.js' },
        dependencies: { express: '^4.0.0' },
      }),
      'web/server.js': 'require("express")().listen(3000);\n',
    }),
  );
  const services = entityKeys(graph).filter((k) => k.startsWith('service:'));
  t.deepEqual(services, ['service:orders', 'service:web']);
  const root = evidence.find(
    (e) => e.evidence_kind === 'unit-declared' && e.attributes.dir === '.',
  );
  t.regex(String(root?.attributes.class_reason), /only holds dependencies/);
});
