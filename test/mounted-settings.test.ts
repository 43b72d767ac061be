/**
 * Mounted settings (issue 23, session 11; docs/decisions.md, "Mounted settings"): a repository
 * file or folder a compose service is given (a bind mount, a `configs:` file) is that
 * container's configuration. Its addresses are edges of every container reading it, cited at
 * the settings line and at the mount; the unit whose folder holds it makes no entity of its own;
 * and addresses another program reads do not spread. File sets are built in memory and run
 * through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { analyzeFiles, connections, entityKeys, verifiable } from './helpers/pipeline';
import type { SourceFile } from '../analysis/evidence';

/** One image, several processes (different commands), all given ./app as their settings. */
const SHARED_IMAGE_COMPOSE = `x-app: &app
  image: acme-app-local
  build:
    context: ./app
  environment:
    APP_CONF: /etc/app
  volumes:
    - ./app:/etc/app
services:
  web:
    <<: *app
    command: ["run", "web"]
  worker:
    <<: *app
    command: run worker --rpc-host=broker:50051
  cleanup:
    <<: *app
    image: acme-cleanup-local
    command: cleanup --days 30
  broker:
    image: acme/broker:1
  proxy:
    image: acme/proxy:1
    volumes:
      - type: bind
        source: ./proxy
        target: /work/.proxy
  db:
    image: postgres:16
  cache:
    image: redis:7
  memcached:
    image: memcached:1.6
  kafka:
    image: confluentinc/cp-kafka:7.6.0
  smtp:
    image: acme/smtp:1
`;

const SETTINGS_PY = `import os

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "app",
        "HOST": "db",
        "PORT": "",
    }
}

OPTIONS["redis.clusters"] = {
    "default": {"hosts": {0: {"host": "cache", "port": 6379}}}
}

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
        "LOCATION": ["memcached:11211"],
    }
}

KAFKA_OPTIONS = {"bootstrap.servers": "kafka:9092"}
`;

const CONFIG_YML = `mail.host: 'smtp'
system.url-prefix: 'http://web:9000'
`;

const PROXY_CONFIG = `proxy:
  upstream: "http://web:9000/"
processing:
  kafka_config:
    - {name: "bootstrap.servers", value: "kafka:9092"}
  redis: redis://cache:6379
`;

/** The repository's own tooling project at the root (dev dependencies only), like many installers. */
const ROOT_PYPROJECT = `[project]
name = "acme-self-hosted"
version = "0.1.0"
dependencies = []

[dependency-groups]
dev = ["pytest>=8"]
`;

const sharedImageFiles = (): SourceFile[] => [
  { path: 'pyproject.toml', text: ROOT_PYPROJECT },
  { path: 'docker-compose.yml', text: SHARED_IMAGE_COMPOSE },
  { path: 'app/Dockerfile', text: 'ARG BASE\nFROM ${BASE}\nCOPY . /usr/src/app\n' },
  { path: 'app/app.conf.example.py', text: SETTINGS_PY },
  { path: 'app/config.example.yml', text: CONFIG_YML },
  { path: 'proxy/config.example.yml', text: PROXY_CONFIG },
];

test('a settings folder mounted into every process of one image gives each its connections, cited at the settings line and the mount', async (t) => {
  const files = sharedImageFiles();
  const { graph, evidence } = await analyzeFiles(files);
  const got = connections(graph);
  for (const from of ['web', 'worker', 'cleanup']) {
    for (const to of ['datastore:db', 'datastore:cache', 'datastore:memcached', 'queue:kafka'])
      t.true(got.includes(`service:${from} -> ${to}`), `${from} -> ${to}`);
    t.true(got.includes(`service:${from} -> datastore:smtp`), `${from} -> smtp (mail.host)`);
  }
  const rel = graph.relationships.find(
    (r) => r.source_key === 'service:worker' && r.target_key === 'datastore:db',
  )!;
  const cited = rel.evidence_ids.map((id) => evidence.find((e) => e.id === id)!);
  t.true(
    cited.some((e) => e.location.path === 'app/app.conf.example.py' && e.location.start_line === 7),
  );
  t.true(
    cited.some(
      (e) => e.evidence_kind === 'volume-mount' && e.location.path === 'docker-compose.yml',
    ),
  );
  for (const e of cited) t.true(verifiable(files, e));
});

test('the repository project holding only the containers settings is no entity and has no edges', async (t) => {
  const { graph } = await analyzeFiles(sharedImageFiles());
  t.false(entityKeys(graph).includes('service:acme-self-hosted'));
  t.false(connections(graph).some((c) => c.startsWith('service:acme-self-hosted ')));
});

test('an address of one of the containers reading the file is their own, not an edge', async (t) => {
  const got = connections((await analyzeFiles(sharedImageFiles())).graph);
  t.false(got.includes('service:worker -> service:web'));
  t.false(got.includes('service:cleanup -> service:web'));
});

test('a folder mounted into one program only is its configuration: upstream, Kafka list and redis URL', async (t) => {
  const got = connections((await analyzeFiles(sharedImageFiles())).graph);
  t.true(got.includes('service:proxy -> service:web'));
  t.true(got.includes('service:proxy -> queue:kafka'));
  t.true(got.includes('service:proxy -> datastore:cache'));
  // The proxy's settings are no one else's.
  t.false(got.includes('service:web -> service:web'));
  t.is(got.filter((c) => c.endsWith('-> service:web')).length, 1);
});

test('an option of the command naming a service address is a connection', async (t) => {
  const got = connections((await analyzeFiles(sharedImageFiles())).graph);
  t.true(got.includes('service:worker -> service:broker'));
  t.false(got.includes('service:web -> service:broker'));
});

test('a folder shared by containers of different programs that do not name it spreads nothing', async (t) => {
  const compose = `services:
  api:
    image: acme/api:1
    volumes:
      - ./shared:/config
  metrics:
    image: prom/prometheus:v2
    volumes:
      - ./shared:/etc/prometheus
  db:
    image: postgres:16
`;
  const { graph } = await analyzeFiles([
    { path: 'docker-compose.yml', text: compose },
    { path: 'shared/config.yml', text: 'database:\n  url: postgres://db:5432/app\n' },
  ]);
  t.deepEqual(connections(graph), []);
});

test('one file shared by several programs of one image: a setting naming a reader is that reader’s only', async (t) => {
  const compose = `services:
  geo:
    image: acme/hotel:1
    entrypoint: geo
    configs:
      - source: server_config
        target: /config.json
  rate:
    image: acme/hotel:1
    entrypoint: rate
    configs:
      - source: server_config
        target: /config.json
  review:
    image: acme/hotel:1
    entrypoint: review
  mongodb-geo:
    image: mongo:7
  mongodb-rate:
    image: mongo:7
  mongodb-review:
    image: mongo:7
  kafka:
    image: confluentinc/cp-kafka:7.6.0
configs:
  server_config:
    file: ./config.json
`;
  const config = `{
  "GeoMongoAddress": "mongodb-geo:27017",
  "RateMongoAddress": "mongodb-rate:27017",
  "ReviewMongoAddress": "mongodb-review:27017",
  "KafkaBrokers": "kafka:9092"
}
`;
  const { graph } = await analyzeFiles([
    { path: 'docker-compose.yml', text: compose },
    { path: 'config.json', text: config },
  ]);
  t.deepEqual(connections(graph), [
    'service:geo -> datastore:mongodb-geo',
    'service:geo -> queue:kafka',
    'service:rate -> datastore:mongodb-rate',
    'service:rate -> queue:kafka',
  ]);
});

test('a config.yml given to no container is no edge of the unit whose folder holds it', async (t) => {
  const { graph } = await analyzeFiles([
    { path: 'go.mod', text: 'module example.com/acme/api\n\ngo 1.22\n' },
    { path: 'main.go', text: 'package main\n\nfunc main() {}\n' },
    { path: 'deploy-extra/config.json', text: '{\n  "RedisAddress": "redis-cache:6379"\n}\n' },
  ]);
  t.deepEqual(connections(graph), []);
});

test('a shared folder is read by the container whose environment names its target, and a mounted file by its reader', async (t) => {
  const compose = `services:
  api:
    image: acme/api:1
    environment:
      CONFIG_DIR: /config
    volumes:
      - ./shared:/config
  metrics:
    image: prom/prometheus:v2
    volumes:
      - ./shared:/etc/prometheus
  worker:
    image: acme/worker:1
    volumes:
      - ./worker/settings.toml:/app/settings.toml:ro
  db:
    image: postgres:16
  queue:
    image: rabbitmq:3
`;
  const { graph } = await analyzeFiles([
    { path: 'docker-compose.yml', text: compose },
    { path: 'shared/config.yml', text: 'database:\n  url: postgres://db:5432/app\n' },
    { path: 'worker/settings.toml', text: '[broker]\nurl = "amqp://queue:5672"\n' },
  ]);
  t.deepEqual(connections(graph), ['service:api -> datastore:db', 'service:worker -> queue:queue']);
});

test('a mounted settings file the repository holds only as its template is read from the template', async (t) => {
  const compose = `services:
  relay:
    image: acme/relay:1
    volumes:
      - ./relay/config.yml:/etc/relay/config.yml:ro
  api:
    image: acme/api:1
  cache:
    image: redis:7
`;
  const files: SourceFile[] = [
    { path: 'docker-compose.yml', text: compose },
    {
      path: 'relay/config.example.yml',
      text: 'upstream: "http://api:8080/"\nredis: redis://cache:6379\n',
    },
  ];
  const { graph, evidence } = await analyzeFiles(files);
  t.deepEqual(connections(graph), [
    'service:relay -> datastore:cache',
    'service:relay -> service:api',
  ]);
  const rel = graph.relationships.find((r) => r.target_key === 'service:api')!;
  const paths = rel.evidence_ids.map((id) => evidence.find((e) => e.id === id)!.location.path);
  t.deepEqual([...new Set(paths)].sort(), ['docker-compose.yml', 'relay/config.example.yml']);
});

test('program source under a folder mounted for hot reload is its unit code, not every mounting process settings', async (t) => {
  // A development compose file mounts the source tree into each process of one image; an address
  // one module of that code calls is no call of every process (seen on a self-hosted product:
  // every worker wired to everything any of them calls).
  const compose = `x-app: &app
  image: acme-app-local
  build:
    context: .
  volumes:
    - ./src:/usr/src/code/src
services:
  api:
    <<: *app
    command: api
  realtime:
    <<: *app
    command: realtime
  worker:
    <<: *app
    command: worker
  executor:
    image: acme/executor:1
`;
  const { graph } = await analyzeFiles([
    { path: 'docker-compose.yml', text: compose },
    { path: 'composer.json', text: '{"name": "acme/app", "require": {"php": ">=8.1"}}\n' },
    {
      path: 'src/Workers/Builds.php',
      text: "<?php\n$executor = new Executor('http://executor:8080/v1');\n",
    },
  ]);
  const got = connections(graph);
  t.false(got.includes('service:realtime -> service:executor'), got.join('\n'));
  t.false(got.includes('service:worker -> service:executor'), got.join('\n'));
});
