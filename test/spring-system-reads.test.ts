/**
 * What a Spring Boot system with Kafka Connect states in its own settings (issue 23, session 12):
 * an OAuth2 client's `issuer-uri` is a call to the identity provider (the provider itself is only
 * handed its issuer); an engine's URL key holding a bare name (`elasticsearch.url=search`) names
 * the engine's host; a Kafka Connect worker's storage topics are names on its broker, no queues;
 * a Maven module of browser drivers and test runners is a UI test suite, whose addresses (the
 * system under test) are no calls. Small systems written for this test, run through the
 * analyzers and reconcile as an audit does.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeFiles, connections, entityKeys } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const pom = (artifact: string, deps: string[], extra = '') => `<?xml version="1.0"?>
<project>
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>org.acme</groupId>
    <artifactId>shop</artifactId>
    <version>1.0</version>
  </parent>
  <artifactId>${artifact}</artifactId>
  <dependencies>
${deps
  .map((d) => {
    const [g, a] = d.split(':');
    return `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId></dependency>`;
  })
  .join('\n')}
  </dependencies>
  ${extra}
</project>
`;

const BOOT =
  '<build><plugins><plugin><artifactId>spring-boot-maven-plugin</artifactId></plugin></plugins></build>';
const MAIN = (pkg: string) => `package org.acme.${pkg};
@SpringBootApplication
public class App { public static void main(String[] args) { SpringApplication.run(App.class, args); } }
`;

const COMPOSE = `services:
  gateway:
    build: ./gateway
  catalog:
    build: ./catalog
  auth:
    image: quay.io/keycloak/keycloak:26.0
  search:
    image: elasticsearch:8.15.0
  broker:
    image: apache/kafka:3.8.0
  connect:
    image: debezium/connect:2.7.3.Final
    environment:
      - BOOTSTRAP_SERVERS=broker:9092
      - GROUP_ID=1
      - CONFIG_STORAGE_TOPIC=connect_configs
      - OFFSET_STORAGE_TOPIC=connect_offsets
      - STATUS_STORAGE_TOPIC=connect_statuses
  emailer:
    image: org/emailer:1
    environment:
      - ORDERS_TOPIC=order-events
`;

const SYSTEM = {
  'docker-compose.yml': COMPOSE,
  'pom.xml': `<project><groupId>org.acme</groupId><artifactId>shop</artifactId><packaging>pom</packaging>
<modules><module>gateway</module><module>catalog</module><module>ui-checks</module></modules></project>`,
  'gateway/pom.xml': pom(
    'gateway',
    [
      'org.springframework.boot:spring-boot-starter-oauth2-client',
      'org.springframework.cloud:spring-cloud-starter-gateway',
    ],
    BOOT,
  ),
  'gateway/src/main/java/org/acme/gateway/App.java': MAIN('gateway'),
  'gateway/src/main/resources/application.yaml': `spring:
  security:
    oauth2:
      client:
        provider:
          auth-server:
            issuer-uri: http://auth/realms/shop
        registration:
          web:
            provider: auth-server
            client-id: gateway
`,
  'catalog/pom.xml': pom(
    'catalog',
    [
      'org.springframework.boot:spring-boot-starter-web',
      'org.springframework.boot:spring-boot-starter-data-elasticsearch',
    ],
    BOOT,
  ),
  'catalog/src/main/java/org/acme/catalog/App.java': MAIN('catalog'),
  'catalog/src/main/resources/application.properties':
    'elasticsearch.url=search\nelasticsearch.username=\n',
  // A UI test suite named like the gateway, driving a browser at it.
  'ui-checks/gateway/pom.xml': pom('gateway', [
    'org.acme:ui-base',
    'org.seleniumhq.selenium:selenium-java',
    'io.github.bonigarcia:webdrivermanager',
    'io.cucumber:cucumber-java',
    'io.cucumber:cucumber-spring',
  ]),
  'ui-checks/gateway/src/main/java/org/acme/ui/UiApplication.java': MAIN('ui'),
  'ui-checks/gateway/src/main/resources/application.properties': 'app.url=http://catalog/\n',
  'ui-checks/ui-base/pom.xml': pom('ui-base', [
    'org.seleniumhq.selenium:selenium-java',
    'org.testng:testng',
    'io.cucumber:cucumber-testng',
  ]),
  'ui-checks/ui-base/src/main/java/org/acme/base/BaseMain.java': MAIN('base'),
};

test('an OAuth2 client calls the issuer it is given; the provider is only handed its own', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      ...SYSTEM,
      'auth/pom.xml': pom('auth', ['org.keycloak:keycloak-services'], BOOT),
      'auth/src/main/java/org/acme/auth/App.java': MAIN('auth'),
      'auth/src/main/resources/application.properties':
        'spring.security.oauth2.authorizationserver.issuer-uri=http://gateway/\n',
    }),
  );
  const e = connections(graph);
  t.true(e.includes('service:gateway -> service:auth'), e.join('\n'));
  t.false(e.includes('service:auth -> service:gateway'), e.join('\n'));
});

test("a bare name under an engine's URL key is that engine's host", async (t) => {
  const { graph } = await analyzeFiles(files(SYSTEM));
  const e = connections(graph);
  t.true(e.includes('service:catalog -> datastore:search'), e.join('\n'));
});

test("Kafka Connect's storage topics are names on its broker, not queues", async (t) => {
  const { graph } = await analyzeFiles(files(SYSTEM));
  const e = connections(graph);
  t.true(e.includes('service:connect -> queue:broker'), e.join('\n'));
  t.deepEqual(
    e.filter((x) => x.startsWith('service:connect ->')),
    ['service:connect -> queue:broker'],
  );
  const keys = entityKeys(graph);
  t.false(
    keys.some((k) => /connect-(configs|offsets|statuses)/.test(k)),
    keys.join('\n'),
  );
  // A topic a service is told to use by name is still the queue it names.
  t.true(e.includes('service:emailer -> queue:order-events'), e.join('\n'));
});

test('a Maven module of browser drivers and test runners is a UI test suite, not a service', async (t) => {
  const { graph } = await analyzeFiles(files(SYSTEM));
  const keys = entityKeys(graph);
  t.false(keys.includes('service:ui-base'), keys.join('\n'));
  // The suite named like the gateway drives a browser at the catalog: no call of the gateway.
  const e = connections(graph);
  t.false(e.includes('service:gateway -> service:catalog'), e.join('\n'));
  t.true(keys.includes('service:gateway'));
});

test('a crawler service using Selenium beside its web framework stays a service', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'crawler/pom.xml': pom(
        'crawler',
        [
          'org.seleniumhq.selenium:selenium-java',
          'org.springframework.boot:spring-boot-starter-web',
        ],
        BOOT,
      ),
      'crawler/src/main/java/org/acme/crawler/App.java': MAIN('crawler'),
      'api/pom.xml': pom('api', ['org.springframework.boot:spring-boot-starter-web'], BOOT),
      'api/src/main/java/org/acme/api/App.java': MAIN('api'),
    }),
  );
  t.true(entityKeys(graph).includes('service:crawler'));
});

const CDC_COMPOSE = `services:
  db:
    image: postgres:16
  broker:
    image: apache/kafka:3.8.0
  connect:
    image: quay.io/debezium/connect:2.7.3.Final
    environment:
      - BOOTSTRAP_SERVERS=broker:9092
`;

const connector = (host: string) =>
  JSON.stringify(
    {
      'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
      'topic.prefix': 'orders',
      'database.hostname': host,
      'database.port': '5432',
      'database.dbname': 'orders',
    },
    null,
    2,
  );

test('a Debezium connector configuration is a connection of the Kafka Connect worker', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'docker-compose.yml': CDC_COMPOSE,
      'cdc/orders-source.json': connector('db'),
      // Registered under `config` (POST /connectors), naming a host no service answers to.
      'cdc/elsewhere.json': JSON.stringify({
        name: 'x',
        config: {
          'connector.class': 'io.debezium.connector.mysql.MySqlConnector',
          'database.hostname': 'legacy-mysql.internal.example',
        },
      }),
      // Any other JSON file is no connector.
      'cdc/notes.json': JSON.stringify({ 'database.hostname': 'db' }),
    }),
  );
  const e = connections(graph);
  t.true(e.includes('service:connect -> datastore:db'), e.join('\n'));
  t.deepEqual(e.filter((x) => x.startsWith('service:connect ->')).sort(), [
    'service:connect -> datastore:db',
    'service:connect -> queue:broker',
  ]);
  const rec = evidence.find((x) => x.evidence_kind === 'connector-reference');
  t.is(rec?.location.path, 'cdc/orders-source.json');
  t.is(rec?.location.start_line, 4);
});

test('without one Kafka Connect worker, a connector configuration makes no edge', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `${CDC_COMPOSE}  connect-2:
    image: confluentinc/cp-kafka-connect:7.6.0
`,
      'cdc/orders-source.json': connector('db'),
    }),
  );
  t.false(connections(graph).some((x) => x.endsWith('-> datastore:db')));
});
