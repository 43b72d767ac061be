/**
 * Addresses a compose file gives only by a variable's name (issue 23, session 15): an address
 * variable passed through with no value whose prefix is an engine's name (`ELASTICSEARCH_HOST:`)
 * points at the project's one store of that engine; a port variable naming a service the
 * container `depends_on` (`APP_SERVER_PORT` with `depends_on: app-server`) is a call to it.
 * One vendor image run with several commands from a shared environment block (a YAML anchor),
 * as a deployment-only repository writes it. Small repositories written here. Pure.
 */
import test from 'ava';
import { analyzeFileMap, connections as edges } from './helpers/pipeline';

/** A vendor image run as three roles; the address variables are passed through empty. */
const stack = (search: string, extra = '') => `x-shared:
  app: &app
    image: acme/helpdesk:7.1
    environment: &env
      DATABASE_URL: \${DATABASE_URL:-postgres://db:5432/helpdesk}
      ELASTICSEARCH_HOST:
      ELASTICSEARCH_PORT:
      APP_SERVER_PORT:
    depends_on:
      db:
        condition: service_healthy

services:
  app-server:
    <<: *app
    command: ["helpdesk-server"]
  proxy:
    <<: *app
    command: ["helpdesk-proxy"]
    ports: ["8080:8080"]
    depends_on:
      app-server:
        condition: service_healthy
  worker:
    <<: *app
    command: ["helpdesk-worker"]
  db:
    image: postgres:17
${search}${extra}`;

const ONE_SEARCH = `  search:
    image: elasticsearch:9.1.0
    environment:
      discovery.type: single-node
`;

const TWO_SEARCHES = `${ONE_SEARCH}  search-replica:
    image: elasticsearch:9.1.0
`;

test('engine-named variable: an empty ELASTICSEARCH_HOST points at the one Elasticsearch', async (t) => {
  const { graph } = await analyzeFileMap({ 'docker-compose.yml': stack(ONE_SEARCH) });
  const e = edges(graph);
  t.true(e.includes('service:app-server -> datastore:search'), e.join(', '));
  t.true(e.includes('service:worker -> datastore:search'), e.join(', '));
  // The database address is written: unchanged.
  t.true(e.includes('service:worker -> datastore:db'), e.join(', '));
  // A name-only inference: below an address the deployment writes.
  const rel = graph.relationships.find(
    (r) => r.source_key === 'service:worker' && r.target_key === 'datastore:search',
  );
  t.true(Number(rel?.confidence) < 0.5, String(rel?.confidence));
  // The store's own declaration does not make it a client of itself.
  t.false(e.includes('datastore:search -> datastore:search'), e.join(', '));
});

test('engine-named variable: two stores of that engine, which one is unknown: no edge', async (t) => {
  const { graph } = await analyzeFileMap({ 'docker-compose.yml': stack(TWO_SEARCHES) });
  const e = edges(graph);
  t.false(
    e.some((x) => x.startsWith('service:worker -> datastore:search')),
    e.join(', '),
  );
});

test('engine-named variable: a value the project .env gives wins', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': stack(ONE_SEARCH),
    '.env': 'ELASTICSEARCH_HOST=search.example.com\n',
  });
  const e = edges(graph);
  t.false(e.includes('service:worker -> datastore:search'), e.join(', '));
});

test('engine-named variable: a prefix that is no engine name names nothing', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': stack(ONE_SEARCH).replace(/ELASTICSEARCH_HOST/g, 'INDEX_HOST'),
  });
  const e = edges(graph);
  t.false(e.includes('service:worker -> datastore:search'), e.join(', '));
});

test('depended port: the port variable of the service a container waits for is a call to it', async (t) => {
  const { graph } = await analyzeFileMap({ 'docker-compose.yml': stack(ONE_SEARCH) });
  const e = edges(graph);
  t.true(e.includes('service:proxy -> service:app-server'), e.join(', '));
  // The same shared variable given to a container that does not wait for the server: nothing.
  t.false(e.includes('service:worker -> service:app-server'), e.join(', '));
  t.false(e.includes('service:app-server -> service:app-server'), e.join(', '));
});

test('depended port: depends_on alone is a start order, no call', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': stack(ONE_SEARCH).replace('      APP_SERVER_PORT:\n', ''),
  });
  const e = edges(graph);
  t.false(e.includes('service:proxy -> service:app-server'), e.join(', '));
});
