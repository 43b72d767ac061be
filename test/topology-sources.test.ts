/**
 * Topology stated outside the callers' address configuration, on small file sets written here:
 * Kubernetes NetworkPolicies (who may reach whom), service registries and discovery by service
 * id (Eureka, DiscoveryClient, Feign, `lb://`), and Dapr (components, scopes, invocation by app id).
 */
import test from 'ava';
import { analyzeFiles } from './helpers/pipeline';
import type { Graph } from '../analysis/reconcile';

const edges = (g: Graph) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to')
    .map((r) => `${r.source_key} -> ${r.target_key}`)
    .sort();

const deployment = (name: string, image: string, port = 80) => `---
apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: shop }
spec:
  template:
    metadata: { labels: { name: ${name} } }
    spec:
      containers:
        - name: ${name}
          image: ${image}
          ports: [{ containerPort: ${port} }]
`;

test('network policies: each ingress from-pod and egress to-pod selector is a connection; empty selectors and other namespaces are not', async (t) => {
  const { graph, evidence } = await analyzeFiles([
    {
      path: 'k8s/apps.yaml',
      text:
        deployment('web', 'acme/web:1') +
        deployment('orders', 'acme/orders:1') +
        deployment('mq', 'rabbitmq:3.13', 5672),
    },
    {
      path: 'k8s/policies.yaml',
      text: `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: orders-access, namespace: shop }
spec:
  podSelector: { matchLabels: { name: orders } }
  ingress:
    - from:
        - podSelector: { matchLabels: { name: web } }
        - podSelector: { matchLabels: { name: admin } }
          namespaceSelector: { matchLabels: { team: ops } }
      ports: [{ protocol: TCP, port: 80 }]
  egress:
    - to:
        - podSelector: { matchLabels: { name: mq } }
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: cart-access, namespace: shop }
spec:
  podSelector: { matchLabels: { name: cart } }
  ingress:
    - from:
        - podSelector: { matchLabels: { name: web } }
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: scraper-access, namespace: shop }
spec:
  podSelector: {}
  ingress:
    - from:
        - podSelector: { matchLabels: { name: scraper } }
`,
    },
  ]);
  // `cart` selects no pod of these files: its name label names it (a service declared elsewhere).
  t.deepEqual(edges(graph), [
    'service:orders -> queue:mq',
    'service:web -> service:cart',
    'service:web -> service:orders',
  ]);
  const policy = evidence.find(
    (e) => e.evidence_kind === 'network-policy' && e.object_key === 'service:orders',
  )!;
  t.is(policy.location.path, 'k8s/policies.yaml');
  t.is(policy.location.start_line, 8);
  t.deepEqual(policy.attributes.ports, [80]);
});

const pom = (artifact: string, deps: string[]) =>
  `<project>
  <artifactId>${artifact}</artifactId>
  <dependencies>
${deps.map((d) => `    <dependency>\n      <groupId>org.springframework.cloud</groupId>\n      <artifactId>${d}</artifactId>\n    </dependency>`).join('\n')}
  </dependencies>
</project>
`;

test('service registry: every Eureka client connects to the one Eureka server unit; discovery by service id in code', async (t) => {
  const { graph, evidence } = await analyzeFiles([
    {
      path: 'registry/pom.xml',
      text: pom('registry', ['spring-cloud-starter-netflix-eureka-server']),
    },
    {
      path: 'customers/pom.xml',
      text: pom('customers', ['spring-cloud-starter-netflix-eureka-client']),
    },
    {
      path: 'assistant/pom.xml',
      text: pom('assistant', ['spring-cloud-starter-netflix-eureka-client']),
    },
    {
      path: 'assistant/src/main/java/a/Data.java',
      text: [
        'class Data {',
        '  URI u() { return discoveryClient.getInstances("customers").get(0).getUri(); }',
        '  // discoveryClient.getInstances("commented-out")',
        '}',
        '@FeignClient(name = "visits")',
        'interface Visits {}',
      ].join('\n'),
    },
  ]);
  t.deepEqual(edges(graph), [
    'service:assistant -> service:customers',
    'service:assistant -> service:registry',
    'service:assistant -> service:visits',
    'service:customers -> service:registry',
  ]);
  const reg = evidence.find(
    (e) => e.evidence_kind === 'registry-client' && e.subject_key === 'service:customers',
  )!;
  t.is(reg.location.path, 'customers/pom.xml');
  t.is(reg.location.start_line, 4);
});

test('service registry: with two Eureka server units the registry is unknown and nothing is said', async (t) => {
  const { graph } = await analyzeFiles([
    { path: 'r1/pom.xml', text: pom('r1', ['spring-cloud-starter-netflix-eureka-server']) },
    { path: 'r2/pom.xml', text: pom('r2', ['spring-cloud-starter-netflix-eureka-server']) },
    { path: 'app/pom.xml', text: pom('app', ['spring-cloud-starter-netflix-eureka-client']) },
  ]);
  t.deepEqual(edges(graph), []);
});

test('dapr: components are datastores and queues with their engine, scopes and code usage connect apps to them, invocation by app id reaches the app', async (t) => {
  const { graph } = await analyzeFiles([
    {
      path: 'deploy/apps.yaml',
      text: `apiVersion: apps/v1
kind: Deployment
metadata: { name: order-processor }
spec:
  template:
    metadata:
      labels: { app: orders }
      annotations: { dapr.io/enabled: "true", dapr.io/app-id: orders }
    spec:
      containers: [{ name: app, image: acme/orders:1 }]
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: checkout }
spec:
  template:
    metadata:
      labels: { app: checkout }
      annotations: { dapr.io/app-id: checkout }
    spec:
      containers: [{ name: app, image: acme/checkout:1 }]
`,
    },
    {
      path: 'components/statestore.yaml',
      text: `apiVersion: dapr.io/v1alpha1
kind: Component
metadata: { name: statestore }
spec:
  type: state.redis
  version: v1
  metadata:
    - { name: redisHost, value: "redis-master:6379" }
scopes: [orders]
`,
    },
    {
      path: 'components/pubsub.yaml',
      text: `apiVersion: dapr.io/v1alpha1
kind: Component
metadata: { name: orderpubsub }
spec:
  type: pubsub.rabbitmq
  version: v1
---
apiVersion: dapr.io/v1alpha1
kind: Component
metadata: { name: secrets }
spec:
  type: secretstores.local.file
`,
    },
    {
      path: 'checkout/checkout.csproj',
      text: '<Project Sdk="Microsoft.NET.Sdk.Web"></Project>',
    },
    {
      path: 'checkout/Dockerfile',
      text: 'FROM mcr.microsoft.com/dotnet/aspnet:8.0\nEXPOSE 8080\n',
    },
    {
      path: 'checkout/Program.cs',
      text: [
        'await client.PublishEventAsync("orderpubsub", "orders", order);',
        'var r = await client.InvokeMethodAsync<Order>(HttpMethod.Post, "orders", "process", order);',
        'var h = DaprClient.CreateInvokeHttpClient("inventory");',
        'var s = await client.GetStateAsync<Order>("statestore", "k");',
      ].join('\n'),
    },
  ]);
  t.deepEqual(edges(graph), [
    'service:checkout -> datastore:statestore',
    'service:checkout -> queue:orderpubsub',
    'service:checkout -> service:inventory',
    'service:checkout -> service:order-processor',
    'service:order-processor -> datastore:statestore',
  ]);
  const attrs = (k: string) => graph.entities.find((e) => e.canonical_key === k)!.attributes;
  t.is(attrs('datastore:statestore').engine, 'redis');
  t.deepEqual(attrs('datastore:statestore').backing_hosts, ['redis-master']);
  t.is(attrs('queue:orderpubsub').engine, 'rabbitmq');
  t.false(graph.entities.some((e) => e.name === 'secrets'));
});

test('dapr calls are read only in files that use Dapr: an immutable state map or another publish is no component', async (t) => {
  const { graph } = await analyzeFiles([
    {
      path: 'web/package.json',
      text: JSON.stringify({ name: 'web', scripts: { start: 'node s.js' }, dependencies: {} }),
    },
    {
      path: 'web/src/store.js',
      text: "const items = this.state.get('items');\nbus.pubsub.publish('events', x);\n",
    },
  ]);
  t.deepEqual(edges(graph), []);
});
