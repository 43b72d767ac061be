/**
 * The code analyzer (analysis/code): units, manifests, client libraries, cross-unit imports,
 * connections and env reads over inline fixture repositories. Pure functions: no database.
 */
import crypto from 'node:crypto';
import test from 'ava';
import type { Evidence, SourceFile } from '../analysis/evidence';
import { analyzeCode } from '../analysis/code';
import { lex } from '../analysis/code/common';
import { parseUrl } from '../analysis/shared/urls';
import { extractGoImports, extractJsImports, extractPythonImports } from '../analysis/code/imports';
import { parsePep508 } from '../analysis/code/manifest-python';
import { readToml } from '../analysis/code/toml';
import { readXml } from '../analysis/code/xml';

const SECRET = 'hunter2-SECRET';

const lines = (...l: string[]): string => l.join('\n');

const FIXTURE: Record<string, string> = {
  // --- npm monorepo: the root is a workspace root, not a unit -----------------------------
  'package.json': JSON.stringify(
    {
      name: 'acme-monorepo',
      private: true,
      workspaces: ['packages/*'],
      devDependencies: { typescript: '^5.4.0' },
    },
    null,
    2,
  ),
  'package-lock.json': '{}',
  'scripts/deploy.ts': lines(
    "const target = 'https://deploy.acme-tools.io/hook';",
    'export default target;',
  ),
  'packages/api/package.json': lines(
    '{',
    '  "name": "@acme/api",',
    '  "version": "1.0.0",',
    '  "dependencies": {',
    '    "@acme/shared": "*",',
    '    "express": "^4.18.2",',
    '    "ioredis": "^5.3.2",',
    '    "kafkajs": "^2.2.4",',
    '    "pg": "^8.11.3"',
    '  },',
    '  "devDependencies": {',
    '    "ava": "^6.1.0"',
    '  }',
    '}',
  ),
  'packages/api/Dockerfile': lines(
    '# api image',
    'FROM node:20-alpine',
    'ENV DATABASE_URL=postgres://db:5432/shop',
    'CMD ["node", "dist/app.js"]',
  ),
  'packages/api/src/app.ts': lines(
    "import express from 'express';", // 1
    "import { formatMoney, type Money } from '@acme/shared';", // 2
    "import { helper } from '../../shared/src/util';", // 3
    "// import { fake } from '@acme/web';", // 4
    "/* import nope from '../../web/src'; */", // 5
    'const s = "import x from \'@acme/web\'";', // 6
    `const dbUrl = process.env.DATABASE_URL ?? 'postgres://app:${SECRET}@db:5432/shop';`, // 7
    "const kafka = new Kafka({ brokers: ['kafka:9092', 'kafka-2:9092'] });", // 8
    "export async function charge() { return fetch('https://api.stripe.com/v1/charges'); }", // 9
    "const docs = 'see https://www.w3.org/TR/xml';", // 10
    `// const legacy = 'mysql://root:${SECRET}@legacy-db:3306/old';`, // 11
    "const lazy = () => import('@acme/shared/extra');", // 12
    "const orders = 'http://orders:8080/api/orders';", // 13
    'export { express, formatMoney, helper, s, dbUrl, kafka, docs, lazy, orders };', // 14
    'export type { Money };', // 15
  ),
  'packages/shared/package.json': lines(
    '{',
    '  "name": "@acme/shared",',
    '  "version": "1.0.0"',
    '}',
  ),
  'packages/shared/src/index.ts': "export * from './util';",
  'packages/shared/src/util.ts': lines(
    'export const helper = 1;',
    'export const formatMoney = (n: number) => `$${n}`;',
  ),
  'packages/web/package.json': lines(
    '{',
    '  "name": "@acme/web",',
    '  "dependencies": { "@acme/shared": "workspace:*", "axios": "^1.6.0" }',
    '}',
  ),
  'packages/web/src/main.js': lines(
    "const shared = require('@acme/shared');", // 1
    "const cfg = require('./config.json');", // 2
    'const api = process.env["API_URL"];', // 3
    "axios.get('https://api.segment.io/v1/track');", // 4
    'module.exports = { shared, cfg, api };', // 5
  ),

  // --- Go services ------------------------------------------------------------------------
  'services/cart/go.mod': lines(
    'module github.com/acme/shop/cart', // 1
    '', // 2
    'go 1.22', // 3
    '', // 4
    'require (', // 5
    '\tgithub.com/acme/shop/common v0.0.0', // 6
    '\tgithub.com/jackc/pgx/v5 v5.5.5', // 7
    '\tgithub.com/redis/go-redis/v9 v9.5.1', // 8
    '\tgolang.org/x/sync v0.6.0 // indirect', // 9
    ')', // 10
    '', // 11
    'require github.com/google/uuid v1.6.0', // 12
    '', // 13
    'replace github.com/acme/shop/common => ../common', // 14
  ),
  'services/cart/go.sum': 'github.com/google/uuid v1.6.0 h1:abc=\n',
  'services/cart/Dockerfile': lines(
    'FROM golang:1.22 AS build',
    'COPY . .',
    'RUN go build -o /cart',
  ),
  'services/cart/main.go': lines(
    'package main', // 1
    '', // 2
    'import (', // 3
    '\t"fmt"', // 4
    '\t"net/http"', // 5
    '\t"os"', // 6
    '', // 7
    '\tclog "github.com/acme/shop/common/log"', // 8
    '\t"github.com/redis/go-redis/v9"', // 9
    ')', // 10
    '', // 11
    '// import "github.com/acme/shop/fake"', // 12
    '/* os.Getenv("FAKE_URL") */', // 13
    '', // 14
    'func main() {', // 15
    '\taddr := os.Getenv("REDIS_ADDR")', // 16
    `\tdsn := "postgres://cart:${SECRET}@cart-db:5432/carts?sslmode=disable"`, // 17
    `\tkv := "host=pg-kv port=6432 user=cart password=${SECRET} dbname=kvdb sslmode=disable"`, // 18
    '\tresp, _ := http.Get("https://api.github.com/repos/acme/shop")', // 19
    '\tfmt.Println(addr, dsn, kv, resp, redis.Nil, clog.X, os.Getenv("LOG_LEVEL"))', // 20
    '}', // 21
  ),
  'services/common/go.mod': lines('module github.com/acme/shop/common', '', 'go 1.22'),
  'services/common/log/log.go': lines('package log', '', 'const X = 1'),

  // --- Python service and library ---------------------------------------------------------
  'services/payments/pyproject.toml': lines(
    '[project]', // 1
    'name = "payments-svc"', // 2
    'version = "0.1.0"', // 3
    'dependencies = [', // 4
    '  "requests>=2.31",  # HTTP', // 5
    '  "sqlalchemy[postgresql]>=2.0",', // 6
    ']', // 7
    '', // 8
    '[project.optional-dependencies]', // 9
    'dev = ["pytest>=8"]', // 10
  ),
  'services/payments/requirements.txt': lines(
    '# runtime', // 1
    '-r requirements/base.txt', // 2
    'psycopg[binary]==3.1.18 ; python_version >= "3.10"', // 3
    'pika==1.3.2', // 4
    '--index-url https://user:' + SECRET + '@pypi.acme.io/simple', // 5
    'redis>=5  # cache', // 6
  ),
  'services/payments/requirements/base.txt': lines('boto3==1.34.0'),
  'services/payments/payments/__init__.py': '',
  'services/payments/payments/app.py': lines(
    'import os', // 1
    'import requests', // 2
    'from shared import money', // 3
    'from shared.money import fmt', // 4
    'import payments.models', // 5
    '', // 6
    '"""', // 7
    'import fake_module_in_docstring', // 8
    'from web import nothing', // 9
    '"""', // 10
    '# from shared import commented', // 11
    '', // 12
    'DATABASE_URL = os.environ["DATABASE_URL"]', // 13
    `BROKER = os.getenv("AMQP_URL", "amqp://pay:${SECRET}@rabbitmq:5672/")`, // 14
    's3 = boto3.client("s3")', // 15
    '', // 16
    'def charge():', // 17
    '    return requests.get("https://api.stripe.com/v1/charges")', // 18
  ),
  'services/payments/.env.example': lines(
    `DATABASE_URL=postgres://pay:${SECRET}@payments-db:5432/payments`, // 1
    'REDIS_HOST=redis-cache', // 2
    '# OLD_URL=http://old-host.acme.io', // 3
    'PAYMENT_SERVICE=sk_live_51HxYzAbCdEf0123456789', // 4
  ),
  'services/payments/config/settings.yaml': lines(
    'queue:', // 1
    '  url: amqp://rabbitmq:5672  # main broker', // 2
    '  kafka: ${KAFKA_BOOTSTRAP_SERVERS:kafka:9092}', // 3
  ),
  'services/payments/tests/test_app.py': lines('API = "https://api.stripe.com/v1/test"'),
  'libs/shared/pyproject.toml': lines('[project]', 'name = "shared-py"', 'dependencies = []'),
  'libs/shared/shared/__init__.py': '',
  'libs/shared/shared/money.py': 'def fmt(x):\n    return x\n',

  // --- JVM, Rust, .NET ----------------------------------------------------------------------
  'services/orders/pom.xml': lines(
    '<?xml version="1.0" encoding="UTF-8"?>', // 1
    '<project xmlns="http://maven.apache.org/POM/4.0.0">', // 2
    '  <parent>', // 3
    '    <groupId>org.springframework.boot</groupId>', // 4
    '    <artifactId>spring-boot-starter-parent</artifactId>', // 5
    '  </parent>', // 6
    '  <artifactId>orders-service</artifactId>', // 7
    '  <properties>', // 8
    '    <pg.version>42.7.1</pg.version>', // 9
    '  </properties>', // 10
    '  <dependencies>', // 11
    '    <dependency>', // 12
    '      <groupId>org.postgresql</groupId>', // 13
    '      <artifactId>postgresql</artifactId>', // 14
    '      <version>${pg.version}</version>', // 15
    '    </dependency>', // 16
    '    <!-- <dependency><groupId>x</groupId><artifactId>commented</artifactId></dependency> -->', // 17
    '    <dependency>', // 18
    '      <groupId>org.springframework.kafka</groupId>', // 19
    '      <artifactId>spring-kafka</artifactId>', // 20
    '    </dependency>', // 21
    '    <dependency>', // 22
    '      <groupId>org.junit.jupiter</groupId>', // 23
    '      <artifactId>junit-jupiter</artifactId>', // 24
    '      <scope>test</scope>', // 25
    '    </dependency>', // 26
    '  </dependencies>', // 27
    '</project>', // 28
  ),
  'services/orders/src/main/resources/application.properties': lines(
    '# datasource', // 1
    `spring.datasource.url=jdbc:postgresql://orders-db:5432/orders?user=x&password=${SECRET}`, // 2
    'spring.kafka.bootstrap-servers=kafka:9092', // 3
  ),
  'services/orders/src/main/java/Orders.java': lines(
    'class Orders {', // 1
    '  String broker = System.getenv("KAFKA_BROKERS");', // 2
    '  @Value("${INVENTORY_SERVICE_URL:http://inventory:8080}") String inv;', // 3
    '}', // 4
  ),
  'services/ledger/Cargo.toml': lines(
    '[package]', // 1
    'name = "ledger"', // 2
    'version = "0.1.0"', // 3
    '', // 4
    '[dependencies]', // 5
    'tokio = { version = "1", features = ["full"] }', // 6
    'redis = "0.24"', // 7
    'sqlx = { version = "0.7", features = [', // 8
    '  "postgres",', // 9
    '  "runtime-tokio",', // 10
    '] }', // 11
    '', // 12
    '[dev-dependencies]', // 13
    'mockall = "0.12"', // 14
  ),
  'services/ledger/src/main.rs': lines(
    "fn first<'a>(x: &'a str) -> &'a str { x }", // 1
    'fn main() {', // 2
    '    let url = std::env::var("LEDGER_DB_URL").unwrap();', // 3
    '}', // 4
  ),
  'services/billing/Billing.Api.csproj': lines(
    '<Project Sdk="Microsoft.NET.Sdk.Web">', // 1
    '  <ItemGroup>', // 2
    '    <PackageReference Include="Npgsql" Version="8.0.2" />', // 3
    '    <PackageReference Include="StackExchange.Redis">', // 4
    '      <Version>2.7.10</Version>', // 5
    '    </PackageReference>', // 6
    '  </ItemGroup>', // 7
    '</Project>', // 8
  ),

  // --- Broken and ignored -----------------------------------------------------------------
  'tools/broken/package.json': lines(
    '{',
    '  "name": "broken",',
    '  "dependencies": {',
    '    "left-pad": "1.0.0",',
  ),
  'packages/api/node_modules/pg/package.json': '{"name":"pg","dependencies":{"x":"1"}}',
};

function fixtureFiles(): SourceFile[] {
  return Object.entries(FIXTURE).map(([path, text]) => ({ path, text }));
}

function sha(text: string, start: number, end: number): string {
  return crypto
    .createHash('sha256')
    .update(
      text
        .split('\n')
        .slice(start - 1, end)
        .join('\n'),
    )
    .digest('hex');
}

let cached: Promise<Awaited<ReturnType<typeof analyzeCode>>> | null = null;
const output = (): ReturnType<typeof analyzeCode> => (cached ??= analyzeCode(fixtureFiles()));

const byKind = (ev: Evidence[], kind: string): Evidence[] =>
  ev.filter((e) => e.evidence_kind === kind);
const at = (e: Evidence): string =>
  `${e.location.path}:${e.location.start_line}-${e.location.end_line}`;

// ---------------------------------------------------------------------------------------------
// Units

test('units: keys, directories, aliases, lockfiles; workspace root and node_modules are not units', async (t) => {
  const { evidence } = await output();
  const units = byKind(evidence, 'unit-declared');
  const byKey = new Map(units.map((u) => [u.subject_key, u]));
  t.deepEqual([...byKey.keys()].sort(), [
    'service:api',
    'service:billing.api',
    'service:broken',
    'service:cart',
    'service:common',
    'service:ledger',
    'service:orders-service',
    'service:payments-svc',
    'service:shared',
    'service:shared-py',
    'service:web',
  ]);
  const api = byKey.get('service:api') as Evidence;
  t.is(at(api), 'packages/api/package.json:2-2');
  t.is(api.content_sha256, sha(FIXTURE['packages/api/package.json'] as string, 2, 2));
  t.like(api.attributes, {
    dir: 'packages/api',
    ecosystems: ['npm'],
    has_dockerfile: true,
    dockerfiles: ['packages/api/Dockerfile'],
    aliases: ['api', 'acme-api'],
    npm_name: '@acme/api',
    lockfiles: ['package-lock.json'],
    lockfile_present: true,
    workspace_root: '.',
  });
  const cart = byKey.get('service:cart') as Evidence;
  t.is(at(cart), 'services/cart/go.mod:1-1');
  t.like(cart.attributes, {
    go_module: 'github.com/acme/shop/cart',
    lockfiles: ['services/cart/go.sum'],
    has_dockerfile: true,
  });
  const payments = byKey.get('service:payments-svc') as Evidence;
  t.deepEqual(payments.attributes.aliases, ['payments-svc', 'payments']);
  t.deepEqual(payments.attributes.manifests, [
    'services/payments/pyproject.toml',
    'services/payments/requirements.txt',
    'services/payments/requirements/base.txt',
  ]);
  t.is(payments.attributes.lockfile_present, false);
  t.deepEqual((byKey.get('service:billing.api') as Evidence).attributes.aliases, [
    'billing.api',
    'billing',
  ]);
  t.deepEqual((byKey.get('service:orders-service') as Evidence).attributes.aliases, [
    'orders-service',
    'orders',
  ]);
  t.is(at(byKey.get('service:orders-service') as Evidence), 'services/orders/pom.xml:7-7');
  t.deepEqual((byKey.get('service:shared-py') as Evidence).attributes.aliases, [
    'shared-py',
    'shared',
  ]);
  // Nothing for files outside every unit, nor from node_modules.
  t.false(
    evidence.some(
      (e) => e.location.path.startsWith('scripts/') || e.location.path.includes('node_modules'),
    ),
  );
});

test('workspace roots (pnpm, Cargo, Maven) are not units; name collisions use the directory path', async (t) => {
  const files: Record<string, string> = {
    'pnpm-workspace.yaml': "packages:\n  - 'apps/*'\n",
    'package.json': '{"name": "root", "devDependencies": {"turbo": "^1.0.0"}}',
    'pnpm-lock.yaml': 'lockfileVersion: 9\n',
    'main.py': 'import os\nURL = os.environ["ROOT_URL"]\n',
    'apps/api/package.json': '{"name": "api"}',
    'apps/api/index.ts': "import { x } from '../../tools/api/helper';\n",
    'tools/api/Dockerfile': 'FROM alpine\n',
    'tools/api/Dockerfile.prod': 'FROM alpine:3.20\n',
    'tools/api/helper.ts': 'export const x = 1;\n',
    'tools/dockerfile.ts': 'export const notADockerfile = true;\n',
    'rust/Cargo.toml': '[workspace]\nmembers = ["crates/*"]\n',
    'rust/Cargo.lock': '# lock\n',
    'rust/crates/core/Cargo.toml': '[package]\nname = "core"\nversion = "0.1.0"\n',
    'java/pom.xml':
      '<project><artifactId>parent</artifactId><packaging>pom</packaging><modules><module>svc</module></modules></project>',
    'java/svc/pom.xml': '<project><artifactId>svc</artifactId></project>',
  };
  const out = await analyzeCode(Object.entries(files).map(([path, text]) => ({ path, text })));
  const units = byKind(out.evidence, 'unit-declared');
  t.deepEqual(units.map((u) => u.subject_key).sort(), [
    'service:apps-api',
    'service:core',
    'service:svc',
    'service:tools-api',
  ]);
  const apps = units.find((u) => u.subject_key === 'service:apps-api') as Evidence;
  t.like(apps.attributes, {
    aliases: ['apps-api', 'api'],
    lockfiles: ['pnpm-lock.yaml'],
    workspace_root: '.',
  });
  const tools = units.find((u) => u.subject_key === 'service:tools-api') as Evidence;
  t.like(tools.attributes, {
    dockerfiles: ['tools/api/Dockerfile', 'tools/api/Dockerfile.prod'],
    lockfile_present: null,
    ecosystems: [],
  });
  t.is(at(tools), 'tools/api/Dockerfile:1-1');
  t.like((units.find((u) => u.subject_key === 'service:core') as Evidence).attributes, {
    lockfiles: ['rust/Cargo.lock'],
    workspace_root: 'rust',
  });
  const imp = byKind(out.evidence, 'import');
  t.deepEqual(
    imp.map((e) => `${e.subject_key}->${e.object_key}`),
    ['service:apps-api->service:tools-api'],
  );
  // Files outside every unit (the workspace root's main.py) yield nothing.
  t.false(out.evidence.some((e) => e.location.path === 'main.py'));
});

test('a malformed package.json is a manifest_parse_error gap; its unit falls back to the directory name', async (t) => {
  const { evidence, gaps } = await output();
  const gap = gaps.find((g) => g.path === 'tools/broken/package.json');
  t.is(gap?.reason, 'manifest_parse_error');
  t.regex(gap?.message ?? '', /line \d+/);
  t.true(
    evidence.some((e) => e.subject_key === 'service:broken' && e.evidence_kind === 'unit-declared'),
  );
  t.false(evidence.some((e) => e.object_key === 'package:npm/left-pad'));
});

test('analyzeCode never throws on bad input', async (t) => {
  const out = await analyzeCode([
    { path: '../escape.ts', text: 'x' },
    { path: 'a/package.json', text: '{"name": 5, "dependencies": []}' },
    { path: 'b/pyproject.toml', text: '[project\nname = "x"\ndependencies = ["a", ' },
    { path: 'c/pom.xml', text: '<project><artifactId>c</artifactId><dependencies><dependency>' },
    { path: 'd/go.mod', text: 'module\nrequire (\n' },
    null as unknown as SourceFile,
    { path: 'e/x.ts', text: 5 as unknown as string },
  ]);
  t.true(out.gaps.some((g) => g.reason === 'invalid_file'));
  t.true(
    out.gaps.some((g) => g.path === 'b/pyproject.toml' && g.reason === 'manifest_parse_error'),
  );
  t.true(out.evidence.some((e) => e.subject_key === 'service:a'));
  t.true(out.evidence.some((e) => e.subject_key === 'service:c'));
  const notArray = await analyzeCode('nope' as unknown as SourceFile[]);
  t.deepEqual(notArray.evidence, []);
});

// ---------------------------------------------------------------------------------------------
// Manifests and client libraries

test('dependencies from every manifest kind, with versions, dev flags and exact lines', async (t) => {
  const { evidence } = await output();
  const deps = byKind(evidence, 'dependency-declared');
  const find = (subject: string, object: string): Evidence => {
    const e = deps.find((d) => d.subject_key === subject && d.object_key === object);
    if (!e) throw new Error(`missing ${subject} -> ${object}`);
    return e;
  };
  const pg = find('service:api', 'package:npm/pg');
  t.is(at(pg), 'packages/api/package.json:9-9');
  t.is(pg.relationship_kind, 'depends_on_package');
  t.like(pg.attributes, { version: '^8.11.3', dev: false, ecosystem: 'npm' });
  t.like(find('service:api', 'package:npm/ava').attributes, { dev: true });
  t.like(find('service:web', 'package:npm/@acme/shared').attributes, { workspace_protocol: true });

  const pgx = find('service:cart', 'package:go/github.com/jackc/pgx/v5');
  t.is(at(pgx), 'services/cart/go.mod:7-7');
  t.like(find('service:cart', 'package:go/golang.org/x/sync').attributes, { indirect: true });
  t.is(at(find('service:cart', 'package:go/github.com/google/uuid')), 'services/cart/go.mod:12-12');
  t.like(find('service:cart', 'package:go/github.com/acme/shop/common').attributes, {
    replaced_by: '../common',
    local_path: 'services/common',
  });

  const psycopg = find('service:payments-svc', 'package:pypi/psycopg');
  t.is(at(psycopg), 'services/payments/requirements.txt:3-3');
  t.like(psycopg.attributes, {
    version: '==3.1.18',
    extras: ['binary'],
    marker: 'python_version >= "3.10"',
  });
  t.like(find('service:payments-svc', 'package:pypi/boto3').attributes, {
    included_from: 'services/payments/requirements.txt',
  });
  t.is(
    at(find('service:payments-svc', 'package:pypi/requests')),
    'services/payments/pyproject.toml:5-5',
  );
  t.like(find('service:payments-svc', 'package:pypi/pytest').attributes, {
    dev: true,
    group: 'dev',
  });
  t.like(find('service:payments-svc', 'package:pypi/sqlalchemy').attributes, {
    extras: ['postgresql'],
  });

  const pgJava = find('service:orders-service', 'package:maven/org.postgresql:postgresql');
  t.is(at(pgJava), 'services/orders/pom.xml:12-16');
  t.is(pgJava.attributes.version, '42.7.1');
  t.like(
    find('service:orders-service', 'package:maven/org.junit.jupiter:junit-jupiter').attributes,
    { dev: true },
  );
  t.false(deps.some((d) => d.object_key === 'package:maven/x:commented'));

  t.is(at(find('service:ledger', 'package:cargo/sqlx')), 'services/ledger/Cargo.toml:8-11');
  t.like(find('service:ledger', 'package:cargo/mockall').attributes, { dev: true });
  t.like(find('service:ledger', 'package:cargo/tokio').attributes, {
    version: '1',
    features: ['full'],
  });

  const redisNet = find('service:billing.api', 'package:nuget/stackexchange.redis');
  t.is(at(redisNet), 'services/billing/Billing.Api.csproj:4-6');
  t.is(redisNet.attributes.version, '2.7.10');
  // Options lines (an index URL with credentials) are never reported.
  t.false(deps.some((d) => JSON.stringify(d).includes('pypi.acme.io')));
  // The workspace root's own dependencies are not attributed to any unit.
  t.false(deps.some((d) => d.object_key === 'package:npm/typescript'));
});

test('client libraries are classified by engine and category', async (t) => {
  const { evidence } = await output();
  const clients = byKind(evidence, 'client-library').map(
    (e) =>
      `${e.subject_key} ${String(e.attributes.package)} ${String(e.attributes.engine)}/${String(e.attributes.category)}`,
  );
  t.deepEqual(clients.sort(), [
    'service:api ioredis redis/datastore',
    'service:api kafkajs kafka/queue',
    'service:api pg postgres/datastore',
    'service:billing.api Npgsql postgres/datastore',
    'service:billing.api StackExchange.Redis redis/datastore',
    'service:cart github.com/jackc/pgx/v5 postgres/datastore',
    'service:cart github.com/redis/go-redis/v9 redis/datastore',
    'service:ledger redis redis/datastore',
    'service:ledger sqlx postgres/datastore',
    'service:orders-service org.postgresql:postgresql postgres/datastore',
    'service:orders-service org.springframework.kafka:spring-kafka kafka/queue',
    'service:payments-svc boto3 s3/storage',
    'service:payments-svc pika rabbitmq/queue',
    'service:payments-svc psycopg postgres/datastore',
    'service:payments-svc redis redis/datastore',
    'service:payments-svc sqlalchemy postgres/datastore',
  ]);
  const boto = byKind(evidence, 'client-library').find((e) => e.attributes.package === 'boto3');
  t.is(boto?.attributes.detected_via, 'services/payments/payments/app.py');
  t.is(at(boto as Evidence), 'services/payments/requirements/base.txt:1-1');
});

// ---------------------------------------------------------------------------------------------
// Imports

test('only cross-unit imports, one per (file, target unit), citing the first import line', async (t) => {
  const { evidence } = await output();
  const imports = byKind(evidence, 'import');
  t.deepEqual(
    imports.map((e) => `${e.subject_key} -> ${e.object_key} @ ${at(e)}`),
    [
      'service:api -> service:shared @ packages/api/src/app.ts:2-2',
      'service:web -> service:shared @ packages/web/src/main.js:1-1',
      'service:payments-svc -> service:shared-py @ services/payments/payments/app.py:3-3',
      'service:cart -> service:common @ services/cart/main.go:8-8',
    ].sort((a, b) => (a.split(' @ ')[1] as string).localeCompare(b.split(' @ ')[1] as string)),
  );
  const api = imports.find((e) => e.subject_key === 'service:api') as Evidence;
  t.is(api.summary, 'unit api imports unit shared (src/app.ts)');
  t.is(api.relationship_kind, 'imports');
  t.is(api.provider, 'typescript-imports');
  t.deepEqual(api.attributes.lines, [2, 3, 12]);
  t.deepEqual(api.attributes.specifiers, [
    '../../shared/src/util',
    '@acme/shared',
    '@acme/shared/extra',
  ]);
  t.deepEqual(api.attributes.symbols, ['formatMoney', 'helper', 'Money'].sort());
  t.deepEqual(api.attributes.resolution, ['package-name', 'relative-path']);
  t.is(api.attributes.in_test, false);
  t.is(api.content_sha256, sha(FIXTURE['packages/api/src/app.ts'] as string, 2, 2));
  const py = imports.find((e) => e.subject_key === 'service:payments-svc') as Evidence;
  t.deepEqual(py.attributes.lines, [3, 4]);
  t.deepEqual(py.attributes.symbols, ['fmt', 'money']);
  const go = imports.find((e) => e.subject_key === 'service:cart') as Evidence;
  t.deepEqual(go.attributes.specifiers, ['github.com/acme/shop/common/log']);
  t.deepEqual(go.attributes.symbols, ['clog']);
  t.false(imports.some((e) => e.object_key === 'service:web'));
});

test('import extraction ignores comments, strings and docstrings', (t) => {
  const js = extractJsImports(
    lines(
      "// import a from 'a'",
      "/* require('b') */",
      'const s = "import c from \'c\'";',
      "const t = `${require('d')}`;",
      "const re = /import e from 'e'/;",
      'import {',
      '  f1,',
      '  f2 as g,',
      "} from 'f';",
      "export * from 'h';",
      "obj.require('nope');",
    ),
  );
  t.deepEqual(
    js.map((i) => `${i.spec}@${i.line}-${i.endLine}`),
    ['f@6-9', 'h@10-10', 'd@4-4'],
  );
  t.deepEqual(js[0]?.symbols, ['f1', 'f2']);
  const go = extractGoImports(
    lines(
      'package x',
      '// import "a/b"',
      'import "c/d"',
      'import (',
      '  e "e/f"',
      '  // "g/h"',
      ')',
    ),
  );
  t.deepEqual(
    go.map((i) => `${i.spec}@${i.line}`),
    ['c/d@3', 'e/f@5'],
  );
  const py = extractPythonImports(
    lines(
      "'''",
      'import a',
      "'''",
      '# import b',
      'import c.d, e as f',
      'from .g import (h,',
      '    i)',
      'x = "from j import k"',
    ),
  );
  t.deepEqual(
    py.map((i) => `${'.'.repeat(i.level ?? 0)}${i.spec}@${i.line}-${i.endLine}`),
    ['.g@6-7', 'c.d@5-5', 'e@5-5'],
  );
});

// ---------------------------------------------------------------------------------------------
// Connections

test('env reads of connection-like variables', async (t) => {
  const { evidence } = await output();
  const reads = byKind(evidence, 'env-read').map(
    (e) => `${e.subject_key} ${String(e.attributes.variable)} @ ${at(e)}`,
  );
  t.deepEqual(reads.sort(), [
    'service:api DATABASE_URL @ packages/api/src/app.ts:7-7',
    'service:cart REDIS_ADDR @ services/cart/main.go:16-16',
    'service:ledger LEDGER_DB_URL @ services/ledger/src/main.rs:3-3',
    'service:orders-service INVENTORY_SERVICE_URL @ services/orders/src/main/java/Orders.java:3-3',
    'service:orders-service KAFKA_BROKERS @ services/orders/src/main/java/Orders.java:2-2',
    'service:payments-svc AMQP_URL @ services/payments/payments/app.py:14-14',
    'service:payments-svc DATABASE_URL @ services/payments/.env.example:1-1',
    'service:payments-svc DATABASE_URL @ services/payments/payments/app.py:13-13',
    'service:payments-svc KAFKA_BOOTSTRAP_SERVERS @ services/payments/config/settings.yaml:3-3',
    'service:payments-svc PAYMENT_SERVICE @ services/payments/.env.example:4-4',
    'service:payments-svc REDIS_HOST @ services/payments/.env.example:2-2',
    'service:web API_URL @ packages/web/src/main.js:3-3',
  ]);
  const redis = byKind(evidence, 'env-read').find(
    (e) => e.attributes.variable === 'REDIS_ADDR',
  ) as Evidence;
  t.is(redis.summary, 'cart reads REDIS_ADDR');
  t.is(redis.object_key, null);
  t.is(redis.content_sha256, sha(FIXTURE['services/cart/main.go'] as string, 16, 16));
  const amqp = byKind(evidence, 'env-read').find(
    (e) => e.attributes.variable === 'AMQP_URL',
  ) as Evidence;
  t.is(amqp.attributes.default, 'amqp://rabbitmq:5672');
  const token = byKind(evidence, 'env-read').find(
    (e) => e.attributes.variable === 'PAYMENT_SERVICE',
  );
  t.is(token?.attributes.value, undefined, 'a token-like value is never reported');
  const redisHost = byKind(evidence, 'env-read').find(
    (e) => e.attributes.variable === 'REDIS_HOST',
  );
  t.is(redisHost?.attributes.value, 'redis-cache');
  const kafka = byKind(evidence, 'env-read').find(
    (e) => e.attributes.variable === 'KAFKA_BOOTSTRAP_SERVERS',
  );
  t.is(kafka?.attributes.default, 'kafka:9092');
});

test('connection strings: datastores, brokers, DSNs, internal services; credentials stripped', async (t) => {
  const { evidence } = await output();
  const conns = byKind(evidence, 'connection-string').map(
    (e) => `${e.subject_key} -> ${String(e.object_key)} @ ${at(e)}`,
  );
  t.deepEqual(conns.sort(), [
    'service:api -> datastore:db @ packages/api/Dockerfile:3-3',
    'service:api -> datastore:db @ packages/api/src/app.ts:7-7',
    'service:api -> queue:kafka @ packages/api/src/app.ts:8-8',
    'service:api -> queue:kafka-2 @ packages/api/src/app.ts:8-8',
    'service:api -> service:orders @ packages/api/src/app.ts:13-13',
    'service:cart -> datastore:cart-db @ services/cart/main.go:17-17',
    'service:cart -> datastore:pg-kv @ services/cart/main.go:18-18',
    'service:orders-service -> datastore:orders-db @ services/orders/src/main/resources/application.properties:2-2',
    'service:orders-service -> queue:kafka @ services/orders/src/main/resources/application.properties:3-3',
    'service:orders-service -> service:inventory @ services/orders/src/main/java/Orders.java:3-3',
    'service:payments-svc -> datastore:payments-db @ services/payments/.env.example:1-1',
    'service:payments-svc -> datastore:redis-cache @ services/payments/.env.example:2-2',
    'service:payments-svc -> external:api.stripe.com @ services/payments/tests/test_app.py:1-1',
    'service:payments-svc -> queue:rabbitmq @ services/payments/config/settings.yaml:2-2',
    'service:payments-svc -> queue:rabbitmq @ services/payments/payments/app.py:14-14',
  ]);
  const cart = byKind(evidence, 'connection-string').find(
    (e) => e.object_key === 'datastore:cart-db',
  ) as Evidence;
  t.is(cart.summary, 'cart connects to postgres at cart-db:5432/carts');
  t.like(cart.attributes, {
    scheme: 'postgres',
    host: 'cart-db',
    port: 5432,
    database: 'carts',
    has_credentials: true,
  });
  t.is(cart.content_sha256, sha(FIXTURE['services/cart/main.go'] as string, 17, 17));
  const kv = byKind(evidence, 'connection-string').find(
    (e) => e.object_key === 'datastore:pg-kv',
  ) as Evidence;
  t.like(kv.attributes, {
    port: 6432,
    database: 'kvdb',
    has_credentials: true,
    detected_by: 'key-value-dsn',
  });
  const api = byKind(evidence, 'connection-string').find(
    (e) => at(e) === 'packages/api/src/app.ts:7-7',
  ) as Evidence;
  t.is(api.summary, 'api connects to postgres at db:5432/shop');
  const test_ = byKind(evidence, 'connection-string').find(
    (e) => e.object_key === 'external:api.stripe.com',
  );
  t.is(test_?.attributes.in_test, true);
  t.is(cart.attributes.in_test, false);
  // Commented-out URLs, doc hosts and files outside units produce nothing.
  t.false(evidence.some((e) => /legacy-db|old-host|w3\.org|acme-tools/.test(JSON.stringify(e))));
});

test('external API calls from literal URLs passed to HTTP clients', async (t) => {
  const { evidence } = await output();
  const calls = byKind(evidence, 'external-api-call').map(
    (e) => `${e.subject_key} -> ${String(e.object_key)} @ ${at(e)}`,
  );
  t.deepEqual(calls.sort(), [
    'service:api -> external:api.stripe.com @ packages/api/src/app.ts:9-9',
    'service:cart -> external:api.github.com @ services/cart/main.go:19-19',
    'service:payments-svc -> external:api.stripe.com @ services/payments/payments/app.py:18-18',
    'service:web -> external:api.segment.io @ packages/web/src/main.js:4-4',
  ]);
  const py = byKind(evidence, 'external-api-call').find((e) =>
    e.location.path.endsWith('app.py'),
  ) as Evidence;
  t.is(py.relationship_kind, 'calls');
  t.is(py.summary, 'payments-svc calls external API api.stripe.com');
});

test('no password appears anywhere in the output', async (t) => {
  const out = await output();
  const json = JSON.stringify(out);
  t.false(json.includes(SECRET));
  t.false(json.includes('hunter2'));
  t.false(json.includes('user:'));
  t.false(json.includes('sk_live'));
  // Direct parse checks, including a password that holds '/'.
  const p = parseUrl('postgres', `u:${SECRET}/x/y@db:5432/shop?password=${SECRET}`);
  t.deepEqual(p.hosts, [{ host: 'db', port: 5432 }]);
  t.is(p.database, 'shop');
  t.false(JSON.stringify(p).includes(SECRET));
  const multi = parseUrl('mongodb', 'u:p@m1:27017,m2:27018/orders?replicaSet=rs0');
  t.deepEqual(
    multi.hosts.map((h) => h.host),
    ['m1', 'm2'],
  );
  t.true(parseUrl('redis', '${REDIS_HOST}:6379').unresolved);
});

// ---------------------------------------------------------------------------------------------
// Citations and determinism

test('every evidence cites real lines with the right content_sha256', async (t) => {
  const { evidence } = await output();
  t.true(evidence.length > 50);
  for (const e of evidence) {
    const text = FIXTURE[e.location.path];
    if (text === undefined) {
      t.fail(`unknown path ${e.location.path}`);
      continue;
    }
    t.true(e.location.start_line >= 1 && e.location.end_line >= e.location.start_line);
    t.true(e.location.end_line <= text.split('\n').length);
    t.is(e.content_sha256, sha(text, e.location.start_line, e.location.end_line), at(e));
    t.is(e.source_type, 'code');
    t.truthy(e.summary);
  }
});

test('output is deterministic and sorted regardless of input order', async (t) => {
  const a = await output();
  const shuffled = fixtureFiles().reverse();
  const rotated = [...shuffled.slice(7), ...shuffled.slice(0, 7)];
  const b = await analyzeCode(rotated);
  t.deepEqual(b, a);
  const keys = a.evidence.map((e) => [e.location.path, e.location.start_line] as const);
  for (let i = 1; i < keys.length; i++) {
    const [p0, l0] = keys[i - 1] as readonly [string, number];
    const [p1, l1] = keys[i] as readonly [string, number];
    t.true(p0 < p1 || (p0 === p1 && l0 <= l1));
  }
});

// ---------------------------------------------------------------------------------------------
// Readers

test('minimal TOML reader: tables, multi-line arrays, inline tables, comments, errors', (t) => {
  const doc = readToml(
    lines(
      '# top',
      'title = "x # not a comment"',
      '[tool.poetry.dependencies]',
      'python = "^3.11"',
      'fastapi = { version = "^0.110", extras = ["all"] }',
      '"quoted.key" = \'lit\'',
      'arr = [',
      '  "a",  # one',
      '  """b""",',
      ']',
      'bad line here',
      '[[bin]]',
      'n = 1',
    ),
  );
  t.is(doc.assignments.find((a) => a.key[0] === 'title')?.value.kind, 'string');
  const fast = doc.assignments.find((a) => a.path.join('.') === 'tool.poetry.dependencies.fastapi');
  t.is(fast?.line, 5);
  t.is(fast?.value.kind, 'table');
  t.deepEqual(doc.assignments.find((a) => a.key[0] === 'quoted.key')?.path, [
    'tool',
    'poetry',
    'dependencies',
    'quoted.key',
  ]);
  const arr = doc.assignments.find((a) => a.key[0] === 'arr');
  t.deepEqual([arr?.line, arr?.endLine], [7, 10]);
  t.deepEqual(
    arr?.value.kind === 'array'
      ? arr.value.items.map((i) => (i.kind === 'string' ? `${i.value}@${i.line}` : ''))
      : [],
    ['a@8', 'b@9'],
  );
  t.is(doc.errors.length, 1);
  t.is(doc.errors[0]?.line, 11);
  t.deepEqual(
    doc.headers.map((h) => `${h.path.join('.')}${h.arrayTable ? '[]' : ''}@${h.line}`),
    ['tool.poetry.dependencies@3', 'bin[]@12'],
  );
});

test('small XML reader: comments, nesting, attributes, line spans', (t) => {
  const { root, errors } = readXml(
    lines(
      '<?xml version="1.0"?>',
      '<a x="1">',
      '  <!-- <b>no</b> -->',
      "  <b y='2'>t &amp; u</b>",
      '  <c/>',
      '</a>',
    ),
  );
  t.deepEqual(errors, []);
  t.is(root?.name, 'a');
  t.deepEqual(
    root?.children.map((c) => `${c.name}@${c.line}-${c.endLine}`),
    ['b@4-4', 'c@5-5'],
  );
  t.is(root?.children[0]?.text, 't & u');
  t.is(root?.children[0]?.attrs.y, '2');
  t.is(root?.endLine, 6);
});

test('PEP 508 requirement parsing', (t) => {
  t.deepEqual(parsePep508('requests [security, socks] >=2.8.1, ==2.8.* ; python_version < "2.7"'), {
    name: 'requests',
    extras: ['security', 'socks'],
    version: '>=2.8.1, ==2.8.*',
    marker: 'python_version < "2.7"',
    url: null,
  });
  t.is(parsePep508(`pkg @ https://u:${SECRET}@host/pkg.whl`)?.url, 'https://host/pkg.whl');
  t.is(parsePep508('not a requirement!'), null);
});

test('lexer masks comments but keeps strings, template literals and Rust lifetimes', (t) => {
  const js = lex("a = `x${ {b: '//'} }y` // c\n/* d */ e", 'js');
  t.is(js.code, "a = `x${ {b: '//'} }y`     \n        e");
  const rs = lex("fn f<'a>(x: &'a str) { let c = '\"'; } // z", 'rust');
  t.is(rs.code, "fn f<'a>(x: &'a str) { let c = '\"'; }     ");
  const py = lex('x = \'#\'  # c\ny = """\n# not\n"""', 'python');
  t.is(py.code, 'x = \'#\'     \ny = """\n# not\n"""');
});
