/**
 * Idioms of systems the analyzers had not seen (issue 23, session 8): each capability with a
 * small system written for this test, a case that must be found and one that must not.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';
import { analyzeFiles } from './helpers/pipeline';

const edges = (g: Graph) => g.relationships.map((r) => `${r.source_key} -> ${r.target_key}`);
const keys = (g: Graph) => g.entities.map((e) => e.canonical_key);
const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

test('images: stores and brokers known by their repository path are typed, not services', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  api:
    image: acme/api:1.0
    environment:
      ConnectionStrings__Db: "Server=sql;Database=app;User Id=sa;Password=x"
      SQL_HOST: sql
      STORAGE_HOST: blobs
      CLICKHOUSE_URL: http://olap:8123
      S3_ENDPOINT: http://objects:9000
      KAFKA_BOOTSTRAP_SERVERS: events:9092
      MQTT_HOST: mqtt
      SMTP_HOST: mail
      BILLING_URL: http://billing:8080
  sql:
    image: mcr.microsoft.com/mssql/server:2022-latest
  blobs:
    image: mcr.microsoft.com/azure-storage/azurite
  olap:
    image: clickhouse/clickhouse-server:24.3
  objects:
    image: cgr.dev/chainguard/minio
  events:
    image: apache/kafka-native:3.8.0
  mqtt:
    image: eclipse-mosquitto:2
  mail:
    image: maildev/maildev
  billing:
    image: acme/server:1.0
`,
    }),
  );
  const k = keys(graph);
  for (const key of [
    'datastore:sql',
    'datastore:blobs',
    'datastore:olap',
    'datastore:objects',
    'queue:events',
    'queue:mqtt',
    'datastore:mail',
  ])
    t.true(k.includes(key), key);
  // An image whose last segment is `server` but whose path is no known engine stays a service.
  t.true(k.includes('service:billing'));
  t.true(edges(graph).includes('service:api -> service:billing'));
  t.false(
    edges(graph).some((e) => / -> service:(sql|blobs|olap|objects|events|mqtt|mail)$/.test(e)),
  );
});

test('values read as hosts: flags, bucket URLs, plain bucket names and a database server setting are no calls', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  web:
    image: acme/shop:1.0
    environment:
      CALCULATE_API_BASE_URL: "true"
      CATALOG_URL: http://catalog:8080
      UPLOAD_BUCKET: shop
      PROFILES_BUCKET_URL: "s3://profiles?region=us-east-1&endpoint=objects:8333"
      DB_HOST: db
  worker:
    image: acme/shop-worker:1.0
    environment:
      EXPORT_BUCKET: shop
  catalog:
    image: acme/catalog:1.0
  shop:
    image: acme/shop-admin:1.0
  objects:
    image: chrislusf/seaweedfs
  db:
    image: mariadb:11
    environment:
      MARIADB_HOST: shop
      MARIADB_DATABASE: shop
  pool:
    image: edoburu/pgbouncer:1.25
    environment:
      DB_HOST: db
`,
    }),
  );
  const e = edges(graph);
  // Found: the real address, the object store behind the bucket URL, the database, the pooler's database.
  t.true(e.includes('service:web -> service:catalog'));
  t.true(e.includes('service:web -> datastore:objects'));
  t.true(e.includes('service:web -> datastore:db'));
  t.true(e.includes('datastore:pool -> datastore:db'));
  // Not found: a flag, a bucket named in the URL, a bucket named like a service, a server setting.
  t.false(keys(graph).includes('service:true'));
  t.false(keys(graph).some((k) => k.endsWith(':profiles')));
  t.false(
    e.some((x) => /-> service:shop$/.test(x)),
    e.join('\n'),
  );
  t.false(e.some((x) => x.startsWith('datastore:db ->')));
});
