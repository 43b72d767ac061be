/**
 * A Zuul proxy over Eureka (issue 23, session 15): `@EnableZuulProxy` with a Eureka client and no
 * `zuul.routes` routes `/<serviceId>/**` to every service registered in the same Eureka, unless
 * `zuul.ignored-services` excludes them ('*' all of them). Small repositories written here. Pure.
 */
import test from 'ava';
import { simpleMatch } from '../analysis/reconcile-registry-catalog';
import { eurekaHosts } from '../analysis/code/eureka-registration';
import { analyzeFileMap, connections as edges } from './helpers/pipeline';

const pom = (artifact: string, starters: string[]) => `<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>${artifact}</artifactId>
  <dependencies>
${starters
  .map(
    (s) => `    <dependency>
      <groupId>org.springframework.cloud</groupId>
      <artifactId>${s}</artifactId>
    </dependency>`,
  )
  .join('\n')}
  </dependencies>
</project>
`;

const EUREKA_CLIENT = 'spring-cloud-starter-netflix-eureka-client';

const app = (dir: string, name: string, zone: string, starters = [EUREKA_CLIENT], extra = '') => ({
  [`${dir}/pom.xml`]: pom(dir, starters),
  [`${dir}/src/main/resources/application.properties`]: `spring.application.name=${name}\neureka.client.serviceUrl.defaultZone=${zone}\n${extra}`,
  [`${dir}/src/main/java/com/acme/App.java`]: `package com.acme;
@SpringBootApplication
@EnableDiscoveryClient
public class App { public static void main(String[] a) { SpringApplication.run(App.class, a); } }
`,
});

const ZONE = 'http://registry:8761/eureka/';

const repo = (
  zuul: { settings?: string; annotation?: string; zone?: string; starter?: string } = {},
  more: Record<string, string> = {},
) => ({
  'docker/docker-compose.yml': `services:
  registry:
    build: ../registry
  edge:
    build: ../edge
  orders:
    build: ../orders
  stock:
    build: ../stock
`,
  'registry/pom.xml': pom('registry', ['spring-cloud-starter-netflix-eureka-server']),
  'registry/src/main/resources/application.yml': `spring:\n  application:\n    name: registry\nserver:\n  port: 8761\n`,
  ...app('orders', 'orders', ZONE),
  ...app('stock', 'stock', ZONE),
  'edge/pom.xml': pom('edge', [EUREKA_CLIENT, zuul.starter ?? 'spring-cloud-starter-netflix-zuul']),
  'edge/src/main/resources/bootstrap.yml': `spring:
  application:
    name: edge
eureka:
  client:
    serviceUrl:
      defaultZone: ${zuul.zone ?? ZONE}
${zuul.settings ?? ''}`,
  'edge/src/main/java/com/acme/EdgeApp.java': `package com.acme;
${zuul.annotation ?? '@EnableZuulProxy'}
@SpringBootApplication
public class EdgeApp { public static void main(String[] a) { SpringApplication.run(EdgeApp.class, a); } }
`,
  ...more,
});

test('zuul: @EnableZuulProxy over Eureka routes to every service registered in the same Eureka', async (t) => {
  const { graph, evidence } = await analyzeFileMap(repo());
  const all = edges(graph);
  t.true(all.includes('service:edge -> service:orders'), all.join('\n'));
  t.true(all.includes('service:edge -> service:stock'), all.join('\n'));
  t.true(all.includes('service:edge -> service:registry'), all.join('\n'));
  // The proxy's own registration and the server (which does not register) are no route.
  t.false(all.includes('service:edge -> service:edge'));
  const route = evidence.find((e) => e.evidence_kind === 'registry-catalog-route');
  t.is(route?.location.path, 'edge/src/main/java/com/acme/EdgeApp.java');
  t.is(route?.location.start_line, 2);
  t.is(route?.attributes.registry, 'eureka');
  t.is(route?.attributes.registry_host, 'registry');
});

test("zuul: ignored-services '*' leaves only the explicit routes", async (t) => {
  const { graph } = await analyzeFileMap(
    repo({
      settings: `zuul:
  ignored-services: '*'
  routes:
    stock:
      path: /stock/**
      serviceId: stock
`,
    }),
  );
  const all = edges(graph);
  t.true(all.includes('service:edge -> service:stock'), all.join('\n'));
  t.false(all.includes('service:edge -> service:orders'), all.join('\n'));
});

test('zuul: ignored-services patterns exclude the services they match', async (t) => {
  const { graph } = await analyzeFileMap(repo({ settings: `zuul:\n  ignored-services: ord*\n` }));
  const all = edges(graph);
  t.false(all.includes('service:edge -> service:orders'), all.join('\n'));
  t.true(all.includes('service:edge -> service:stock'), all.join('\n'));
});

test('zuul: without @EnableZuulProxy, or with another Eureka host, no catalog route', async (t) => {
  for (const r of [
    repo({ annotation: '@EnableDiscoveryClient' }),
    repo({ zone: 'http://other-registry:8761/eureka/' }),
    repo({ starter: 'spring-boot-starter-web' }),
    repo(
      { zone: 'http://localhost:8761/eureka/' },
      {
        ...app('orders', 'orders', 'http://localhost:8761/eureka/'),
        ...app('stock', 'stock', 'http://localhost:8761/eureka/'),
      },
    ),
  ]) {
    const all = edges((await analyzeFileMap(r)).graph);
    t.false(all.includes('service:edge -> service:orders'), all.join('\n'));
    t.false(all.includes('service:edge -> service:stock'), all.join('\n'));
  }
});

test('zuul: a client that does not register with Eureka is no route target', async (t) => {
  const { graph } = await analyzeFileMap(
    repo(
      {},
      app('stock', 'stock', ZONE, [EUREKA_CLIENT], 'eureka.client.register-with-eureka=false\n'),
    ),
  );
  const all = edges(graph);
  t.true(all.includes('service:edge -> service:orders'), all.join('\n'));
  t.false(all.includes('service:edge -> service:stock'), all.join('\n'));
});

test('eureka hosts and Zuul ignored-services patterns', (t) => {
  t.deepEqual(eurekaHosts('http://eureka:8761/eureka/,http://peer2:8762/eureka/'), [
    'eureka',
    'peer2',
  ]);
  t.deepEqual(eurekaHosts('${EUREKA_URI:http://Registry:8761/eureka}'), ['registry']);
  t.deepEqual(eurekaHosts('not a url'), []);
  t.true(simpleMatch('ord*', 'orders'));
  t.true(simpleMatch('*-svc', 'orders-svc'));
  t.true(simpleMatch('a*b*c', 'axxbyyc'));
  t.false(simpleMatch('a*b*c', 'acb'));
  t.false(simpleMatch('orders', 'orders2'));
  t.true(simpleMatch('*', 'x'));
});

test("zuul: ignoredServices '*' in the file a config server serves the proxy is read", async (t) => {
  const { graph } = await analyzeFileMap(
    repo(
      {},
      {
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
`,
        'config/src/main/resources/shared/edge.yml': `zuul:\n  ignoredServices: '*'\n`,
      },
    ),
  );
  const all = edges(graph);
  t.false(all.includes('service:edge -> service:orders'), all.join('\n'));
  t.false(all.includes('service:edge -> service:stock'), all.join('\n'));
});
