/**
 * Label-routed proxies and stores a vendor container depends on (issue 23, session 12;
 * docs/decisions.md, "Label-routed proxies" and "A store a vendor container depends on"). File
 * sets are built in memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { analyzeFiles, connections } from './helpers/pipeline';
import type { SourceFile } from '../analysis/evidence';

const APP = `services:
  app:
    image: acme/app:1
    ports:
      - "8000:8000"
`;

test('caddy-gen routes to the service an overlay file labels with virtual.host', async (t) => {
  const overlay = `services:
  gateway:
    image: "wemakeservices/caddy-gen:latest"
    volumes:
      - /var/run/docker.sock:/tmp/docker.sock:ro
    ports:
      - "443:443"
  app:
    labels:
      virtual.host: "example.com"
      virtual.port: "8000"
`;
  const files: SourceFile[] = [
    { path: 'docker-compose.yml', text: APP },
    { path: 'proxy/docker-compose.gateway.yml', text: overlay },
  ];
  const { graph, evidence } = await analyzeFiles(files);
  t.true(connections(graph).includes('service:gateway -> service:app'));
  const route = evidence.find((e) => e.evidence_kind === 'proxy-route')!;
  t.is(route.location.path, 'proxy/docker-compose.gateway.yml');
  t.is(route.attributes.port, 8000);
});

test('labels an overlay adds to a service of the main file count for a proxy the main file runs', async (t) => {
  const main = `services:
  app:
    image: acme/app:1
  gen:
    image: nginxproxy/docker-gen:0.10
    volumes:
      - /var/run/docker.sock:/tmp/docker.sock:ro
`;
  const overlay = `services:
  app:
    labels:
      - virtual.host=example.com
`;
  const { graph } = await analyzeFiles([
    { path: 'compose.yaml', text: main },
    { path: 'deploy/compose.labels.yaml', text: overlay },
  ]);
  t.true(connections(graph).includes('service:gen -> service:app'));
});

test('nginx-proxy routes to the containers whose environment sets VIRTUAL_HOST', async (t) => {
  const compose = `services:
  nginx-proxy:
    image: nginxproxy/nginx-proxy:1.5
    ports: ["80:80"]
    volumes:
      - /var/run/docker.sock:/tmp/docker.sock:ro
  web:
    image: acme/web:1
    environment:
      - VIRTUAL_HOST=shop.example.com
      - VIRTUAL_PORT=3000
  api:
    image: acme/api:1
    environment:
      VIRTUAL_HOST: api.example.com
  worker:
    image: acme/worker:1
`;
  const { graph } = await analyzeFiles([{ path: 'docker-compose.yml', text: compose }]);
  const got = connections(graph);
  t.true(got.includes('service:nginx-proxy -> service:web'));
  t.true(got.includes('service:nginx-proxy -> service:api'));
  t.false(got.includes('service:nginx-proxy -> service:worker'));
});

test('caddy-docker-proxy routes to {{upstreams}} of the labelled container and to services reverse_proxy names', async (t) => {
  const compose = `services:
  caddy:
    image: lucaslorentz/caddy-docker-proxy:2.9
    ports: ["80:80", "443:443"]
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock
  whoami:
    image: acme/whoami:1
    labels:
      caddy: whoami.example.com
      caddy.reverse_proxy: "{{upstreams 8080}}"
  docs:
    image: acme/docs:1
    labels:
      caddy_1: docs.example.com
      caddy_1.reverse_proxy: "api:9000"
  api:
    image: acme/api:1
  other:
    image: acme/other:1
    labels:
      caddy.reverse_proxy: "{{upstreams 80}}"
`;
  const { graph } = await analyzeFiles([{ path: 'docker-compose.yml', text: compose }]);
  const got = connections(graph);
  t.true(got.includes('service:caddy -> service:whoami'));
  t.true(got.includes('service:caddy -> service:api'));
  t.false(got.includes('service:caddy -> service:docs'));
  // A reverse_proxy without its site label is no route.
  t.false(got.includes('service:caddy -> service:other'));
});

test('a proxy built by the project that mounts the docker socket is found by its name', async (t) => {
  const compose = `services:
  proxy:
    build: ./proxy
    volumes:
      - /var/run/docker.sock:/tmp/docker.sock:ro
  app:
    image: acme/app:1
    labels:
      virtual.host: example.com
  agent:
    image: acme/monitor-agent:1
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock
`;
  const { graph } = await analyzeFiles([
    { path: 'docker-compose.yml', text: compose },
    { path: 'proxy/Dockerfile', text: 'FROM nginx:1.27\n' },
  ]);
  const got = connections(graph);
  t.true(got.includes('service:proxy -> service:app'));
  t.false(got.some((c) => c.startsWith('service:agent ')));
});

test('labels without a proxy in the project, or with two, draw nothing', async (t) => {
  const alone = `services:
  app:
    image: acme/app:1
    environment:
      VIRTUAL_HOST: example.com
`;
  t.deepEqual(
    connections((await analyzeFiles([{ path: 'docker-compose.yml', text: alone }])).graph),
    [],
  );
  const two = `services:
  a:
    image: jwilder/nginx-proxy
  b:
    image: nginxproxy/nginx-proxy
  app:
    image: acme/app:1
    environment:
      VIRTUAL_HOST: example.com
`;
  const got = connections((await analyzeFiles([{ path: 'docker-compose.yml', text: two }])).graph);
  t.false(got.some((c) => c.endsWith('-> service:app')));
});

// ---------------------------------------------------------------------------------------------
// A store a vendor container depends on

const VENDOR = `services:
  mail:
    image: bytemark/smtp
  db:
    image: postgres:16
  events:
    image: clickhouse/clickhouse-server:24
  app:
    image: acme/analytics:2
    depends_on:
      - db
      - events
      - mail
`;

test('a vendor container depending on stores connects to each, weakly, saying why', async (t) => {
  const { graph } = await analyzeFiles([{ path: 'docker-compose.yml', text: VENDOR }]);
  const got = connections(graph);
  for (const to of ['datastore:db', 'datastore:events', 'datastore:mail']) {
    t.true(got.includes(`service:app -> ${to}`), to);
    const rel = graph.relationships.find(
      (r) => r.kind === 'connects_to' && r.source_key === 'service:app' && r.target_key === to,
    )!;
    t.true(Number(rel.confidence) < 0.5);
    t.is(rel.attributes.basis, 'depends on, address not in repository');
  }
});

test('a store whose address the compose files give one dependant is not inferred for the others', async (t) => {
  // The files pass the database's address to its users (api); worker and sidecar depend on it
  // for start-up order only: no address of theirs, so no edge.
  const compose = `services:
  db:
    image: postgres:16
  api:
    image: acme/api:1
    environment:
      DB_HOST: db
    depends_on: [db]
  worker:
    image: acme/worker:1
    depends_on: [db, api]
  sidecar:
    image: acme/sidecar:1
    depends_on: [db]
`;
  const { graph } = await analyzeFiles([{ path: 'docker-compose.yml', text: compose }]);
  const got = connections(graph);
  t.true(got.includes('service:api -> datastore:db'));
  t.false(got.includes('service:worker -> datastore:db'));
  t.false(got.includes('service:sidecar -> datastore:db'));
});

test('a dependant whose program, settings or address of that engine are in the repository gets no inferred edge', async (t) => {
  const compose = `services:
  db:
    image: postgres:16
  other-db:
    image: postgres:16
  cache:
    image: redis:7
  built:
    build: ./built
    depends_on: [db]
  configured:
    image: acme/tool:1
    volumes:
      - ./tool/config.yml:/etc/tool.yml
    depends_on: [db]
  wired:
    image: acme/wired:1
    environment:
      DATABASE_URL: postgres://other-db:5432/app
    depends_on: [db]
  replica:
    image: postgres:16
    depends_on: [db]
  both:
    image: acme/both:1
    depends_on: [db, other-db, cache]
`;
  const { graph } = await analyzeFiles([
    { path: 'docker-compose.yml', text: compose },
    { path: 'built/Dockerfile', text: 'FROM python:3.12\nCOPY . /app\n' },
    { path: 'tool/config.yml', text: 'log_level: info\n' },
  ]);
  const got = connections(graph);
  for (const from of ['built', 'configured', 'replica'])
    t.false(got.includes(`service:${from} -> datastore:db`), from);
  t.false(got.includes('service:wired -> datastore:db'));
  t.true(got.includes('service:wired -> datastore:other-db'));
  // Two stores of one engine: which one is unknown; the one redis is drawn.
  t.false(got.includes('service:both -> datastore:db'));
  t.false(got.includes('service:both -> datastore:other-db'));
  t.true(got.includes('service:both -> datastore:cache'));
});
