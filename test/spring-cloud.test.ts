/**
 * Spring Cloud: a config server's native backend serving `shared/{app}.yml` to the application
 * of that name and `shared/application.yml` to every client, identities from
 * `spring.application.name`, Feign clients and Zuul routes by service id, nested
 * `spring.data.mongodb.*` / `spring.rabbitmq.*` / `spring.kafka.*` / `spring.datasource.*`
 * settings. The settings a config server holds for its clients are never its own calls. A small
 * system written for this test.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';
import { analyzeFiles } from './helpers/pipeline';

const edges = (g: Graph) => g.relationships.map((r) => `${r.source_key} -> ${r.target_key}`);

const pom = (artifact: string, deps: string[]) => `<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.shop</groupId>
  <artifactId>${artifact}</artifactId>
  <version>1.0.0</version>
  <dependencies>
${deps.map((d) => `    <dependency><groupId>org.springframework.cloud</groupId><artifactId>${d}</artifactId></dependency>`).join('\n')}
    <dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-web</artifactId></dependency>
  </dependencies>
</project>`;

const bootstrap = (name: string) => `spring:
  application:
    name: ${name}
  cloud:
    config:
      uri: http://config:8888
`;

const SYSTEM: Record<string, string> = {
  'config/pom.xml': pom('config', ['spring-cloud-config-server']),
  'config/src/main/resources/application.yml': `spring:
  application:
    name: config
  profiles:
    active: native
  cloud:
    config:
      server:
        native:
          search-locations: classpath:/shared
server:
  port: 8888
`,
  'config/src/main/java/shop/ConfigApplication.java':
    '@EnableConfigServer @SpringBootApplication public class ConfigApplication {}\n',
  'config/src/main/resources/shared/application.yml': `eureka:
  client:
    serviceUrl:
      defaultZone: http://registry:8761/eureka/
`,
  'config/src/main/resources/shared/account-service.yml': `spring:
  data:
    mongodb:
      host: account-mongodb
      database: accounts
  rabbitmq:
    host: rabbitmq
server:
  port: 6000
`,
  'config/src/main/resources/shared/statistics-service-docker.yml': `spring:
  datasource:
    url: jdbc:postgresql://stats-db:5432/stats
  kafka:
    bootstrap-servers: kafka:9092
`,
  'config/src/main/resources/shared/gateway.yml': `zuul:
  routes:
    accounts:
      path: /accounts/**
      serviceId: account-service
    uaa:
      path: /uaa/**
      url: http://auth-service:5000
`,
  'registry/pom.xml': pom('registry', ['spring-cloud-starter-netflix-eureka-server']),
  'registry/src/main/resources/bootstrap.yml': bootstrap('registry'),
  'account/pom.xml': pom('account', [
    'spring-cloud-starter-config',
    'spring-cloud-starter-openfeign',
    'spring-cloud-starter-netflix-eureka-client',
  ]),
  'account/src/main/resources/bootstrap.yml': bootstrap('account-service'),
  'account/src/main/java/shop/StatisticsClient.java': `package shop;
@FeignClient(name = "statistics-service")
public interface StatisticsClient { void update(); }
`,
  'statistics/pom.xml': pom('statistics', [
    'spring-cloud-starter-config',
    'spring-cloud-starter-netflix-eureka-client',
  ]),
  'statistics/src/main/resources/bootstrap.yml': bootstrap('statistics-service'),
  'gateway/pom.xml': pom('gateway', [
    'spring-cloud-starter-config',
    'spring-cloud-starter-netflix-zuul',
  ]),
  'gateway/src/main/resources/bootstrap.yml': bootstrap('gateway'),
};

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

test('a native config server serves each application its settings; they are never its own', async (t) => {
  const { graph } = await analyzeFiles(files(SYSTEM));
  const e = edges(graph);
  const msg = e.join('\n');
  // Served by name: `shared/account-service.yml` configures the unit named account-service.
  t.true(e.includes('service:account -> datastore:account-mongodb'), msg);
  t.true(e.includes('service:account -> queue:rabbitmq'), msg);
  // `{app}-{profile}.yml`, and a unit whose artifact is not its application name.
  t.true(e.includes('service:statistics -> datastore:stats-db'), msg);
  t.true(e.includes('service:statistics -> queue:kafka'), msg);
  // Feign by service id resolves to the unit through its spring.application.name.
  t.true(e.includes('service:account -> service:statistics'), msg);
  // Zuul routes: by serviceId and by url.
  t.true(e.includes('service:gateway -> service:account'), msg);
  t.true(e.includes('service:gateway -> service:auth-service'), msg);
  // `shared/application.yml` is every client's: each reaches the registry.
  for (const c of ['account', 'statistics', 'gateway'])
    t.true(e.includes(`service:${c} -> service:registry`), `${c}: ${msg}`);
  // Config clients fetch from the server.
  t.true(e.includes('service:account -> service:config'), msg);
  // Must not: the config server's "calls" to what its clients use.
  t.deepEqual(
    e.filter((x) => x.startsWith('service:config ->')),
    [],
  );
  // No entity named after the served file or the application names twice.
  const keys = graph.entities.map((x) => x.canonical_key);
  t.false(keys.includes('service:account-service'), keys.join(', '));
  t.false(keys.includes('service:statistics-service'), keys.join(', '));
});

test('without a config server, the shared folder is nobody`s settings but its owner`s', async (t) => {
  const rest = Object.fromEntries(
    Object.entries(SYSTEM).filter(([p]) => !p.startsWith('config/pom.xml')),
  );
  const { graph } = await analyzeFiles(files(rest));
  // No config server: nothing is served, so account has no mongodb edge from shared files.
  t.false(edges(graph).includes('service:account -> datastore:account-mongodb'));
});
