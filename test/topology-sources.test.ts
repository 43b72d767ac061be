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
