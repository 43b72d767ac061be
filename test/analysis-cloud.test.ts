/**
 * Cloud analyzers (analysis/cloud): compose, Kubernetes, Helm, Kustomize, Terraform (AWS, GCP,
 * Azure) and Dockerfiles over realistic inline fixtures. Pure functions: no database.
 */
import test, { type ExecutionContext } from 'ava';
import crypto from 'node:crypto';
import { analyzeCloud } from '../analysis/cloud';
import { extractHosts } from '../analysis/cloud/common';
import { parseImageRef } from '../analysis/shared/images';
import { isSecretName } from '../analysis/shared/secrets';
import { envReferences } from '../analysis/cloud/env';
import type { AnalyzerOutput, Evidence, SourceFile } from '../analysis/evidence';

const HEX64 = 'a'.repeat(64);

/** Literal secret values in the fixtures: none may appear anywhere in the output. */
const SECRETS = [
  's3cr3t-Hunter2',
  'pa55word-XYZ',
  'tok-Very-Secret-123',
  'mail-Pass-999',
  'Pg-Pass-777',
  'YXBwLXVzZXI=',
  'sk_live_Gen-Secret-1',
  'tf-Literal-Pass-42',
];

const COMPOSE = `services:
  frontend:
    build: ./src/frontend
    image: gcr.io/google-samples/microservices-demo/frontend:v0.10.1
    ports:
      - "8080:8080"
      - "127.0.0.1:9090:9090"
    environment:
      - CART_SERVICE_ADDR=cartservice:7070
      - CATALOG_URL=https://catalog.example.com/api
      - LOG_LEVEL=debug
    depends_on:
      - cartservice
    deploy:
      replicas: 2
      resources:
        limits:
          cpus: "0.5"
          memory: 256M
  cartservice:
    build:
      context: ./src/cartservice
    image: gcr.io/google-samples/microservices-demo/cartservice@sha256:${HEX64}
    environment:
      REDIS_ADDR: redis-cart:6379
      DATABASE_URL: postgres://app:\${DB_PASSWORD}@db:5432/orders
      SENTRY_DSN: https://app:pa55word-XYZ@sentry.example.com/1
    depends_on:
      redis-cart:
        condition: service_healthy
      db:
        condition: service_started
    privileged: true
    cap_add: [NET_ADMIN]
  redis-cart:
    image: redis:alpine
    healthcheck:
      test: ["CMD", "redis-cli", "ping"]
    volumes:
      - redis-data:/data
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: s3cr3t-Hunter2
      POSTGRES_USER: app
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock:ro
  queue:
    image: rabbitmq:3-management
    expose:
      - "5672"
volumes:
  redis-data: {}
`;

const K8S = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: cartservice
  namespace: shop
  labels:
    app: cartservice
spec:
  replicas: 3
  selector:
    matchLabels:
      app: cartservice
  template:
    metadata:
      labels:
        app: cartservice
    spec:
      containers:
        - name: server
          image: gcr.io/google-samples/microservices-demo/cartservice:v0.10.1
          ports:
            - containerPort: 7070
          env:
            - name: REDIS_ADDR
              value: "redis-cart.shop.svc.cluster.local:6379"
            - name: CATALOG_ADDR
              value: "catalog:3550"
            - name: API_TOKEN
              value: "tok-Very-Secret-123"
            - name: DB_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: db-credentials
                  key: password
            - name: CURRENCY_URL
              valueFrom:
                configMapKeyRef:
                  name: shop-config
                  key: CURRENCY_URL
          resources:
            limits:
              memory: 128Mi
          securityContext:
            runAsNonRoot: true
            allowPrivilegeEscalation: false
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: redis-store
  namespace: shop
spec:
  serviceName: redis-cart
  selector:
    matchLabels:
      app: redis
  template:
    metadata:
      labels:
        app: redis
    spec:
      containers:
        - name: redis
          image: redis:7.2
---
apiVersion: v1
kind: Service
metadata:
  name: redis-cart
  namespace: shop
spec:
  selector:
    app: redis
  ports:
    - port: 6379
      targetPort: 6379
---
apiVersion: v1
kind: Service
metadata:
  name: currency
  namespace: shop
spec:
  selector:
    app: currency
  ports:
    - port: 7000
---
# not a Kubernetes object: skipped
foo: bar
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: shop
spec:
  ingressClassName: nginx
  tls:
    - hosts: [shop.example.com]
      secretName: shop-tls
  rules:
    - host: shop.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: frontend-external
                port:
                  number: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-config
  namespace: shop
data:
  CURRENCY_URL: "http://currency.shop:7000"
  SMTP_PASSWORD: "mail-Pass-999"
  LOG_LEVEL: info
---
apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
  namespace: shop
type: Opaque
data:
  username: YXBwLXVzZXI=
stringData:
  password: Pg-Pass-777
`;

const K8S_LIST = `apiVersion: v1
kind: List
items:
  - apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: frontend
      namespace: shop
    spec:
      template:
        metadata:
          labels:
            app: frontend
        spec:
          containers:
            - name: server
              image: gcr.io/google-samples/microservices-demo/frontend:v0.10.1
              env:
                - name: CART_SERVICE_ADDR
                  value: "cartservice:7070"
              securityContext:
                privileged: true
  - apiVersion: v1
    kind: Service
    metadata:
      name: frontend-external
      namespace: shop
    spec:
      type: LoadBalancer
      selector:
        app: frontend
      ports:
        - port: 80
          targetPort: 8080
  - apiVersion: v1
    kind: Service
    metadata:
      name: cartservice
      namespace: shop
    spec:
      selector:
        app: cartservice
      ports:
        - port: 7070
`;

const CHART = `apiVersion: v2
name: web
version: 1.4.0
appVersion: "2.1.0"
dependencies:
  - name: postgresql
    version: 12.x.x
    repository: https://charts.bitnami.com/bitnami
    condition: postgresql.enabled
`;

const VALUES = `replicaCount: 2
image:
  repository: ghcr.io/acme/web
  tag: ""
postgresql:
  image:
    registry: docker.io
    repository: bitnami/postgresql
    tag: 15.4.0
`;

const TEMPLATE = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "web.fullname" . }}
spec:
  replicas: {{ .Values.replicaCount }}
  template:
    spec:
      containers:
        - image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
`;

const KUSTOMIZATION = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: shop-prod
namePrefix: prod-
nameSuffix: -v2
resources:
  - ../../base
images:
  - name: gcr.io/google-samples/microservices-demo/frontend
    newTag: v0.10.2
  - name: redis
    newName: registry.internal/redis
    digest: sha256:${HEX64}
secretGenerator:
  - name: api-keys
    literals:
      - STRIPE_KEY=sk_live_Gen-Secret-1
`;

const TF_AWS = `provider "aws" {
  region = "us-east-1"
}

resource "aws_iam_policy" "read" {
  name   = "read-assets"
  policy = <<EOF
{
  "Version": "2012-10-17",
  "Statement": [{ "Effect": "Allow", "Action": "s3:GetObject", "Resource": "*" }]
}
EOF
}

resource "aws_db_instance" "orders" {
  identifier             = "orders-db"
  engine                 = "postgres"
  engine_version         = "15.4"
  instance_class         = "db.t3.micro"
  storage_encrypted      = false
  publicly_accessible    = true
  username               = "app"
  password               = "tf-Literal-Pass-42"
  vpc_security_group_ids = [aws_security_group.db.id]
}

resource "aws_security_group" "db" {
  name        = "orders-db-sg"
  description = "db access \${var.env}"
  ingress {
    from_port   = 5432
    to_port     = 5432
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}

resource "aws_s3_bucket" "assets" {
  bucket = "acme-assets"
}

resource "aws_s3_bucket_versioning" "assets" {
  bucket = aws_s3_bucket.assets.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_sqs_queue" "orders" {
  name = "orders-queue"
}

resource "aws_ecs_task_definition" "api" {
  family = "api"
  container_definitions = jsonencode([{
    name  = "api"
    image = "acme/api:1.0"
    environment = [
      { name = "DB_HOST", value = aws_db_instance.orders.address },
      { name = "QUEUE_URL", value = aws_sqs_queue.orders.url },
    ]
  }])
}

resource "aws_ecs_service" "api" {
  name            = "api"
  desired_count   = 2
  task_definition = aws_ecs_task_definition.api.arn
}

module "vpc" {
  source = "terraform-aws-modules/vpc/aws"
}
`;

const TF_GCP = `resource "google_sql_database_instance" "main" {
  name             = "orders-pg"
  database_version = "POSTGRES_15"
  region           = "us-central1"
  settings {
    tier = "db-f1-micro"
    ip_configuration {
      ipv4_enabled = true
      authorized_networks {
        name  = "anyone"
        value = "0.0.0.0/0"
      }
    }
  }
  deletion_protection = false
}

resource "google_pubsub_topic" "orders" {
  name = "orders-topic"
}

resource "google_cloud_run_v2_service" "api" {
  name     = "api"
  location = "us-central1"
  template {
    containers {
      image = "us-docker.pkg.dev/acme/api/api:2.0.0"
      env {
        name  = "DB_CONN"
        value = google_sql_database_instance.main.connection_name
      }
      env {
        name  = "TOPIC"
        value = google_pubsub_topic.orders.id
      }
    }
  }
}

resource "google_cloud_run_v2_service_iam_member" "public" {
  name   = google_cloud_run_v2_service.api.name
  role   = "roles/run.invoker"
  member = "allUsers"
}
`;

const TF_AZURE = `resource "azurerm_postgresql_flexible_server" "db" {
  name                          = "acme-pg"
  resource_group_name           = azurerm_resource_group.rg.name
  location                      = "westeurope"
  version                       = "16"
  administrator_login           = "pgadmin"
  administrator_password        = var.pg_password
  sku_name                      = "B_Standard_B1ms"
  public_network_access_enabled = true
}

resource "azurerm_redis_cache" "cache" {
  name                 = "acme-cache"
  capacity             = 1
  family               = "C"
  sku_name             = "Basic"
  non_ssl_port_enabled = true
  minimum_tls_version  = "1.0"
}

resource "azurerm_servicebus_namespace" "bus" {
  name = "acme-bus"
  sku  = "Standard"
}

resource "azurerm_servicebus_queue" "orders" {
  name         = "orders"
  namespace_id = azurerm_servicebus_namespace.bus.id
}
`;

const DOCKERFILE = `# syntax=docker/dockerfile:1
ARG DOTNET_VERSION=8.0
FROM mcr.microsoft.com/dotnet/sdk:\${DOTNET_VERSION} AS builder
WORKDIR /app
COPY . .
RUN dotnet publish -c release \\
    -o /cartservice
FROM mcr.microsoft.com/dotnet/runtime-deps:8.0@sha256:${HEX64}
ADD https://github.com/grpc-ecosystem/grpc-health-probe/releases/download/v0.4.24/grpc_health_probe /bin/probe
COPY --from=builder /cartservice /app
EXPOSE 7070
ENTRYPOINT ["/app/cartservice"]
`;

const ROOT_DOCKERFILE = `FROM node:20-alpine AS deps
RUN npm ci
FROM node:20-alpine AS app
COPY --from=deps /node_modules /app/node_modules
USER node
HEALTHCHECK --interval=30s CMD wget -qO- http://localhost:3000/health || exit 1
EXPOSE 3000/tcp
`;

const BAD_YAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: broken
data: [unclosed
  key: value
`;

const BAD_HCL = `resource "aws_s3_bucket" "x" {
  bucket = "oops"
  {{{
`;

const FILES: SourceFile[] = [
  { path: 'docker-compose.yml', text: COMPOSE },
  { path: 'k8s/app.yaml', text: K8S },
  { path: 'k8s/frontend-list.yaml', text: K8S_LIST },
  { path: 'k8s/broken.yaml', text: BAD_YAML },
  { path: 'charts/web/Chart.yaml', text: CHART },
  { path: 'charts/web/values.yaml', text: VALUES },
  { path: 'charts/web/templates/deployment.yaml', text: TEMPLATE },
  {
    path: 'charts/web/templates/_helpers.tpl',
    text: '{{- define "web.fullname" -}}web{{- end -}}\n',
  },
  { path: 'deploy/overlays/prod/kustomization.yaml', text: KUSTOMIZATION },
  { path: 'infra/aws/main.tf', text: TF_AWS },
  { path: 'infra/gcp/main.tf', text: TF_GCP },
  { path: 'infra/azure/main.tf', text: TF_AZURE },
  { path: 'infra/bad/main.tf', text: BAD_HCL },
  { path: 'src/cartservice/Dockerfile', text: DOCKERFILE },
  { path: 'Dockerfile', text: ROOT_DOCKERFILE },
  { path: 'README.md', text: '# not analyzed\n' },
  { path: '.github/workflows/ci.yml', text: 'on: push\njobs: {}\n' },
];

let cached: Promise<AnalyzerOutput> | null = null;
/** The analysis of FILES, optionally only one provider's evidence (several name `service:api`). */
async function analyzed(provider?: string): Promise<AnalyzerOutput> {
  cached ??= analyzeCloud(FILES);
  const out = await cached;
  return provider ? { ...out, evidence: out.evidence.filter((e) => e.provider === provider) } : out;
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

function linesOf(path: string, start: number, end: number): string {
  const file = FILES.find((f) => f.path === path);
  if (!file) throw new Error(`no fixture ${path}`);
  return file.text
    .split('\n')
    .slice(start - 1, end)
    .join('\n');
}

function find(
  out: AnalyzerOutput,
  kind: string,
  subject: string,
  object?: string | null,
): Evidence[] {
  return out.evidence.filter(
    (e) =>
      e.evidence_kind === kind &&
      e.subject_key === subject &&
      (object === undefined || e.object_key === object),
  );
}

function one(
  t: ExecutionContext,
  out: AnalyzerOutput,
  kind: string,
  subject: string,
  object?: string | null,
): Evidence {
  const found = find(out, kind, subject, object);
  t.is(
    found.length,
    1,
    `${kind} ${subject} -> ${String(object)}: ${found.map((e) => e.summary).join(' | ')}`,
  );
  const e = found[0];
  if (!e) throw new Error(`missing ${kind} ${subject}`);
  return e;
}

/** Exact cited lines, and the cited text contains `needle` when given. */
function cites(
  t: ExecutionContext,
  e: Evidence,
  path: string,
  start: number,
  end: number,
  needle?: string,
) {
  t.deepEqual(e.location, { path, start_line: start, end_line: end }, e.summary);
  const text = linesOf(path, start, end);
  t.is(e.content_sha256, sha256(text));
  if (needle) t.true(text.includes(needle), `${e.summary}: ${text}`);
}

// ---------------------------------------------------------------------------------------------

test('every evidence is cloud-sourced, cites real lines and hashes exactly those lines', async (t) => {
  const out = await analyzed();
  t.true(out.evidence.length > 50);
  for (const e of out.evidence) {
    t.is(e.source_type, 'cloud');
    t.regex(e.subject_key, /^[a-z]+:[a-z0-9.-]+$/);
    if (e.object_key !== null) t.regex(e.object_key, /^[a-z]+:[a-z0-9.-]+$/);
    t.true(e.location.start_line >= 1 && e.location.end_line >= e.location.start_line);
    t.is(
      e.content_sha256,
      sha256(linesOf(e.location.path, e.location.start_line, e.location.end_line)),
    );
    t.true(e.summary.length > 0 && !e.summary.includes('\n'));
  }
  const paths = new Set(out.evidence.map((e) => e.location.path));
  t.false(paths.has('README.md'));
  t.false(paths.has('.github/workflows/ci.yml'));
  // A rendered Helm template is cited at its own lines (hashed above), marked as rendered.
  const rendered = out.evidence.filter(
    (e) => e.location.path === 'charts/web/templates/deployment.yaml',
  );
  t.true(rendered.length > 0);
  t.true(rendered.every((e) => e.attributes.rendered_from === 'helm'));
});

test('output is sorted by path then line, and two runs are deep-equal', async (t) => {
  const a = await analyzeCloud(FILES);
  const b = await analyzeCloud([...FILES].reverse());
  t.deepEqual(a, b);
  for (let i = 1; i < a.evidence.length; i++) {
    const p = a.evidence[i - 1]!.location;
    const q = a.evidence[i]!.location;
    t.true(
      p.path < q.path || (p.path === q.path && p.start_line <= q.start_line),
      `${p.path}:${p.start_line} before ${q.path}:${q.start_line}`,
    );
  }
});

test('secret values never appear anywhere in the output', async (t) => {
  const json = JSON.stringify(await analyzed());
  for (const s of SECRETS) t.false(json.includes(s), s);
});

// ---------------------------------------------------------------------------------------------
// docker-compose

test('compose: services, images, ports, replicas, limits and security attributes', async (t) => {
  const out = await analyzed('docker-compose');
  const frontend = one(t, out, 'service-declared', 'service:frontend');
  t.is(frontend.provider, 'docker-compose');
  cites(t, frontend, 'docker-compose.yml', 2, 19, 'frontend:');
  t.like(frontend.attributes, {
    replicas: 2,
    image_tag: 'v0.10.1',
    build_context: 'src/frontend',
    privileged: false,
    resource_limits_set: true,
    resource_limits: { cpus: '0.5', memory: '256M' },
    healthcheck: false,
    build: { context: './src/frontend', context_dir: 'src/frontend' },
    image: { repo: 'gcr.io/google-samples/microservices-demo/frontend', tag: 'v0.10.1' },
  });
  const cart = one(t, out, 'service-declared', 'service:cartservice');
  t.like(cart.attributes, { privileged: true, cap_add: ['NET_ADMIN'], resource_limits_set: false });
  t.like(one(t, out, 'service-declared', 'service:redis-cart').attributes, { healthcheck: true });

  const img = one(t, out, 'image-reference', 'service:cartservice');
  t.is(img.object_key, 'image:gcr.io-google-samples-microservices-demo-cartservice');
  t.like(img.attributes, { pinned: true, digest: `sha256:${HEX64}`, tag: null });
  cites(t, img, 'docker-compose.yml', 23, 23, '@sha256:');
  const fimg = one(t, out, 'image-reference', 'service:frontend');
  t.like(fimg.attributes, { tag: 'v0.10.1', pinned: false });
  cites(t, fimg, 'docker-compose.yml', 4, 4);

  const ports = find(out, 'port-exposed', 'service:frontend');
  t.deepEqual(
    ports.map((p) => [p.attributes.mapping, p.attributes.public, p.location.start_line]),
    [
      ['8080:8080', true, 6],
      ['9090:9090', false, 7],
    ],
  );
  const internal = one(t, out, 'port-exposed', 'service:queue');
  t.like(internal.attributes, { public: false, internal: true, target: '5672' });
});

test('compose: depends_on in list and map forms', async (t) => {
  const out = await analyzed('docker-compose');
  const list = one(t, out, 'depends-on', 'service:frontend', 'service:cartservice');
  t.is(list.relationship_kind, 'depends_on');
  t.is(list.summary, 'compose service frontend depends on cartservice');
  cites(t, list, 'docker-compose.yml', 13, 13, '- cartservice');
  const redis = one(t, out, 'depends-on', 'service:cartservice', 'service:redis-cart');
  t.like(redis.attributes, { form: 'map', condition: 'service_healthy' });
  cites(t, redis, 'docker-compose.yml', 29, 30, 'redis-cart:');
  one(t, out, 'depends-on', 'service:cartservice', 'service:db');
});

test('compose: env values resolve to services or external hosts', async (t) => {
  const out = await analyzed('docker-compose');
  const redis = one(t, out, 'env-reference', 'service:cartservice', 'service:redis-cart');
  t.is(redis.relationship_kind, 'connects_to');
  t.is(
    redis.summary,
    'compose service cartservice reads REDIS_ADDR=redis-cart:6379 -> service redis-cart',
  );
  t.like(redis.attributes, { variable: 'REDIS_ADDR', host: 'redis-cart', port: 6379 });
  cites(t, redis, 'docker-compose.yml', 25, 25, 'REDIS_ADDR');

  const db = one(t, out, 'env-reference', 'service:cartservice', 'service:db');
  t.like(db.attributes, { variable: 'DATABASE_URL', scheme: 'postgres', port: 5432 });

  const list = one(t, out, 'env-reference', 'service:frontend', 'service:cartservice');
  cites(t, list, 'docker-compose.yml', 9, 9, 'CART_SERVICE_ADDR');
  one(t, out, 'env-reference', 'service:frontend', 'external:catalog.example.com');
  t.is(find(out, 'env-reference', 'service:frontend').length, 2, 'LOG_LEVEL is not a reference');

  const sentry = one(t, out, 'env-reference', 'service:cartservice', 'external:sentry.example.com');
  t.is(sentry.attributes.value, 'https://***@sentry.example.com/1');
});

test('compose: literal secrets are flagged by variable name only; ${VAR} is not literal', async (t) => {
  const out = await analyzed('docker-compose');
  const pw = one(t, out, 'literal-secret', 'service:db');
  t.deepEqual(pw.attributes, { variable: 'POSTGRES_PASSWORD', source: 'environment' });
  cites(t, pw, 'docker-compose.yml', 44, 44, 'POSTGRES_PASSWORD');
  const dsn = one(t, out, 'literal-secret', 'service:cartservice');
  t.like(dsn.attributes, { variable: 'SENTRY_DSN', embedded_in: 'connection-string' });
});

test('compose: datastores, queues and volumes', async (t) => {
  const out = await analyzed('docker-compose');
  const redis = one(t, out, 'datastore-declared', 'datastore:redis-cart');
  t.like(redis.attributes, { engine: 'redis', service_key: 'service:redis-cart' });
  t.like(one(t, out, 'datastore-declared', 'datastore:db').attributes, {
    engine: 'postgres',
    tag: '16',
  });
  t.like(one(t, out, 'queue-declared', 'queue:queue').attributes, { engine: 'rabbitmq' });
  t.is(find(out, 'datastore-declared', 'datastore:frontend').length, 0);

  const named = one(t, out, 'volume-mount', 'service:redis-cart');
  t.is(named.object_key, 'volume:redis-data');
  t.like(named.attributes, { type: 'volume', target: '/data' });
  const sock = one(t, out, 'volume-mount', 'service:db');
  t.like(sock.attributes, { type: 'bind', docker_socket: true, read_only: true });
});

// ---------------------------------------------------------------------------------------------
// Kubernetes

test('kubernetes: workload facts and containers', async (t) => {
  const out = await analyzed('kubernetes');
  const cart = one(t, out, 'workload-declared', 'service:cartservice');
  t.is(cart.provider, 'kubernetes');
  cites(t, cart, 'k8s/app.yaml', 1, 45, 'kind: Deployment');
  t.like(cart.attributes, {
    kind: 'Deployment',
    namespace: 'shop',
    replicas: 3,
    image_tag: 'v0.10.1',
    labels: { app: 'cartservice' },
  });
  const [c] = cart.attributes.containers as any[];
  t.like(c, {
    name: 'server',
    repo: 'gcr.io/google-samples/microservices-demo/cartservice',
    tag: 'v0.10.1',
    ports: [7070],
    resource_limits_set: true,
    privileged: false,
    run_as_non_root: true,
    allow_privilege_escalation: false,
  });
  const img = one(
    t,
    out,
    'image-reference',
    'service:cartservice',
    'image:gcr.io-google-samples-microservices-demo-cartservice',
  );
  cites(t, img, 'k8s/app.yaml', 20, 20, 'image:');

  const frontend = one(t, out, 'workload-declared', 'service:frontend');
  t.is(frontend.location.path, 'k8s/frontend-list.yaml');
  cites(t, frontend, 'k8s/frontend-list.yaml', 4, 22, 'privileged: true');
  t.like((frontend.attributes.containers as any[])[0], {
    privileged: true,
    resource_limits_set: false,
  });
});

test('kubernetes: env hosts resolve through Services to the selected workload', async (t) => {
  const out = await analyzed('kubernetes');
  const redis = one(t, out, 'env-reference', 'service:cartservice', 'service:redis-store');
  t.is(
    redis.summary,
    'Deployment cartservice reads REDIS_ADDR=redis-cart.shop.svc.cluster.local:6379 -> service redis-store',
  );
  t.like(redis.attributes, {
    host: 'redis-cart.shop.svc.cluster.local',
    port: 6379,
    resolution: 'kubernetes-service',
  });
  cites(t, redis, 'k8s/app.yaml', 24, 25, 'REDIS_ADDR');

  const toCart = one(t, out, 'env-reference', 'service:frontend', 'service:cartservice');
  t.is(
    toCart.summary,
    'Deployment frontend reads CART_SERVICE_ADDR=cartservice:7070 -> service cartservice',
  );
  const shortName = one(t, out, 'env-reference', 'service:cartservice', 'service:catalog');
  t.like(shortName.attributes, {
    host: 'catalog',
    port: 3550,
    resolution: 'unresolved-short-name',
  });

  const secret = one(t, out, 'env-reference', 'service:cartservice', 'secret:db-credentials');
  t.is(secret.relationship_kind, 'reads_secret');
  t.like(secret.attributes, { from: 'secretKeyRef', key: 'password' });
  cites(t, secret, 'k8s/app.yaml', 30, 34);

  one(t, out, 'env-reference', 'service:cartservice', 'config:shop-config');
  const viaConfig = one(t, out, 'env-reference', 'service:cartservice', 'service:currency');
  t.like(viaConfig.attributes, {
    from: 'configMapKeyRef',
    config: 'shop-config',
    host: 'currency.shop',
  });

  const token = one(t, out, 'literal-secret', 'service:cartservice');
  t.deepEqual(token.attributes, { variable: 'API_TOKEN', source: 'env' });
});

test('kubernetes: StatefulSet with a redis image is a datastore', async (t) => {
  const out = await analyzed('kubernetes');
  const ds = one(t, out, 'datastore-declared', 'datastore:redis-store');
  t.like(ds.attributes, { engine: 'redis', tag: '7.2', workload_kind: 'StatefulSet' });
  cites(t, ds, 'k8s/app.yaml', 47, 64, 'kind: StatefulSet');
});

test('kubernetes: Services, Ingress, ConfigMap and Secret', async (t) => {
  const out = await analyzed('kubernetes');
  const internal = one(t, out, 'service-exposed', 'service:redis-store');
  t.like(internal.attributes, {
    type: 'ClusterIP',
    public: false,
    aliases: ['redis-cart'],
    selected_workload: 'redis-store',
  });
  cites(t, internal, 'k8s/app.yaml', 66, 76, 'kind: Service');
  const lb = one(t, out, 'service-exposed', 'service:frontend');
  t.like(lb.attributes, { type: 'LoadBalancer', public: true, aliases: ['frontend-external'] });
  t.deepEqual((lb.attributes.ports as any[])[0], {
    name: null,
    port: 80,
    target_port: 8080,
    node_port: null,
    protocol: 'TCP',
  });
  const unselected = one(t, out, 'service-exposed', 'service:currency');
  t.is(unselected.attributes.selected_workload, null);

  const route = one(t, out, 'ingress-route', 'ingress:shop', 'service:frontend');
  t.is(route.relationship_kind, 'routes_to');
  t.like(route.attributes, {
    host: 'shop.example.com',
    path: '/',
    tls: true,
    public: true,
    service: 'frontend-external',
    port: 80,
  });
  cites(t, route, 'k8s/app.yaml', 106, 112, 'path: /');

  const cm = one(t, out, 'config-declared', 'config:shop-config');
  t.deepEqual(cm.attributes.keys, ['CURRENCY_URL', 'LOG_LEVEL', 'SMTP_PASSWORD']);
  t.deepEqual(cm.attributes.values, {
    CURRENCY_URL: 'http://currency.shop:7000',
    SMTP_PASSWORD: null,
    LOG_LEVEL: 'info',
  });
  const cmRef = one(t, out, 'env-reference', 'config:shop-config', 'service:currency');
  cites(t, cmRef, 'k8s/app.yaml', 120, 120, 'CURRENCY_URL');
  t.like(one(t, out, 'literal-secret', 'config:shop-config').attributes, {
    variable: 'SMTP_PASSWORD',
    source: 'configmap',
  });

  const secret = one(t, out, 'secret-declared', 'secret:db-credentials');
  t.deepEqual(secret.attributes.keys, ['password', 'username']);
  t.is(find(out, 'literal-secret', 'secret:db-credentials').length, 2);
});

test('kubernetes: malformed YAML is a gap with the parser message, not an exception', async (t) => {
  const out = await analyzed();
  const gap = out.gaps.find((g) => g.path === 'k8s/broken.yaml');
  t.truthy(gap);
  t.is(gap?.reason, 'yaml_parse_error');
  t.regex(gap?.message ?? '', /line \d+/);
  t.false(out.evidence.some((e) => e.location.path === 'k8s/broken.yaml'));
});

// ---------------------------------------------------------------------------------------------
// Helm and Kustomize

test('helm: chart metadata, dependency, values images; templates rendered with the defaults', async (t) => {
  const out = await analyzed('helm');
  const chart = one(t, out, 'chart-declared', 'service:web');
  t.is(chart.provider, 'helm');
  t.like(chart.attributes, { version: '1.4.0', appVersion: '2.1.0', chart_dir: 'charts/web' });
  t.like((chart.attributes.dependencies as any[])[0], { name: 'postgresql', version: '12.x.x' });
  cites(t, chart, 'charts/web/Chart.yaml', 1, 9);
  const dep = one(t, out, 'depends-on', 'service:web', 'service:postgresql');
  cites(t, dep, 'charts/web/Chart.yaml', 6, 9, 'postgresql');
  t.like(one(t, out, 'datastore-declared', 'datastore:postgresql').attributes, {
    engine: 'postgres',
  });

  const web = one(t, out, 'image-reference', 'service:web', 'image:ghcr.io-acme-web');
  t.like(web.attributes, {
    tag: '2.1.0',
    image_tag: '2.1.0',
    tag_from_app_version: true,
    values_path: 'image',
  });
  cites(t, web, 'charts/web/values.yaml', 2, 4);
  const pg = one(t, out, 'image-reference', 'service:postgresql', 'image:bitnami-postgresql');
  t.like(pg.attributes, { tag: '15.4.0', values_path: 'postgresql.image' });
  t.false('image_tag' in pg.attributes, 'a subchart image is not the service image');

  // The template renders (include of a named template, `default .Chart.AppVersion`): its
  // Deployment is read, cited at the template's lines; the partial is no gap.
  t.deepEqual(
    out.gaps.filter((g) => g.path.startsWith('charts/')),
    [],
  );
  const workload = one(t, await analyzed('kubernetes'), 'workload-declared', 'service:web');
  t.is(workload.provider, 'kubernetes');
  t.like(workload.attributes, { rendered_from: 'helm', image_tag: '2.1.0' });
  cites(
    t,
    workload,
    'charts/web/templates/deployment.yaml',
    1,
    10,
    '{{ include "web.fullname" . }}',
  );
  t.false(out.gaps.some((g) => g.path.startsWith('charts/') && g.reason === 'yaml_parse_error'));
});

test('kustomize: overlay facts and image overrides', async (t) => {
  const out = await analyzed('kustomize');
  const k = one(t, out, 'kustomization-declared', 'kustomization:deploy-overlays-prod');
  t.like(k.attributes, {
    namespace: 'shop-prod',
    namePrefix: 'prod-',
    nameSuffix: '-v2',
    resources: ['../../base'],
    secret_generators: ['api-keys'],
  });
  const fe = one(
    t,
    out,
    'image-reference',
    'kustomization:deploy-overlays-prod',
    'image:gcr.io-google-samples-microservices-demo-frontend',
  );
  t.is(fe.relationship_kind, 'overrides_image');
  t.like(fe.attributes, {
    tag: 'v0.10.2',
    original: 'gcr.io/google-samples/microservices-demo/frontend',
  });
  cites(t, fe, 'deploy/overlays/prod/kustomization.yaml', 9, 10);
  const redis = one(
    t,
    out,
    'image-reference',
    'kustomization:deploy-overlays-prod',
    'image:registry.internal-redis',
  );
  t.like(redis.attributes, {
    pinned: true,
    original: 'redis',
    new_name: 'registry.internal/redis',
  });
  t.like(one(t, out, 'literal-secret', 'secret:api-keys').attributes, { variable: 'STRIPE_KEY' });
});

// ---------------------------------------------------------------------------------------------
// Terraform

test('terraform/aws: RDS security, exact block lines past a heredoc', async (t) => {
  const out = await analyzed('terraform');
  const rds = one(t, out, 'datastore-declared', 'datastore:orders-db');
  t.is(rds.provider, 'terraform');
  cites(t, rds, 'infra/aws/main.tf', 15, 25, 'resource "aws_db_instance" "orders"');
  t.like(rds.attributes, {
    cloud: 'aws',
    resource_type: 'aws_db_instance',
    address: 'aws_db_instance.orders',
    engine: 'postgres',
    engine_version: '15.4',
    name_source: 'argument',
    security: { encryption_at_rest: false, publicly_accessible: true, deletion_protection: false },
  });
  t.regex(rds.summary, /unencrypted at rest, publicly accessible/);
  const secret = one(t, out, 'literal-secret', 'datastore:orders-db');
  cites(t, secret, 'infra/aws/main.tf', 23, 23, 'password');
});

test('terraform/aws: security group open to the world, bucket, queue, companions, references', async (t) => {
  const out = await analyzed('terraform');
  const sg = one(t, out, 'network-declared', 'network:orders-db-sg');
  t.like(sg.attributes, { security: { open_to_world: true } });
  t.deepEqual((sg.attributes.security as any).public_ingress, [
    { from_port: 5432, to_port: 5432, protocol: 'tcp' },
  ]);
  cites(t, sg, 'infra/aws/main.tf', 27, 36, 'ingress {');
  const sgRef = one(t, out, 'resource-reference', 'datastore:orders-db', 'network:orders-db-sg');
  cites(t, sgRef, 'infra/aws/main.tf', 24, 24, 'aws_security_group.db.id');

  one(t, out, 'bucket-declared', 'bucket:acme-assets');
  const versioning = one(t, out, 'security-configured', 'bucket:acme-assets');
  t.like(versioning.attributes, { parent: 'aws_s3_bucket.assets', security: { versioning: true } });
  t.like(one(t, out, 'queue-declared', 'queue:orders-queue').attributes, {
    engine: 'sqs',
    cloud: 'aws',
  });

  const ecs = one(t, out, 'resource-reference', 'service:api', 'datastore:orders-db');
  t.is(ecs.relationship_kind, 'references');
  t.like(ecs.attributes, { from: 'aws_ecs_task_definition.api', referenced_attribute: 'address' });
  cites(t, ecs, 'infra/aws/main.tf', 59, 59, 'aws_db_instance.orders.address');
  one(t, out, 'resource-reference', 'service:api', 'queue:orders-queue');
  const apis = find(out, 'service-declared', 'service:api').filter(
    (e) => e.attributes.cloud === 'aws',
  );
  t.deepEqual(
    apis.map((e) => [e.attributes.resource_type, e.attributes.replicas ?? null]),
    [
      ['aws_ecs_task_definition', null],
      ['aws_ecs_service', 2],
    ],
  );

  const moduleGap = out.gaps.find((g) => g.reason === 'terraform_module_not_expanded');
  t.is(moduleGap?.path, 'infra/aws/main.tf');
});

test('terraform/gcp: Cloud SQL, Pub/Sub, Cloud Run with image, references and IAM', async (t) => {
  const out = await analyzed('terraform');
  const sql = one(t, out, 'datastore-declared', 'datastore:orders-pg');
  t.like(sql.attributes, {
    cloud: 'google',
    engine: 'postgres',
    instance_class: 'db-f1-micro',
    security: { publicly_accessible: true, deletion_protection: false, tls_enforced: false },
  });
  cites(t, sql, 'infra/gcp/main.tf', 1, 16, 'deletion_protection');
  one(t, out, 'queue-declared', 'queue:orders-topic');
  const run = find(out, 'service-declared', 'service:api').find(
    (e) => e.location.path === 'infra/gcp/main.tf',
  );
  t.like(run?.attributes, { cloud: 'google', engine: 'cloud-run' });
  const img = find(out, 'image-reference', 'service:api').find(
    (e) => e.location.path === 'infra/gcp/main.tf',
  );
  t.is(img?.object_key, 'image:us-docker.pkg.dev-acme-api-api');
  t.is(img?.location.start_line, 27);
  const refs = find(out, 'resource-reference', 'service:api').filter(
    (e) => e.location.path === 'infra/gcp/main.tf',
  );
  t.deepEqual(refs.map((e) => e.object_key).sort(), ['datastore:orders-pg', 'queue:orders-topic']);
  const iam = one(t, out, 'security-configured', 'service:api');
  t.like(iam.attributes, { security: { publicly_accessible: true } });
});

test('terraform/azure: PostgreSQL flexible server, Redis without TLS, Service Bus', async (t) => {
  const out = await analyzed('terraform');
  const pg = one(t, out, 'datastore-declared', 'datastore:acme-pg');
  t.like(pg.attributes, {
    cloud: 'azurerm',
    engine: 'postgres',
    engine_version: '16',
    security: { publicly_accessible: true },
  });
  t.deepEqual((pg.attributes.security as any).unresolved, undefined);
  const rg = one(
    t,
    out,
    'resource-reference',
    'datastore:acme-pg',
    'resource:azurerm-resource-group.rg',
  );
  t.false(rg.attributes.to_declared);
  const redis = one(t, out, 'datastore-declared', 'datastore:acme-cache');
  t.like(redis.attributes, {
    engine: 'redis',
    security: { tls_enforced: false, min_tls_version: '1.0' },
  });
  cites(t, redis, 'infra/azure/main.tf', 12, 19);
  one(t, out, 'queue-declared', 'queue:acme-bus');
  one(t, out, 'resource-reference', 'queue:orders', 'queue:acme-bus');
  t.is(
    find(out, 'literal-secret', 'datastore:acme-pg').length,
    0,
    'var.pg_password is not a literal',
  );
});

test('terraform: unparseable HCL is a gap, never an exception', async (t) => {
  const out = await analyzed();
  const gap = out.gaps.find((g) => g.path === 'infra/bad/main.tf');
  t.is(gap?.reason, 'terraform_parse_error');
  t.truthy(gap?.message);
  t.false(out.evidence.some((e) => e.location.path === 'infra/bad/main.tf'));
});

// ---------------------------------------------------------------------------------------------
// Dockerfiles

test('dockerfile: stages, pinned base, remote ADD, EXPOSE and root user', async (t) => {
  const out = await analyzed('dockerfile');
  const d = one(t, out, 'dockerfile-declared', 'service:cartservice');
  t.is(d.provider, 'dockerfile');
  t.like(d.attributes, {
    context_dir: 'src/cartservice',
    runs_as_root: true,
    user: null,
    healthcheck: false,
    exposed_ports: ['7070'],
    remote_adds: 1,
  });
  cites(t, d, 'src/cartservice/Dockerfile', 8, 12);
  const bases = find(out, 'image-reference', 'service:cartservice').filter(
    (e) => e.provider === 'dockerfile',
  );
  t.deepEqual(
    bases.map((e) => [e.object_key, e.attributes.tag, e.attributes.pinned, e.location.start_line]),
    [
      ['image:mcr.microsoft.com-dotnet-sdk', '8.0', false, 3],
      ['image:mcr.microsoft.com-dotnet-runtime-deps', '8.0', true, 8],
    ],
  );
  const root = one(t, out, 'runs-as-root', 'service:cartservice');
  t.like(root.attributes, { reason: 'no USER instruction' });
  const port = one(t, out, 'port-exposed', 'service:cartservice');
  cites(t, port, 'src/cartservice/Dockerfile', 11, 11, 'EXPOSE');
  t.like(one(t, out, 'remote-add', 'service:cartservice').attributes, { checksum: false });
});

test('dockerfile: at the repository root the final stage names the service', async (t) => {
  const out = await analyzed('dockerfile');
  const d = one(t, out, 'dockerfile-declared', 'service:app');
  t.like(d.attributes, {
    context_dir: '',
    user: 'node',
    runs_as_root: false,
    healthcheck: true,
    exposed_ports: ['3000/tcp'],
  });
  one(t, out, 'user-declared', 'service:app');
  cites(t, one(t, out, 'healthcheck-declared', 'service:app'), 'Dockerfile', 6, 6, 'HEALTHCHECK');
  t.is(find(out, 'runs-as-root', 'service:app').length, 0);
});

// ---------------------------------------------------------------------------------------------
// Robustness

test('bad input never throws: empty, garbage and odd shapes produce gaps or nothing', async (t) => {
  // A compose file read to nothing is said (issue 23: a silent empty read must be impossible).
  const out = await analyzeCloud([
    { path: 'docker-compose.yml', text: '' },
    { path: 'compose.yaml', text: 'services: [1, 2]\n' },
    { path: 'a/docker-compose.yml', text: 'services:\n  x: *nope\n' },
    { path: 'k.yaml', text: 'apiVersion: v1\nkind: List\nitems: 3\n' },
    { path: 'm.tf', text: '' },
    { path: 'Dockerfile', text: '# nothing\n' },
    { path: 'c/Chart.yaml', text: ': : :\n' },
    { path: 'kustomization.yaml', text: '- a\n- b\n' },
  ]);
  t.deepEqual(out.evidence, []);
  t.deepEqual(
    out.gaps.map((g) => [g.path, g.reason]),
    [
      ['Dockerfile', 'dockerfile_no_from'],
      ['a/docker-compose.yml', 'yaml_parse_error'],
      ['c/Chart.yaml', 'yaml_parse_error'],
      ['compose.yaml', 'compose_invalid'],
      ['docker-compose.yml', 'compose_empty'],
    ],
  );
});

// ---------------------------------------------------------------------------------------------
// Edge cases, each with its own small input

test('helpers: secret names, hosts in values, image references', (t) => {
  for (const n of [
    'POSTGRES_PASSWORD',
    'API_KEY',
    'authToken',
    'client_secret',
    'AWS_SECRET_ACCESS_KEY',
    'DB_PASS',
  ]) {
    t.true(isSecretName(n), n);
  }
  for (const n of [
    'POSTGRES_PASSWORD_FILE',
    'hash_key',
    'CACHE_KEY',
    'PUBLIC_KEY',
    'SECRET_NAME',
    'TOKEN_URL',
    'kms_key_id',
    'LOG_LEVEL',
  ]) {
    t.false(isSecretName(n), n);
  }
  const hosts = (name: string, value: string) =>
    extractHosts(name, value).map((h) => `${h.host}:${h.port ?? ''}`);
  t.deepEqual(hosts('X', 'postgres://u:p@db:5432/app'), ['db:5432']);
  t.deepEqual(hosts('X', 'mongodb://m1:27017,m2:27017/db?replicaSet=rs'), ['m1:27017', 'm2:27017']);
  t.deepEqual(hosts('X', 'kafka:9092,kafka2:9092'), ['kafka:9092', 'kafka2:9092']);
  t.deepEqual(hosts('X', 'Host=pg;Port=5432;Password=x'), ['pg:']);
  t.deepEqual(hosts('X', 'jdbc:postgresql://orders-db:5432/orders'), ['orders-db:5432']);
  t.deepEqual(hosts('REDIS_HOST', 'redis'), ['redis:']);
  t.deepEqual(hosts('GREETING', 'redis'), []);
  t.deepEqual(hosts('TIME', '12:30'), []);
  t.deepEqual(hosts('LISTEN_ADDR', '0.0.0.0:8080'), []);
  t.deepEqual(hosts('DB_URL', 'postgres://${DB_HOST}:5432/x'), []);
  t.like(parseImageRef('docker.io/library/redis:7@sha256:' + HEX64), {
    repo: 'redis',
    tag: '7',
    pinned: true,
  });
  t.like(parseImageRef('localhost:5000/team/api'), {
    repo: 'localhost:5000/team/api',
    tag: null,
    pinned: false,
  });
  t.like(parseImageRef('${REG:-ghcr.io}/acme/api:${TAG:-1.0}'), {
    repo: 'ghcr.io/acme/api',
    tag: '1.0',
  });
});

test('compose: merge keys cite the anchor, secret-looking values are caught by pattern', async (t) => {
  const text = `x-env: &env
  PAYMENT_KEY: sk_live_abcdEFGH12345678
  ORDERS_URL: http://orders:8080
services:
  web:
    image: acme/web:1
    environment:
      <<: *env
      USE_TOKEN: "true"
  orders:
    image: acme/orders:1
`;
  const out = await analyzeCloud([{ path: 'docker-compose.yml', text }]);
  const ref = one(t, out, 'env-reference', 'service:web', 'service:orders');
  t.is(ref.location.start_line, 3);
  const secret = one(t, out, 'literal-secret', 'service:web');
  t.deepEqual(secret.attributes, {
    variable: 'PAYMENT_KEY',
    source: 'environment',
    detected_by: 'value-pattern',
  });
  t.is(secret.location.start_line, 2);
  t.false(JSON.stringify(out).includes('sk_live_abcdEFGH12345678'));
});

test('kubernetes: CronJob, init containers, envFrom, NodePort and legacy Ingress backend', async (t) => {
  const text = `apiVersion: batch/v1
kind: CronJob
metadata: { name: nightly }
spec:
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
            - name: wait
              image: busybox
          containers:
            - name: job
              image: acme/job:1
              envFrom:
                - configMapRef: { name: job-cfg }
                - secretRef: { name: job-secret }
              env:
                - name: API_URL
                  value: http://api.default:80
                - name: PAYMENTS
                  value: https://api.stripe.com/v1
---
apiVersion: v1
kind: Service
metadata: { name: api }
spec:
  type: NodePort
  selector: { app: api }
  ports: [{ port: 80, nodePort: 30080 }]
---
apiVersion: networking.k8s.io/v1beta1
kind: Ingress
metadata: { name: legacy }
spec:
  backend: { serviceName: api, servicePort: 80 }
`;
  const out = await analyzeCloud([{ path: 'k8s/cron.yaml', text }]);
  const job = one(t, out, 'workload-declared', 'service:nightly');
  t.like(job.attributes, { kind: 'CronJob', replicas: null });
  t.like((job.attributes.init_containers as any[])[0], { name: 'wait', repo: 'busybox' });
  t.like(one(t, out, 'image-reference', 'service:nightly', 'image:busybox').attributes, {
    init: true,
    latest: true,
  });
  t.is(one(t, out, 'env-reference', 'service:nightly', 'config:job-cfg').location.start_line, 16);
  t.is(
    one(t, out, 'env-reference', 'service:nightly', 'secret:job-secret').relationship_kind,
    'reads_secret',
  );
  t.like(one(t, out, 'env-reference', 'service:nightly', 'service:api').attributes, {
    host: 'api.default',
    resolution: 'kubernetes-service',
  });
  one(t, out, 'env-reference', 'service:nightly', 'external:api.stripe.com');
  t.like(one(t, out, 'service-exposed', 'service:api').attributes, {
    type: 'NodePort',
    public: true,
    selected_workload: null,
  });
  const route = one(t, out, 'ingress-route', 'ingress:legacy', 'service:api');
  t.like(route.attributes, { host: null, port: 80, tls: false });
  t.deepEqual([route.location.start_line, route.location.end_line], [36, 36]);
});

test('terraform: block lines survive comments, heredocs, template directives; rules and companions attach to parents', async (t) => {
  const text = `locals {
  x = "\${jsonencode({ a = { b = 1 } })}"
  tpl = <<-EOT
    %{ for x in var.l }{ "a": "\${x}" }%{ endfor }
    }}}}
  EOT
}
/* block comment { */
resource "aws_security_group_rule" "pg" {
  type              = "ingress"
  from_port         = 5432
  to_port           = 5432
  protocol          = "tcp"
  cidr_blocks       = ["0.0.0.0/0"] # open {
  security_group_id = aws_security_group.db.id
}
resource "aws_security_group" "db" {
  name = "db-sg"
}
resource "aws_dynamodb_table" "sessions" {
  name     = "sessions"
  hash_key = "SessionId"
}
resource "google_compute_firewall" "ssh" {
  name          = "allow-ssh"
  source_ranges = ["0.0.0.0/0"]
  allow {
    protocol = "tcp"
    ports    = ["22"]
  }
}
resource "azurerm_network_security_group" "nsg" {
  name = "web-nsg"
  security_rule {
    name                   = "rdp"
    direction              = "Inbound"
    access                 = "Allow"
    protocol               = "Tcp"
    source_address_prefix  = "*"
    destination_port_range = "3389"
  }
}
resource "aws_eks_cluster" "main" {
  name   = "main"
  vpc_id = module.network.vpc_id
  role   = data.aws_iam_role.eks.arn
}
module "network" {
  source = "./modules/network"
}
`;
  const out = await analyzeCloud([{ path: 'infra/main.tf', text }]);
  const sg = find(out, 'network-declared', 'network:db-sg');
  t.deepEqual(
    sg.map((e) => [e.attributes.resource_type, e.location.start_line, e.location.end_line]),
    [
      ['aws_security_group_rule', 9, 16],
      ['aws_security_group', 17, 19],
    ],
  );
  t.deepEqual((sg[0]!.attributes.security as any).public_ingress, [
    { from_port: 5432, to_port: 5432, protocol: 'tcp' },
  ]);
  const ddb = one(t, out, 'datastore-declared', 'datastore:sessions');
  t.like(ddb.attributes, {
    engine: 'dynamodb',
    security: { encryption_at_rest: true, point_in_time_recovery: false },
  });
  t.is(find(out, 'literal-secret', 'datastore:sessions').length, 0, 'hash_key is not a secret');
  const fw = one(t, out, 'network-declared', 'network:allow-ssh');
  t.deepEqual((fw.attributes.security as any).public_ingress, [{ protocol: 'tcp', ports: ['22'] }]);
  t.deepEqual([fw.location.start_line, fw.location.end_line], [24, 31]);
  t.like(one(t, out, 'network-declared', 'network:web-nsg').attributes, {
    cloud: 'azurerm',
    security: { open_to_world: true },
  });
  const mod = one(t, out, 'resource-reference', 'cluster:main', 'module:network');
  t.is(mod.location.start_line, 45);
  t.is(find(out, 'resource-reference', 'cluster:main').length, 1, 'data sources are not resources');
  t.deepEqual(out.gaps, [], 'local modules are not gaps');
});

test('dockerfile: heredoc RUN, USER inherited from an earlier stage, HEALTHCHECK NONE, redacted remote ADD', async (t) => {
  const text = `FROM python:3.12-slim AS base
RUN <<EOF
apt-get update
echo "FROM evil"
EOF
USER 0
FROM base
HEALTHCHECK NONE
ADD --checksum=sha256:abc https://user:tok-Dock-9@example.com/x.tgz?sig=abc123 /x
`;
  const out = await analyzeCloud([{ path: 'svc/worker/Dockerfile.prod', text }]);
  const d = one(t, out, 'dockerfile-declared', 'service:worker');
  t.like(d.attributes, {
    base_image: 'python:3.12-slim',
    base_stage: 'base',
    user: '0',
    runs_as_root: true,
    healthcheck: false,
  });
  t.is(
    find(out, 'image-reference', 'service:worker').length,
    1,
    'the heredoc body is not an instruction',
  );
  t.is(one(t, out, 'runs-as-root', 'service:worker').location.start_line, 6);
  t.like(one(t, out, 'healthcheck-declared', 'service:worker').attributes, { disabled: true });
  const add = one(t, out, 'remote-add', 'service:worker');
  t.like(add.attributes, { url: 'https://***@example.com/x.tgz', checksum: true });
  t.false(JSON.stringify(out).includes('tok-Dock-9'));
});

test('env: a variable naming a bucket or queue by its plain name references it; other values do not', (t) => {
  const none = () => null;
  const bucket = envReferences('REPORT_BUCKET', 'report-archive', none);
  t.deepEqual(
    bucket.map((r) => [r.kind, r.relationship, r.object, r.attributes.resolution]),
    [['env-reference', 'connects_to', 'bucket:report-archive', 'bucket-name']],
  );
  t.is(envReferences('S3_BUCKET_NAME', 'acme.assets', none)[0]?.object, 'bucket:acme.assets');
  t.is(envReferences('ORDERS_QUEUE', 'order-events', none)[0]?.object, 'queue:order-events');
  t.is(envReferences('EVENTS_TOPIC_NAME', 'orders', none)[0]?.object, 'queue:orders');
  // Not a plain name, not a bucket/queue variable, or a number: no reference.
  t.deepEqual(envReferences('REPORT_BUCKET', '${BUCKET}', none), []);
  t.deepEqual(envReferences('QUEUE_SIZE_LIMIT', '100', none), []);
  t.deepEqual(envReferences('ORDERS_QUEUE', '100', none), []);
  t.deepEqual(envReferences('BUCKETS', 'a-b', none), []);
  // A queue URL still resolves by host, as before.
  t.is(
    envReferences('ORDERS_QUEUE', 'amqp://order-events:5672', none)[0]?.object,
    'external:order-events',
  );
});

test('compose: a single-label host no compose service declares is an internal service, not external', async (t) => {
  const out = await analyzeCloud([
    {
      path: 'docker-compose.yml',
      text: [
        'services:',
        '  payment:',
        '    image: acme/payment:1.0',
        '    environment:',
        '      FRAUD_URL: http://fraud-check:8090',
        '      PSP_URL: https://api.psp.example.net/v1',
        '',
      ].join('\n'),
    },
  ]);
  const refs = out.evidence.filter((e) => e.evidence_kind === 'env-reference');
  t.deepEqual(
    refs.map((e) => [e.object_key, e.attributes.resolution, e.location.start_line]),
    [
      ['service:fraud-check', 'unresolved-short-name', 5],
      ['external:api.psp.example.net', 'external', 6],
    ],
  );
});
