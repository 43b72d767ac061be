/**
 * Calls through a Consul registry that no address names (issue 23, session 15):
 * - Spring Cloud's client-side load balancer picks an instance by service id
 *   (`loadBalancer.choose("CATALOG")`), the id looked up case-insensitively like registries do;
 * - a Consul Template file ranging over every service of the catalog renders a proxy to each
 *   service registering in the same Consul.
 * Small repositories written here. Pure.
 */
import test from 'ava';
import { catalogRanges } from '../analysis/cloud/consul-template';
import { analyzeFileMap, connections as edges } from './helpers/pipeline';

const pom = (artifact: string) => `<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>${artifact}</artifactId>
  <dependencies>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter-web</artifactId>
    </dependency>
    <dependency>
      <groupId>org.springframework.cloud</groupId>
      <artifactId>spring-cloud-starter-consul-discovery</artifactId>
    </dependency>
  </dependencies>
</project>
`;

const app = (dir: string, name: string) => ({
  [`${dir}/pom.xml`]: pom(dir),
  [`${dir}/src/main/resources/application.properties`]: `spring.application.name=${name}\nspring.cloud.consul.host=consul\n`,
  [`${dir}/src/main/java/com/acme/App.java`]: `package com.acme;
@SpringBootApplication
@EnableDiscoveryClient
public class App { public static void main(String[] a) { SpringApplication.run(App.class, a); } }
`,
});

const client = (cls: string, body: string) => `package com.acme.clients;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
@Component
public class ${cls} {
  private LoadBalancerClient loadBalancer;
  @Autowired(required = false)
  public void setLoadBalancer(LoadBalancerClient loadBalancer) { this.loadBalancer = loadBalancer; }
  private String url() {
${body}
  }
}
`;

const compose = `services:
  consul:
    image: consul:1.8.4
  orders:
    build: ../orders-app
  stock:
    build: ../stock-app
  billing:
    build: ../billing-app
`;

const repo = (body: string, extra: Record<string, string> = {}) => ({
  'docker/docker-compose.yml': compose,
  ...app('orders-app', 'orders'),
  ...app('stock-app', 'stock'),
  ...app('billing-app', 'billing'),
  'orders-app/src/main/java/com/acme/clients/StockClient.java': client('StockClient', body),
  ...extra,
});

test('load balancer: choose("STOCK") on a LoadBalancerClient reaches the service registered as stock', async (t) => {
  const { graph, evidence } = await analyzeFileMap(
    repo(`    ServiceInstance i = loadBalancer.choose("STOCK");
    return String.format("http://%s:%s/stock/", i.getHost(), i.getPort());`),
  );
  t.true(edges(graph).includes('service:orders -> service:stock'), edges(graph).join('\n'));
  const e = evidence.find((x) => x.attributes.via === 'load-balancer-client');
  t.truthy(e);
  t.is(e?.location.path, 'orders-app/src/main/java/com/acme/clients/StockClient.java');
  t.is(e?.location.start_line, 10);
});

test('load balancer: execute("billing", ...) through this.loadBalancer reaches billing', async (t) => {
  const { graph } = await analyzeFileMap(
    repo(
      `    return this.loadBalancer.execute("billing", instance -> instance.getUri().toString());`,
    ),
  );
  t.true(edges(graph).includes('service:orders -> service:billing'), edges(graph).join('\n'));
});

test('load balancer: choose() on something that is no LoadBalancerClient says nothing', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker/docker-compose.yml': compose,
    ...app('orders-app', 'orders'),
    ...app('stock-app', 'stock'),
    ...app('billing-app', 'billing'),
    'orders-app/src/main/java/com/acme/clients/Picker.java': `package com.acme.clients;
public class Picker {
  private Chooser chooser;
  String pick() { return chooser.choose("STOCK"); }
}
`,
  });
  t.false(edges(graph).includes('service:orders -> service:stock'), edges(graph).join('\n'));
});

test('load balancer: a call from test code draws no edge', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker/docker-compose.yml': compose,
    ...app('orders-app', 'orders'),
    ...app('stock-app', 'stock'),
    ...app('billing-app', 'billing'),
    'orders-app/src/test/java/com/acme/clients/StockClient.java': client(
      'StockClient',
      `    return loadBalancer.choose("STOCK").getUri().toString();`,
    ),
  });
  t.false(edges(graph).includes('service:orders -> service:stock'), edges(graph).join('\n'));
});

// ---------------------------------------------------------------------------------------------
// Consul Template: a proxy rendered for every service of the catalog

const CATALOG_TEMPLATE = `<VirtualHost *:80>
  ProxyPreserveHost On
{{range services}}
<Proxy balancer://{{.Name}}>
{{range service .Name}}  BalancerMember http://{{.Address}}:{{.Port}}
{{end}}
</Proxy>
  ProxyPass        /{{.Name}} balancer://{{.Name}}
{{end}}
</VirtualHost>
`;

const PROXY_DOCKERFILE = `FROM ubuntu:22.04
RUN apt-get install -y apache2 && a2enmod proxy proxy_http proxy_balancer lbmethod_byrequests
COPY site.ctmpl /etc/apache2/sites-enabled/site.ctmpl
EXPOSE 80
CMD /usr/bin/consul-template -consul-addr consul:8500 -template "/etc/apache2/sites-enabled/site.ctmpl:/etc/apache2/sites-enabled/000-default.conf:apache2ctl -k graceful"
`;

const proxied = (template: string, extra: Record<string, string> = {}) => ({
  'docker/docker-compose.yml': `${compose}  edge:
    build: edge
    ports: ["8080:80"]
`,
  ...app('orders-app', 'orders'),
  ...app('stock-app', 'stock'),
  ...app('billing-app', 'billing'),
  'docker/edge/Dockerfile': PROXY_DOCKERFILE,
  'docker/edge/site.ctmpl': template,
  ...extra,
});

test('consul-template: a range over every service proxies to each service registering in that Consul', async (t) => {
  const { graph, evidence } = await analyzeFileMap(proxied(CATALOG_TEMPLATE));
  const e = edges(graph);
  for (const s of ['orders', 'stock', 'billing'])
    t.true(e.includes(`service:edge -> service:${s}`), e.join('\n'));
  const route = evidence.find((x) => x.evidence_kind === 'registry-catalog-route');
  t.is(route?.location.path, 'docker/edge/site.ctmpl');
  t.is(route?.location.start_line, 3);
  t.is(route?.attributes.registry_host, 'consul');
});

test('consul-template: a service registering in another Consul is not proxied', async (t) => {
  const { graph } = await analyzeFileMap(
    proxied(CATALOG_TEMPLATE, {
      'billing-app/src/main/resources/application.properties':
        'spring.application.name=billing\nspring.cloud.consul.host=other-consul\n',
    }),
  );
  const e = edges(graph);
  t.true(e.includes('service:edge -> service:stock'), e.join('\n'));
  t.false(e.includes('service:edge -> service:billing'), e.join('\n'));
});

test('consul-template: a range that filters services by tag or name draws no edge', async (t) => {
  for (const filtered of [
    CATALOG_TEMPLATE.replace(
      '{{range services}}',
      '{{range services}}{{if in .Tags "web"}}',
    ).replace('</Proxy>', '</Proxy>{{end}}'),
    CATALOG_TEMPLATE.replace('{{range service .Name}}', '{{range service (print "web." .Name)}}'),
    CATALOG_TEMPLATE.replace('{{range services}}', '{{range services "@dc2"}}'),
  ]) {
    const { graph } = await analyzeFileMap(proxied(filtered));
    t.false(
      edges(graph).some((x) => /^service:edge -> service:(orders|stock|billing)$/.test(x)),
      edges(graph).join('\n'),
    );
  }
});

test('consul-template: a template no consul-template command renders draws no edge', async (t) => {
  const { graph } = await analyzeFileMap(
    proxied(CATALOG_TEMPLATE, {
      'docker/edge/Dockerfile': PROXY_DOCKERFILE.replace(
        /^CMD .*$/m,
        'CMD ["apache2ctl", "-D", "FOREGROUND"]',
      ),
    }),
  );
  t.false(edges(graph).includes('service:edge -> service:stock'), edges(graph).join('\n'));
});

test('consul-template: catalogRanges reads unfiltered ranges only, linearly on hostile text', (t) => {
  t.is(catalogRanges(CATALOG_TEMPLATE).length, 1);
  t.is(
    catalogRanges(
      CATALOG_TEMPLATE.replace('{{range services}}', '{{range services}}{{with .Tags}}{{end}}'),
    ).length,
    0,
  );
  const hostile = `${'{{ '.repeat(50_000)}${' '.repeat(100_000)}`;
  const started = Date.now();
  t.deepEqual(catalogRanges(hostile), []);
  t.true(Date.now() - started < 2000);
});
