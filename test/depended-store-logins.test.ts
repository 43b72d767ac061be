/**
 * A vendor container that depends on a compose store and holds its login (docs/decisions.md,
 * "issue 23, session 13: a depended-on store whose login the dependant holds"): the project
 * variable its login variables take is the one the store's own login variables take.
 */
import test from 'ava';
import { analyzeFiles, connections } from './helpers/pipeline';
import { credentialVariables } from '../analysis/cloud/compose-values';

const edge = (graph: Awaited<ReturnType<typeof analyzeFiles>>['graph'], from: string, to: string) =>
  graph.relationships.find(
    (r) => r.kind === 'connects_to' && r.source_key === from && r.target_key === to,
  );

test('a dependant of two brokers of one engine holding their login connects to both, weakly', async (t) => {
  const compose = `x-env: &env
  RABBITMQ_USER: "\${RABBITMQ_USER}"
  RABBITMQ_PASS: "\${RABBITMQ_PASS}"
services:
  jobs-mq:
    image: rabbitmq:3.8-management-alpine
    environment:
      RABBITMQ_DEFAULT_USER: "\${RABBITMQ_USER}"
      RABBITMQ_DEFAULT_PASS: "\${RABBITMQ_PASS}"
  events-mq:
    image: rabbitmq:3.8-management-alpine
    environment:
      RABBITMQ_DEFAULT_USER: "\${RABBITMQ_USER}"
      RABBITMQ_DEFAULT_PASS: "\${RABBITMQ_PASS}"
  api:
    image: acme/api:1
    environment: *env
    depends_on: [jobs-mq, events-mq]
  waiter:
    image: acme/waiter:1
    depends_on: [jobs-mq, events-mq]
`;
  const { graph } = await analyzeFiles([{ path: 'docker-compose.yml', text: compose }]);
  for (const to of ['queue:jobs-mq', 'queue:events-mq']) {
    const rel = edge(graph, 'service:api', to);
    t.truthy(rel, to);
    t.true(Number(rel!.confidence) < 0.5);
    t.is(rel!.attributes.basis, 'depends on and holds its login, address not in repository');
  }
  // No login: which of the two it uses stays unknown.
  const got = connections(graph);
  t.false(got.includes('service:waiter -> queue:jobs-mq'));
  t.false(got.includes('service:waiter -> queue:events-mq'));
});

test('of two stores of one engine, only the one whose login the dependant holds', async (t) => {
  const compose = `services:
  app-db:
    image: postgres:16
    environment:
      POSTGRES_USER: \${APP_DB_USER:-app}
      POSTGRES_PASSWORD: \${APP_DB_PASSWORD?set it}
  auth-db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: \${AUTH_DB_PASSWORD}
  app:
    image: acme/app:1
    environment:
      - DB_PASSWORD=\${APP_DB_PASSWORD}
    depends_on: [app-db, auth-db]
`;
  const got = connections(
    (await analyzeFiles([{ path: 'docker-compose.yml', text: compose }])).graph,
  );
  t.true(got.includes('service:app -> datastore:app-db'));
  t.false(got.includes('service:app -> datastore:auth-db'));
});

test('a login counts even when another service is given the store address; a literal or no login does not', async (t) => {
  const compose = `services:
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: \${POSTGRES_PASSWORD}
  api:
    image: acme/api:1
    environment:
      DB_HOST: db
    depends_on: [db]
  worker:
    image: acme/worker:1
    environment:
      PGPASSWORD: $POSTGRES_PASSWORD
    depends_on: [db]
  admin:
    image: acme/admin:1
    environment:
      POSTGRES_PASSWORD: postgres
    depends_on: [db]
  sidecar:
    image: acme/sidecar:1
    depends_on: [db]
  built:
    build: ./built
    environment:
      POSTGRES_PASSWORD: \${POSTGRES_PASSWORD}
    depends_on: [db]
`;
  const got = connections(
    (await analyzeFiles([{ path: 'docker-compose.yml', text: compose }])).graph,
  );
  t.true(got.includes('service:api -> datastore:db'));
  t.true(got.includes('service:worker -> datastore:db'));
  t.false(got.includes('service:admin -> datastore:db'));
  t.false(got.includes('service:sidecar -> datastore:db'));
  // Its program is in the repository: had it used the store, its code would say so.
  t.false(got.includes('service:built -> datastore:db'));
});

test('login variables: the project variables taken whole, names only', (t) => {
  t.deepEqual(
    credentialVariables([
      { name: 'RABBITMQ_USER', value: '${RABBITMQ_USER}', key: 'a' },
      { name: 'DB_PASSWORD', value: '${DB_PW:-secret}', key: 'b' },
      { name: 'SMTP_PASS', value: null, key: 0 },
      { name: 'MYSQL_PASSWORD', value: 'literal-secret', key: 'c' },
      { name: 'REDIS_PASSWORD', value: 'x${A}', key: 'd' },
      { name: 'DB_HOST', value: '${DB_HOST}', key: 'e' },
      { name: 'SUPERUSER', value: '${ROOT}', key: 'f' },
    ]),
    ['DB_PW', 'RABBITMQ_USER', 'SMTP_PASS'],
  );
});
