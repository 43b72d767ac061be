/**
 * Issue 23, session 14: a seed or node list variable (`POSTGRES_SEEDS=postgresql`,
 * `CASSANDRA_SEEDS=cassandra1,cassandra2`) is an address of each item that names a declared unit
 * (analysis/cloud/seed-lists.ts); an `env_file` shared by an application and a stock database
 * image gives the database no connection through variables its image does not read
 * (analysis/cloud/store-image-env.ts). Small Compose projects written for this test.
 */
import test from 'ava';
import { analyzeFileMap, connections } from './helpers/pipeline';

test('a seed list names the stores the server opens, each item matched to a compose service', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': `services:
  postgresql:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: server
  elasticsearch:
    image: elasticsearch:7.17.27
  cassandra1:
    image: cassandra:4
  cassandra2:
    image: cassandra:4
  server:
    image: acme/workflow-server:1.2
    environment:
      - DB=postgres12
      - POSTGRES_SEEDS=postgresql
      - ENABLE_ES=true
      - ES_SEEDS=elasticsearch
      - CASSANDRA_SEEDS=cassandra1, cassandra2
      - RANDOM_SEED=42
      - CLUSTER_NODES=3
      - REMOTE_SEEDS=seed.example.org,other
`,
  });
  const edges = connections(graph);
  t.true(edges.includes('service:server -> datastore:postgresql'));
  t.true(edges.includes('service:server -> datastore:elasticsearch'));
  t.true(edges.includes('service:server -> datastore:cassandra1'));
  t.true(edges.includes('service:server -> datastore:cassandra2'));
  // Items no compose service declares are no address of the list.
  t.false(edges.some((e) => /seed\.example\.org|-> service:other|-> external:/.test(e)));
});

test("Elasticsearch's initial master node names are no addresses", async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': `services:
  es01:
    image: acme/search-node:8
    environment:
      - cluster.initial_master_nodes=es01,es02
  es02:
    image: acme/search-node:8
`,
  });
  t.false(connections(graph).includes('service:es01 -> service:es02'));
});

test('a database given the env_file of its application calls no store the file names', async (t) => {
  const { graph } = await analyzeFileMap({
    '.env.example': `POSTGRES_USER=app
POSTGRES_PASSWORD=secret
POSTGRES_DB=app
DATABASE_HOST=database:5432
DATABASE_URL=postgresql://app:secret@database:5432/app
REDIS_URL=redis://redis:6379
`,
    'docker-compose.yml': `services:
  database:
    image: postgres
    env_file: .env
  redis:
    image: redis:latest
  app:
    image: acme/app:1
    env_file: .env
  pooler:
    image: edoburu/pgbouncer
    env_file: .env
`,
  });
  const edges = connections(graph);
  t.false(edges.includes('datastore:database -> datastore:redis'));
  // The application still reaches both through the same file.
  t.true(edges.includes('service:app -> datastore:database'));
  t.true(edges.includes('service:app -> datastore:redis'));
  // A pooler's image reads the client URL: it keeps its connection to the database.
  t.true(edges.some((e) => e.startsWith('datastore:pooler -> datastore:database')));
});
