/**
 * The demo repository `npm start` registers: a small shop (web front end, orders API, a worker,
 * PostgreSQL, Redis) described by its code, a compose file, Kubernetes manifests, Terraform and a
 * GitHub Actions workflow. It is a real git repository under the data folder, made once. Some
 * of it is deliberately imperfect (an unpinned third-party action, no workflow permissions, a
 * database shared by two services, a published database port, an image on `latest`, compose and
 * Kubernetes running different versions of `web`), so the first audit shows a graph, a diagram,
 * findings and an uncertainty case. The branch `feature/reports` adds a `reports` service: the
 * pull request README's gate example audits.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
const lines = (...l: string[]) => `${l.join('\n')}\n`;

const lockfile = (name: string, deps: Record<string, string>) =>
  json({
    name,
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name, version: '1.0.0', dependencies: deps } },
  });

/** A Node service's package.json, and its lockfile when `locked`, by path. */
const nodePackage = (dir: string, name: string, deps: Record<string, string>, locked: boolean) => ({
  [`${dir}/package.json`]: json({ name, version: '1.0.0', dependencies: deps }),
  ...(locked ? { [`${dir}/package-lock.json`]: lockfile(name, deps) } : {}),
});

function deployment(name: string, image: string, port: number, env: Record<string, string>) {
  return lines(
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    '  replicas: 2',
    '  selector:',
    '    matchLabels:',
    `      app: ${name}`,
    '  template:',
    '    metadata:',
    '      labels:',
    `        app: ${name}`,
    '    spec:',
    '      containers:',
    `        - name: ${name}`,
    `          image: ${image}`,
    '          ports:',
    `            - containerPort: ${port}`,
    '          securityContext:',
    '            runAsNonRoot: true',
    '          resources:',
    '            limits:',
    '              cpu: 500m',
    '              memory: 256Mi',
    '          env:',
    ...Object.entries(env).flatMap(([k, v]) => [
      `            - name: ${k}`,
      `              value: ${v}`,
    ]),
    '---',
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    '  selector:',
    `    app: ${name}`,
    '  ports:',
    `    - port: ${port}`,
  );
}

export const DEMO_FILES: Record<string, string> = {
  'README.md': lines(
    '# shop (demo)',
    '',
    'A small shop: `web` calls `orders`; `orders` and `worker` share PostgreSQL; `worker` reads jobs from Redis.',
    'Registered by `npm start` as the demo repository of the architecture audit service.',
  ),
  '.github/CODEOWNERS': lines('* @acme/shop-team', '/infra/ @acme/platform'),
  ...nodePackage('services/web', 'web', { express: '^4.19.2' }, true),
  'services/web/src/server.js': lines(
    "const express = require('express');",
    'const app = express();',
    'const ORDERS_URL = process.env.ORDERS_URL;',
    "app.get('/', async (_req, res) => res.json(await (await fetch(`${ORDERS_URL}/orders`)).json()));",
    'app.listen(3000);',
  ),
  'services/web/Dockerfile': lines(
    'FROM node:20-alpine',
    'WORKDIR /app',
    'COPY . .',
    'RUN npm ci --omit=dev',
    'USER node',
    'CMD ["node", "src/server.js"]',
  ),
  ...nodePackage('services/orders', 'orders', { pg: '^8.12.0', express: '^4.19.2' }, false),
  'services/orders/src/index.js': lines(
    "const { Pool } = require('pg');",
    "const express = require('express');",
    'const pool = new Pool({ connectionString: process.env.DATABASE_URL });',
    'const app = express();',
    "app.get('/orders', async (_req, res) => res.json((await pool.query('select * from orders')).rows));",
    'app.listen(8080);',
  ),
  'services/orders/Dockerfile': lines(
    'FROM node:20-alpine',
    'WORKDIR /app',
    'COPY . .',
    'RUN npm install --omit=dev',
    'CMD ["node", "src/index.js"]',
  ),
  'services/worker/go.mod': lines('module example.com/shop/worker', '', 'go 1.22'),
  'services/worker/go.sum': '',
  'services/worker/main.go': lines(
    'package main',
    '',
    'import "os"',
    '',
    'func main() {',
    '\t_ = os.Getenv("DATABASE_URL")',
    '\t_ = os.Getenv("REDIS_URL")',
    '}',
  ),
  'docker-compose.yml': lines(
    'services:',
    '  web:',
    '    build: services/web',
    '    image: ghcr.io/acme/shop-web:1.3.0',
    '    ports:',
    "      - '3000:3000'",
    '    environment:',
    '      ORDERS_URL: http://orders:8080',
    '    depends_on: [orders]',
    '  orders:',
    '    build: services/orders',
    '    environment:',
    '      DATABASE_URL: postgres://shop@db:5432/shop',
    '    depends_on: [db]',
    '  worker:',
    '    image: ghcr.io/acme/shop-worker:latest',
    '    environment:',
    '      DATABASE_URL: postgres://shop@db:5432/shop',
    '      REDIS_URL: redis://cache:6379',
    '    depends_on: [db, cache]',
    '  db:',
    '    image: postgres:16',
    '    ports:',
    "      - '5432:5432'",
    '  cache:',
    '    image: redis:7',
  ),
  'deploy/k8s/web.yaml': deployment('web', 'ghcr.io/acme/shop-web:1.4.0', 3000, {
    ORDERS_URL: 'http://orders:8080',
  }),
  'deploy/k8s/orders.yaml': deployment('orders', 'ghcr.io/acme/shop-orders:1.4.0', 8080, {
    DATABASE_URL: 'postgres://shop@db:5432/shop',
  }),
  'infra/main.tf': lines(
    'resource "aws_db_instance" "db" {',
    '  identifier          = "shop-db"',
    '  engine              = "postgres"',
    '  engine_version      = "16"',
    '  instance_class      = "db.t4g.micro"',
    '  publicly_accessible = false',
    '  storage_encrypted   = true',
    '}',
    '',
    'resource "aws_elasticache_cluster" "cache" {',
    '  cluster_id = "shop-cache"',
    '  engine     = "redis"',
    '}',
  ),
  '.github/workflows/ci.yml': lines(
    'name: ci',
    'on: [push, pull_request]',
    'jobs:',
    '  test:',
    '    runs-on: ubuntu-latest',
    '    steps:',
    '      - uses: actions/checkout@v4',
    '      - uses: actions/setup-node@v4',
    '        with:',
    '          node-version: 20',
    '      - run: npm ci && npm test',
    '        working-directory: services/web',
    '  image:',
    '    runs-on: ubuntu-latest',
    '    needs: test',
    '    steps:',
    '      - uses: actions/checkout@v4',
    '      - uses: docker/build-push-action@v6',
    '        with:',
    '          context: services/web',
    '          tags: ghcr.io/acme/shop-web:${{ github.sha }}',
  ),
};

/** What the branch `feature/reports` adds on top of main. */
export const DEMO_FEATURE_BRANCH = 'feature/reports';
const FEATURE_FILES: Record<string, string> = {
  ...nodePackage('services/reports', 'reports', { pg: '^8.12.0' }, true),
  'services/reports/src/index.js': lines(
    "const { Pool } = require('pg');",
    'const pool = new Pool({ connectionString: process.env.DATABASE_URL });',
    "setInterval(() => pool.query('select count(*) from orders'), 60_000);",
  ),
  'docker-compose.yml': `${DEMO_FILES['docker-compose.yml']}${lines(
    '  reports:',
    '    build: services/reports',
    '    environment:',
    '      DATABASE_URL: postgres://shop@db:5432/shop',
    '    depends_on: [db]',
  )}`,
};

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

/**
 * Makes the demo git repository in `dir` (branch main, one commit) unless it already has one;
 * returns its file:// URL.
 */
export function ensureDemoRepo(dir: string): string {
  if (!fs.existsSync(path.join(dir, '.git'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    writeFiles(dir, DEMO_FILES);
    git(dir, 'init', '--quiet', '--initial-branch', 'main');
    git(dir, 'add', '--all');
    commit(dir, 'Demo shop: services, compose, Kubernetes, Terraform, CI');
  }
  // Demo repositories made before the branch existed get it too.
  if (!git(dir, 'branch', '--list', DEMO_FEATURE_BRANCH)) {
    git(dir, 'checkout', '--quiet', '-b', DEMO_FEATURE_BRANCH, 'main');
    writeFiles(dir, FEATURE_FILES);
    git(dir, 'add', '--all');
    commit(dir, 'Reports: a service that reads the orders database');
    git(dir, 'checkout', '--quiet', 'main');
  }
  return `file://${dir}`;
}

function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [p, content] of Object.entries(files)) {
    const full = path.join(dir, p);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, content);
  }
}

function commit(dir: string, message: string): void {
  git(
    dir,
    '-c',
    'user.name=archaudit demo',
    '-c',
    'user.email=demo@archaudit.invalid',
    'commit',
    '--quiet',
    '-m',
    message,
  );
}
