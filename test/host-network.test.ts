/**
 * Containers on the host network, Micronaut identities and declarative clients, and Maven
 * library modules of separate builds (issue 23, session 12): a compose service with
 * `network_mode: host` reaches `localhost:<port>`, the one unit listening on that host port.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeFiles, connections, entityKeys } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const pom = (artifact: string, deps: string[] = [], plugins = '') => `<?xml version="1.0"?>
<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>example.shop</groupId>
  <artifactId>${artifact}</artifactId>
  <version>1.0</version>
  <dependencies>
    <dependency>
      <groupId>io.micronaut</groupId>
      <artifactId>micronaut-http-client</artifactId>
    </dependency>
${deps
  .map(
    (d) => `    <dependency>
      <groupId>example.shop</groupId>
      <artifactId>${d}</artifactId>
      <version>1.0</version>
    </dependency>`,
  )
  .join('\n')}
  </dependencies>
  <build><plugins>${plugins}</plugins></build>
</project>
`;

const app = (pkg: string, cls: string) => `package example.${pkg};

import io.micronaut.runtime.Micronaut;

public class ${cls} {
    public static void main(String[] args) {
        Micronaut.run(${cls}.class);
    }
}
`;

const compose = (network: string) => `services:
  consul:
    image: consul
    ${network}
  kafka:
    image: "bitnami/kafka:latest"
    ${network}
  mongo:
    image: mongo
    ${network}
  reports:
    image: example/reports
    ports:
      - 5488:5488
  orders:
    build: ./orders
    ${network}
  pricing:
    build: ./pricing
    ${network}
  web:
    build: ./web
    ${network}
`;

const system = (network: string) =>
  files({
    'docker-compose.yml': compose(network),
    'orders/pom.xml': pom('orders', ['orders-api']),
    'orders/Dockerfile': 'FROM eclipse-temurin:17\nCOPY target/orders.jar /app.jar\n',
    'orders/src/main/java/example/orders/OrdersApplication.java': app(
      'orders',
      'OrdersApplication',
    ),
    'orders/src/main/java/example/orders/PricingClient.java': `package example.orders;

import io.micronaut.http.client.annotation.Client;

@Client(id = "pricing-svc")
public interface PricingClient {}
`,
    'orders/src/main/resources/application.yml': `micronaut:
  application:
    name: orders-svc
  server:
    port: \${SERVICE_PORT:8081}
---
consul:
  client:
    registration:
      enabled: true
    defaultZone: "\${CONSUL_HOST:localhost}:\${CONSUL_PORT:8500}"
---
kafka:
  bootstrap:
    servers: "\${KAFKA_HOST:localhost}:\${KAFKA_PORT:9092}"
---
mongodb:
  uri: "mongodb://\${MG_HOST:localhost}:\${MG_PORT:27017}/orders"
---
reports:
  host: \${REPORTS_HOST:localhost}
  port: \${REPORTS_PORT:5488}
`,
    // The interfaces and DTOs the service builds against: a separate Maven build, no main,
    // though it copies the application plugins.
    'orders-api/pom.xml': pom(
      'orders-api',
      [],
      '<plugin><groupId>io.micronaut.build</groupId><artifactId>micronaut-maven-plugin</artifactId></plugin>',
    ),
    'orders-api/src/main/java/example/orders/api/OrderDto.java':
      'package example.orders.api;\n\npublic class OrderDto {}\n',
    'pricing/pom.xml': pom('pricing'),
    'pricing/Dockerfile': 'FROM eclipse-temurin:17\nCOPY target/pricing.jar /app.jar\n',
    'pricing/src/main/java/example/pricing/PricingApplication.java': app(
      'pricing',
      'PricingApplication',
    ),
    'pricing/src/main/resources/application.yml': `micronaut:
  application:
    name: pricing-svc
  server:
    port: \${SERVICE_PORT:-1}
consul:
  client:
    defaultZone: "\${CONSUL_HOST:localhost}:\${CONSUL_PORT:8500}"
`,
    'web/Dockerfile':
      'FROM nginx\nENV API_URL=http://localhost:8081\nCOPY dist /usr/share/nginx/html\n',
    'web/package.json': '{ "name": "web", "private": true, "dependencies": { "vue": "^2.6.0" } }\n',
  });

test('host network: localhost addresses reach the one unit listening on that host port', async (t) => {
  const { graph } = await analyzeFiles(system('network_mode: host'));
  const c = connections(graph);
  for (const edge of [
    'service:orders -> service:consul',
    'service:pricing -> service:consul',
    'service:orders -> queue:kafka',
    'service:orders -> datastore:mongo',
    'service:orders -> service:reports',
    'service:web -> service:orders',
  ])
    t.true(c.includes(edge), edge);
  // An image's default port alone is a weak inference.
  const consul = graph.relationships.find(
    (r) => r.source_key === 'service:pricing' && r.target_key === 'service:consul',
  );
  t.true(Number(consul?.confidence) < 0.5);
});

test('Micronaut: the application name is the identity @Client(id) calls', async (t) => {
  const { graph, evidence } = await analyzeFiles(system('network_mode: host'));
  t.true(connections(graph).includes('service:orders -> service:pricing'));
  const id = evidence.find(
    (e) => e.evidence_kind === 'service-id-declared' && e.subject_key === 'service:orders',
  );
  t.is(id?.provider, 'micronaut');
  t.is(id?.attributes.service_id, 'orders-svc');
  t.is(id?.location.path, 'orders/src/main/resources/application.yml');
});

test('a bridged container: its localhost is itself, nothing resolves by port', async (t) => {
  const { graph } = await analyzeFiles(system(''));
  const c = connections(graph);
  for (const target of ['service:consul', 'queue:kafka', 'datastore:mongo', 'service:reports'])
    t.false(c.includes(`service:orders -> ${target}`), target);
  t.false(c.includes('service:web -> service:orders'));
  // Service discovery by id does not depend on the network.
  t.true(c.includes('service:orders -> service:pricing'));
});

test('two units listening on one host port: which one is unknown, no edge', async (t) => {
  const base = system('network_mode: host');
  const withTwin = [
    ...base.map((f) =>
      f.path === 'docker-compose.yml'
        ? {
            ...f,
            text: `${f.text}  reports-copy:\n    image: example/reports\n    ports:\n      - 5488:5488\n`,
          }
        : f,
    ),
  ];
  const c = connections((await analyzeFiles(withTwin)).graph);
  t.false(c.some((e) => e.startsWith('service:orders -> service:reports')));
});

test('a Maven module another build depends on, without a main class, is a library', async (t) => {
  const { graph, evidence } = await analyzeFiles(system('network_mode: host'));
  t.false(entityKeys(graph).includes('service:orders-api'));
  const unit = evidence.find(
    (e) => e.evidence_kind === 'unit-declared' && e.subject_key === 'service:orders-api',
  );
  t.is(unit?.attributes.unit_class, 'library');
});
