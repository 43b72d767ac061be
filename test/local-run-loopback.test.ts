/**
 * Units started one by one on the developer's host (`mvn spring-boot:run`), with no deployment
 * (issue 23, session 15): a loopback URL whose port is another such unit's `server.port` is a
 * call to it, and a Spring settings file's loopback store address (a JDBC URL, or a
 * `hostname`/`port` pair at the default port of an engine whose client the module uses) is a
 * connection to a store of that engine. Small repositories written here. Pure.
 */
import test from 'ava';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

const pom = (name: string, deps: Array<[string, string]>) =>
  `<project><modelVersion>4.0.0</modelVersion><groupId>shop</groupId><artifactId>${name}</artifactId><version>1</version>
<dependencies>
  <dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-web</artifactId></dependency>
${deps.map(([g, a]) => `  <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId></dependency>`).join('\n')}
</dependencies></project>`;

/** Four modules run with `mvn spring-boot:run`; `more` adds or replaces files. */
const repo = (more: Record<string, string> = {}) => ({
  'gateway/pom.xml': pom('gateway', []),
  'gateway/src/main/resources/application.yml': 'server:\n  port: 8081\n',
  'web/pom.xml': pom('web', []),
  'web/src/main/resources/application.yml': `shop:
  api: http://localhost:8081/api/v1/
server:
  port: 8080
`,
  'catalog/pom.xml': pom('catalog', [
    ['org.springframework.boot', 'spring-boot-starter-data-cassandra'],
  ]),
  'catalog/src/main/resources/application.yml': `shop:
  db:
    keyspace: shop
    hostname: 127.0.0.1
    port: 9042
server:
  port: 8082
`,
  'basket/pom.xml': pom('basket', [['org.postgresql', 'postgresql']]),
  'basket/src/main/resources/application.yml': `server:
  port: 8083
spring:
  datasource:
    url: jdbc:postgresql://127.0.0.1:5433/postgres
`,
  ...more,
});

test('local run: a loopback URL at the server.port of one other local unit is a call to it', async (t) => {
  const { graph } = await analyzeFileMap(repo());
  t.true(
    connections(graph).includes('service:web -> service:gateway'),
    connections(graph).join(', '),
  );
  const rel = graph.relationships.find(
    (r) => r.canonical_key === 'connects_to:service:web->service:gateway',
  );
  t.true(Number(rel?.confidence) <= 0.5);
});

test('local run: two units listening on the port leave the address unresolved', async (t) => {
  const { graph } = await analyzeFileMap(
    repo({ 'basket/src/main/resources/application.yml': 'server:\n  port: 8081\n' }),
  );
  t.false(
    connections(graph).some((e) => e.startsWith('service:web -> service:')),
    connections(graph).join(', '),
  );
});

test('local run: a unit a deployment runs is not resolved by its loopback port', async (t) => {
  const { graph } = await analyzeFileMap(
    repo({
      'docker-compose.yml': `services:
  web:
    build: ./web
  gateway:
    build: ./gateway
`,
    }),
  );
  t.false(
    connections(graph).includes('service:web -> service:gateway'),
    connections(graph).join(', '),
  );
});

test('local run: a Spring JDBC URL on the loopback is a store of its engine', async (t) => {
  const { graph } = await analyzeFileMap(repo());
  t.true(entityKeys(graph).includes('datastore:postgres'), entityKeys(graph).join(', '));
  t.true(
    connections(graph).includes('service:basket -> datastore:postgres'),
    connections(graph).join(', '),
  );
});

test('local run: a hostname/port pair at the default port of the client engine is that store', async (t) => {
  const { graph } = await analyzeFileMap(repo());
  t.true(entityKeys(graph).includes('datastore:cassandra'), entityKeys(graph).join(', '));
  t.true(
    connections(graph).includes('service:catalog -> datastore:cassandra'),
    connections(graph).join(', '),
  );
});

test('local run: a hostname/port pair without that engine client names no store', async (t) => {
  const { graph } = await analyzeFileMap(repo({ 'catalog/pom.xml': pom('catalog', []) }));
  t.false(entityKeys(graph).includes('datastore:cassandra'), entityKeys(graph).join(', '));
  t.false(
    connections(graph).some((e) => e.startsWith('service:catalog -> datastore:')),
    connections(graph).join(', '),
  );
});
