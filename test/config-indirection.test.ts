/**
 * Configuration indirection (issue 12, capability 3): addresses a service gets through a
 * ConfigMap or Secret (`envFrom`, `configMapKeyRef`, `secretKeyRef`), a compose `env_file`, a
 * Dockerfile `ENV` default or a Spring `${X:default}` placeholder, and the precision rule for
 * addresses a service merely receives (docs/decisions.md, "Configuration indirection"). File sets
 * are built in memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { analyzeFiles } from './helpers/pipeline';
import type { SourceFile } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';

const pipeline = async (files: SourceFile[]) => {
  const { graph, evidence } = await analyzeFiles(files);
  return { graph, ev: evidence };
};

const edges = (g: Graph) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to')
    .map((r) => `${r.source_key}->${r.target_key}`)
    .sort();

const edge = (g: Graph, from: string, to: string) =>
  g.relationships.find(
    (r) => r.kind === 'connects_to' && r.source_key === `service:${from}` && r.target_key === to,
  );

function deployment(name: string, image: string, container: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      containers:
        - name: main
          image: ${image}
${container}---
apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  selector: { app: ${name} }
  ports:
    - port: 8080
---
`;
}

const ENV_FROM_PEERS = `          envFrom:
            - configMapRef:
                name: peers
`;

const PEERS = `apiVersion: v1
kind: ConfigMap
metadata:
  name: peers
data:
  FRONTEND_URL: http://frontend:8080
  ORDERS_ADDR: orders:8080
  PAYMENTS_ADDR: payments:8080
  LOG_LEVEL: info
`;

const pythonUnit = (name: string, code: string): SourceFile[] => [
  { path: `${name}/requirements.txt`, text: 'flask\n' },
  { path: `${name}/app.py`, text: code },
];

test('kubernetes envFrom: a shared ConfigMap of peers yields the calls the code reads, not every peer', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'k8s/apps.yaml',
      text:
        deployment('frontend', 'example/frontend:1.0', ENV_FROM_PEERS) +
        deployment('orders', 'example/orders:1.0', ENV_FROM_PEERS) +
        deployment('payments', 'example/payments:1.0', ENV_FROM_PEERS) +
        deployment('mailer', 'vendor/mailer:2.1', ENV_FROM_PEERS) +
        PEERS,
    },
    ...pythonUnit(
      'frontend',
      'import os\norders = os.environ["ORDERS_ADDR"]\npay = os.environ.get("PAYMENTS_ADDR")\n',
    ),
    ...pythonUnit('orders', 'import os\npay = os.environ["PAYMENTS_ADDR"]\n'),
    // Code present, reading no peer address: it receives three and uses none.
    ...pythonUnit('payments', 'import os\nport = os.environ.get("PORT", "8080")\n'),
  ]);
  t.deepEqual(edges(graph), [
    'service:frontend->service:orders',
    'service:frontend->service:payments',
    // mailer is an image only: no code to tell, so the configuration edges stand.
    'service:mailer->service:frontend',
    'service:mailer->service:orders',
    'service:mailer->service:payments',
    'service:orders->service:payments',
  ]);
  const read = edge(graph, 'frontend', 'service:orders')!;
  const received = edge(graph, 'mailer', 'service:orders')!;
  t.deepEqual(read.attributes.variables, ['ORDERS_ADDR']);
  t.true(read.sources.includes('code') && read.sources.includes('cloud'));
  t.is(received.attributes.received_only, undefined, 'no code: configuration strength');
  t.is(received.confidence, '0.50');
  t.true(Number(read.confidence) > Number(received.confidence));
});

test('kubernetes: configMapKeyRef, secretKeyRef (base64 data, stringData), envFrom secretRef with prefix; env wins over envFrom', async (t) => {
  const container = `          env:
            - name: ORDERS_ADDR
              valueFrom:
                configMapKeyRef: { name: wiring, key: orders }
            - name: CACHE_URL
              valueFrom:
                secretKeyRef: { name: creds, key: cache }
            - name: STOCK_HOST
              value: stock
          envFrom:
            - secretRef:
                name: more
              prefix: APP_
            - configMapRef:
                name: wiring
`;
  const { ev } = await pipeline([
    {
      path: 'deploy/app.yaml',
      text:
        deployment('web', 'vendor/web:1', container) +
        deployment('orders', 'vendor/orders:1', '') +
        deployment('cache', 'redis:7', '') +
        deployment('stock', 'vendor/stock:1', '') +
        deployment('audit', 'vendor/audit:1', '') +
        `apiVersion: v1
kind: ConfigMap
metadata:
  name: wiring
data:
  orders: orders:8080
  STOCK_HOST: nowhere-else
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
data:
  cache: ${Buffer.from('redis://:hunter2pw@cache:6379/0').toString('base64')}
---
apiVersion: v1
kind: Secret
metadata:
  name: more
stringData:
  AUDIT_URL: http://audit:8080/v1
`,
    },
  ]);
  const refs = ev
    .filter((e) => e.subject_key === 'service:web' && e.relationship_kind === 'connects_to')
    .map((e) => `${String(e.attributes.variable)}->${e.object_key} ${String(e.attributes.from)}`)
    .sort();
  t.deepEqual(refs, [
    'APP_AUDIT_URL->service:audit envFrom.secretRef',
    'CACHE_URL->service:cache secretKeyRef',
    'ORDERS_ADDR->service:orders configMapKeyRef',
    // The env entry STOCK_HOST wins over the map's STOCK_HOST.
    'STOCK_HOST->service:stock undefined',
    // Every key of a map loaded with envFrom is a variable, whatever its name.
    'orders->service:orders envFrom.configMapRef',
  ]);
  t.false(JSON.stringify(ev).includes('hunter2pw'), 'a secret value never leaves the analyzer');
  const fromSecret = ev.filter(
    (e) => e.attributes.secret !== undefined && e.relationship_kind === 'connects_to',
  );
  t.true(fromSecret.length >= 2);
  for (const e of fromSecret) {
    t.is(e.attributes.value, null, 'a value read from a Secret is not shown');
    t.false(e.summary.includes('audit:8080') || e.summary.includes('cache:6379'), e.summary);
  }
  const bulk = ev.find((e) => e.attributes.variable === 'APP_AUDIT_URL')!;
  t.is(bulk.attributes.received, 'bulk');
  t.is(bulk.location.path, 'deploy/app.yaml');
});

test('kubernetes: a map is looked up in the workload namespace first', async (t) => {
  const cm = (ns: string, value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: wiring
  namespace: ${ns}
data:
  ORDERS_ADDR: ${value}
---
`;
  const web = deployment('web', 'vendor/web:1', ENV_FROM_PEERS.replace('peers', 'wiring')).replace(
    'name: web\nspec',
    'name: web\n  namespace: prod\nspec',
  );
  const { ev } = await pipeline([
    { path: 'k8s/a.yaml', text: cm('staging', 'orders-staging:8080') + cm('prod', 'orders:8080') },
    { path: 'k8s/b.yaml', text: web },
  ]);
  const refs = ev
    .filter((e) => e.subject_key === 'service:web' && e.relationship_kind === 'connects_to')
    .map((e) => e.object_key);
  t.deepEqual(refs, ['service:orders']);
});

test('compose env_file: a file or a list, relative to the compose file; environment wins', async (t) => {
  const { graph, ev } = await pipeline([
    {
      path: 'deploy/docker-compose.yml',
      text: `services:
  web:
    image: vendor/web:1
    env_file: ./web.env
  worker:
    image: vendor/worker:1
    env_file:
      - ../config/common.env
      - path: ./worker.env
        required: false
    environment:
      QUEUE_HOST: broker
  api:
    image: vendor/api:1
  broker:
    image: rabbitmq:3
  other:
    image: rabbitmq:3
`,
    },
    { path: 'deploy/web.env', text: 'API_URL=http://api:8080\n# comment\nDEBUG=1\n' },
    { path: 'config/common.env', text: 'API_URL=http://api:8080\nQUEUE_HOST=other\n' },
  ]);
  t.deepEqual(edges(graph), [
    'service:web->service:api',
    'service:worker->queue:broker',
    'service:worker->service:api',
  ]);
  const fromFile = ev.find(
    (e) => e.subject_key === 'service:web' && e.object_key === 'service:api',
  )!;
  t.is(fromFile.attributes.env_file, 'deploy/web.env');
  t.is(fromFile.attributes.received, 'bulk');
});

test('compose env_file shared by services whose code is present: only the addresses each code reads', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'docker-compose.yml',
      text: `services:
  web:
    build: ./web
    env_file: shared.env
  api:
    build: ./api
    env_file: shared.env
  db:
    image: postgres:16
`,
    },
    { path: 'shared.env', text: 'API_URL=http://api:8080\nDB_HOST=db\nWEB_URL=http://web:80\n' },
    ...pythonUnit('web', 'import os\napi = os.environ["API_URL"]\n'),
    ...pythonUnit('api', 'import os\ndb = os.environ["DB_HOST"]\n'),
  ]);
  t.deepEqual(edges(graph), ['service:api->datastore:db', 'service:web->service:api']);
});

test('precision rule: an address set for a service whose code reads others but never it is received-only, at lower confidence', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'docker-compose.yml',
      text: `services:
  web:
    build: ./web
    environment:
      API_URL: http://api:8080
      LEGACY_URL: http://legacy:9000
  api:
    image: vendor/api:1
  legacy:
    image: vendor/legacy:1
`,
    },
    ...pythonUnit('web', 'import os\napi = os.environ["API_URL"]\n'),
  ]);
  t.deepEqual(edges(graph), ['service:web->service:api', 'service:web->service:legacy']);
  const read = edge(graph, 'web', 'service:api')!;
  const received = edge(graph, 'web', 'service:legacy')!;
  t.is(read.attributes.received_only, undefined);
  t.is(received.attributes.received_only, true);
  t.is(read.confidence, '0.80');
  t.is(received.confidence, '0.30');
});

test('Dockerfile ENV: the default in effect unless the deployment sets the variable; it overrides a code default', async (t) => {
  const base = (compose: string): SourceFile[] => [
    { path: 'docker-compose.yml', text: compose },
    {
      path: 'worker/Dockerfile',
      text: 'FROM python:3.12-slim\nENV CACHE_HOST=cache LOG_LEVEL=info\nCMD ["python", "app.py"]\n',
    },
    // The code's own default names other-cache: the image's ENV is in effect over it.
    ...pythonUnit('worker', 'import os\nhost = os.getenv("CACHE_HOST", "other-cache")\n'),
  ];
  const services = `  cache:
    image: redis:7
  other-cache:
    image: redis:7
`;
  const plain = await pipeline(base(`services:\n  worker:\n    build: ./worker\n${services}`));
  t.deepEqual(edges(plain.graph), ['service:worker->datastore:cache']);
  const overridden = await pipeline(
    base(
      `services:\n  worker:\n    build: ./worker\n    environment:\n      CACHE_HOST: other-cache\n${services}`,
    ),
  );
  t.deepEqual(edges(overridden.graph), ['service:worker->datastore:other-cache']);
  const env = plain.ev.find((e) => e.evidence_kind === 'env-default')!;
  t.is(env.attributes.variable, 'CACHE_HOST');
  t.is(env.location.path, 'worker/Dockerfile');
});

test('Spring ${X:default} placeholders in application properties and yml: the default is in effect unless configured', async (t) => {
  const unit = (file: SourceFile): SourceFile[] => [
    {
      path: 'orders/pom.xml',
      text: '<project><artifactId>orders</artifactId><dependencies><dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-web</artifactId></dependency></dependencies></project>',
    },
    file,
  ];
  const compose = (env: string) =>
    `services:\n  orders:\n    build: ./orders\n${env}  payments:\n    image: vendor/payments:1\n  billing:\n    image: vendor/billing:1\n`;
  const props = {
    path: 'orders/src/main/resources/application.properties',
    text: 'payments.url=${PAYMENTS_URL:http://payments:8080}\n',
  };
  const yml = {
    path: 'orders/src/main/resources/application-prod.yml',
    text: 'payments:\n  url: ${PAYMENTS_URL:http://payments:8080}\n',
  };
  for (const file of [props, yml]) {
    const plain = await pipeline([
      ...unit(file),
      { path: 'docker-compose.yml', text: compose('') },
    ]);
    t.deepEqual(edges(plain.graph), ['service:orders->service:payments'], file.path);
    const set = await pipeline([
      ...unit(file),
      {
        path: 'docker-compose.yml',
        text: compose('    environment:\n      PAYMENTS_URL: http://billing:8080\n'),
      },
    ]);
    t.deepEqual(edges(set.graph), ['service:orders->service:billing'], file.path);
  }
});

test('Helm: an env value that is only {{ .Values.x.y }} is resolved from the chart values.yaml', async (t) => {
  const { ev } = await pipeline([
    { path: 'charts/shop/Chart.yaml', text: 'apiVersion: v2\nname: shop\nversion: 1.0.0\n' },
    {
      path: 'charts/shop/values.yaml',
      text: 'orders:\n  url: http://orders:8080\ncache:\n  host: redis.data.svc.cluster.local\nname: shop\n',
    },
    {
      path: 'charts/shop/templates/deployment.yaml',
      text: [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata:',
        '  name: {{ include "shop.fullname" . }}',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '        - name: shop',
        '          env:',
        '            - name: ORDERS_URL',
        '              value: {{ .Values.orders.url | quote }}',
        '            - name: CACHE_HOST',
        '              value: "{{ .Values.cache.host }}"',
        '            - name: MISSING_URL',
        '              value: {{ .Values.nothing.here }}',
        '            - name: TEMPLATED_URL',
        '              value: {{ include "shop.url" . }}',
      ].join('\n'),
    },
  ]);
  const refs = ev
    .filter((e) => e.provider === 'helm' && e.relationship_kind === 'connects_to')
    .map(
      (e) =>
        `${e.subject_key} ${String(e.attributes.variable)}->${e.object_key} L${e.location.start_line}`,
    )
    .sort();
  t.deepEqual(refs, [
    'service:shop CACHE_HOST->service:redis L13',
    'service:shop ORDERS_URL->service:orders L11',
  ]);
});

test('kustomize configMapGenerator and secretGenerator (literals, envs files) feed envFrom and key references', async (t) => {
  const web = deployment(
    'web',
    'vendor/web:1',
    `          envFrom:
            - configMapRef:
                name: wiring
          env:
            - name: CACHE_URL
              valueFrom:
                secretKeyRef: { name: creds, key: CACHE_URL }
`,
  );
  const { ev } = await pipeline([
    {
      path: 'deploy/base/kustomization.yaml',
      text: `resources:
  - app.yaml
configMapGenerator:
  - name: wiring
    envs:
      - wiring.env
    literals:
      - ORDERS_ADDR=orders:8080
secretGenerator:
  - name: creds
    literals:
      - CACHE_URL=redis://cache:6379
`,
    },
    { path: 'deploy/base/wiring.env', text: 'PAYMENTS_URL=http://payments:8080\n' },
    {
      path: 'deploy/base/app.yaml',
      text:
        web +
        deployment('orders', 'vendor/orders:1', '') +
        deployment('payments', 'vendor/payments:1', '') +
        deployment('cache', 'redis:7', ''),
    },
  ]);
  const refs = ev
    .filter((e) => e.subject_key === 'service:web' && e.relationship_kind === 'connects_to')
    .map((e) => `${String(e.attributes.variable)}->${e.object_key}`)
    .sort();
  t.deepEqual(refs, [
    'CACHE_URL->service:cache',
    'ORDERS_ADDR->service:orders',
    'PAYMENTS_URL->service:payments',
  ]);
});

test('precision rule: a variable the framework binds by name (SPRING_*) counts as read', async (t) => {
  const { graph } = await pipeline([
    {
      path: 'docker-compose.yml',
      text: `services:
  shop:
    build: ./shop
    env_file: common.env
  orders:
    image: vendor/orders:1
  payments:
    image: vendor/payments:1
  db:
    image: postgres:16
`,
    },
    {
      path: 'common.env',
      text: 'SPRING_DATASOURCE_URL=jdbc:postgresql://db:5432/shop\nORDERS_URL=http://orders:8080\nPAYMENTS_URL=http://payments:8080\n',
    },
    {
      path: 'shop/pom.xml',
      text: '<project><artifactId>shop</artifactId><dependencies><dependency><groupId>org.postgresql</groupId><artifactId>postgresql</artifactId></dependency></dependencies></project>',
    },
    {
      path: 'shop/src/main/resources/application.properties',
      text: 'orders.url=${ORDERS_URL}\n',
    },
  ]);
  t.deepEqual(edges(graph), ['service:shop->datastore:db', 'service:shop->service:orders']);
});
