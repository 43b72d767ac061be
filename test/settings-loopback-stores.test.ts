import test from 'ava';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';
import {
  SETTINGS_STORE_BASIS,
  SETTINGS_STORE_CAP,
  SETTINGS_STORE_NEW_BASIS,
} from '../analysis/reconcile-settings-stores';

const main = `package main

func main() {}
`;

/** A data package importing `imports` (import path -> alias, '' for the default name). */
const data = (imports: Record<string, string>) => `package data

import (
${Object.entries(imports)
  .map(([path, alias]) => `\t${alias ? `${alias} ` : ''}"${path}"`)
  .join('\n')}
)

func NewData() {}
`;

const kafkaSettings = `server:
  grpc:
    addr: 0.0.0.0:9000
data:
  kafka:
    addrs:
      - 127.0.0.1:9092
`;

const redisSettings = `data:
  database:
    driver: mysql
    source: root:pw@tcp(127.0.0.1:3306)/test?parseTime=true
  redis:
    addr: 127.0.0.1:6379
    read_timeout: 0.2s
`;

/** A mono-repo Go module with three applications; `more` adds or replaces files. */
const repo = (more: Record<string, string> = {}) => ({
  'go.mod': 'module github.com/acme/shop\n\ngo 1.17\n',
  'app/user/service/cmd/server/main.go': main,
  'app/user/service/internal/data/data.go': data({ 'github.com/go-redis/redis/v8': '' }),
  'app/user/service/configs/config.yaml': redisSettings,
  'app/catalog/service/cmd/server/main.go': main,
  'app/catalog/service/internal/data/data.go': data({ 'github.com/acme/shop/pkg/util': '' }),
  'app/catalog/service/configs/config.yaml': redisSettings,
  'app/shipping/service/cmd/server/main.go': main,
  'app/shipping/service/internal/data/data.go': data({
    'github.com/Shopify/sarama': '',
    'github.com/go-sql-driver/mysql': '_',
  }),
  'app/shipping/service/configs/config.yaml': kafkaSettings.replace(
    'data:\n',
    'data:\n  database:\n    source: root:pw@tcp(127.0.0.1:3306)/test\n',
  ),
  'pkg/util/util.go': 'package util\n',
  ...more,
});

const compose = (stores: string) => ({
  'deploy/docker-compose.yaml': `services:
  user-service:
    image: acme/shop-user-service:1.0
${stores}`,
});

const kafka = `  kafka:
    image: bitnami/kafka:2
`;

const rel = (graph: Awaited<ReturnType<typeof analyzeFileMap>>['graph'], key: string) =>
  graph.relationships.find((r) => r.canonical_key === `connects_to:${key}`);

test('a YAML block sequence of addresses under an engine key is a connection of that engine', async (t) => {
  const { evidence } = await analyzeFileMap({
    'app/cmd/main.go': main,
    'app/go.mod': 'module github.com/acme/app\n\ngo 1.17\n',
    'app/configs/config.yaml': 'kafka:\n  brokers:\n  - kafka-1:9092\n  - kafka-2:9092\n',
  });
  const found = evidence
    .filter((e) => e.evidence_kind === 'connection-string')
    .map((e) => `${String(e.object_key)} ${String(e.attributes.setting)}`);
  t.deepEqual(found.sort(), ['queue:kafka-1 kafka.brokers', 'queue:kafka-2 kafka.brokers']);
});

test('a program whose settings name Kafka at a loopback address, and whose code imports a Kafka client, uses the deployment’s one Kafka', async (t) => {
  const { graph } = await analyzeFileMap({ ...repo(), ...compose(kafka) });
  const edge = rel(graph, 'service:shipping-service->queue:kafka');
  t.truthy(edge);
  t.true(Number(edge!.confidence) <= SETTINGS_STORE_CAP);
  t.is(edge!.attributes.basis, SETTINGS_STORE_BASIS);
});

test('an engine the deployment does not run becomes a store named after it, weakly, for the program using its client', async (t) => {
  const { graph } = await analyzeFileMap({ ...repo(), ...compose(kafka) });
  const edge = rel(graph, 'service:user-service->datastore:redis');
  t.truthy(edge);
  t.true(Number(edge!.confidence) <= SETTINGS_STORE_CAP);
  t.is(edge!.attributes.basis, SETTINGS_STORE_NEW_BASIS);
  const store = graph.entities.find((e) => e.canonical_key === 'datastore:redis');
  t.truthy(store);
  t.true(Number(store!.confidence) <= SETTINGS_STORE_CAP);
});

test('settings naming a store whose client the program never imports draw nothing', async (t) => {
  const { graph } = await analyzeFileMap({ ...repo(), ...compose(kafka) });
  const all = connections(graph);
  // catalog's settings name Redis and MySQL; its code imports neither.
  t.false(all.some((c) => c.startsWith('service:catalog-service ->')));
  // shipping's blank import of the MySQL driver only registers it: no MySQL store.
  t.false(all.includes('service:shipping-service -> datastore:mysql'));
  t.false(entityKeys(graph).includes('datastore:mysql'));
});

test('two stores of the engine in the deployment: which one is unknown, nothing is drawn', async (t) => {
  const { graph } = await analyzeFileMap({
    ...repo(),
    ...compose(`  cache:
    image: redis:7
  sessions:
    image: redis:7
`),
  });
  t.false(connections(graph).some((c) => c.startsWith('service:user-service -> datastore:')));
  t.false(entityKeys(graph).includes('datastore:redis'));
});

test('the deployment’s one store of a loopback engine is joined, not a second store added', async (t) => {
  const { graph } = await analyzeFileMap({
    ...repo(),
    ...compose(`  cache:
    image: redis:7
`),
  });
  t.true(connections(graph).includes('service:user-service -> datastore:cache'));
  t.false(entityKeys(graph).includes('datastore:redis'));
});

test('a program already connected to a store of the engine gets no loopback store', async (t) => {
  const { graph } = await analyzeFileMap({
    ...repo({
      'app/user/service/internal/data/cache.go': `package data

import "github.com/go-redis/redis/v8"

func NewCache() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: "redis.example.com:6379"})
}
`,
    }),
    ...compose(kafka),
  });
  t.false(entityKeys(graph).includes('datastore:redis'));
  t.false(connections(graph).includes('service:user-service -> datastore:redis'));
});

test('settings in the folder of one program of a many-program unit are that program’s, not the unit’s', async (t) => {
  const { graph } = await analyzeFileMap({
    'go.mod':
      'module github.com/acme/coffee\n\ngo 1.19\n\nrequire github.com/go-redis/redis/v8 v8.11.5\n',
    'cmd/barista/main.go': `package main

import "github.com/go-redis/redis/v8"

func main() { _ = redis.NewClient }
`,
    'cmd/barista/config.yml': 'redis:\n  addr: 127.0.0.1:6379\n',
    'cmd/counter/main.go': main,
  });
  t.false(entityKeys(graph).includes('datastore:redis'));
  t.deepEqual(connections(graph), []);
});

test('a program whose other settings name a non-loopback address of the engine gets no loopback store', async (t) => {
  const { graph } = await analyzeFileMap({
    ...repo({
      'app/user/service/configs/config-prod.yaml':
        'data:\n  redis:\n    addr: cache.internal:6379\n',
    }),
    ...compose(kafka),
  });
  t.false(entityKeys(graph).includes('datastore:redis'));
  t.false(connections(graph).includes('service:user-service -> datastore:redis'));
});
