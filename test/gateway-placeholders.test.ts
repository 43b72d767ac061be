/**
 * Spring Cloud Gateway routes whose URI is a placeholder (analysis/code/gateways.ts): resolved
 * from the same file's settings, else the placeholder's default; a local default names nobody.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeFiles, connections } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

test('spring cloud gateway: a placeholder route URI reads the setting it names', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  edge:
    build: ./edge
  billing:
    image: acme/billing:1
  shipping:
    image: acme/shipping:1
  stock:
    image: acme/stock:1
`,
      'edge/pom.xml': '<project><artifactId>edge</artifactId></project>',
      'edge/src/main/resources/application.yml': `billing:
  destinations:
    url: http://billing:8080
spring:
  cloud:
    gateway:
      routes:
        - id: invoices
          uri: \${billing.destinations.url}
        - id: parcels
          uri: \${SHIPPING_URL:http://shipping:8080}
        - id: stock
          uri: \${stock.url:http://\${DOCKER_HOST_IP:localhost}:8083}
`,
    }),
  );
  const edges = connections(graph).filter((c) => c.startsWith('service:edge'));
  t.deepEqual(edges, ['service:edge -> service:billing', 'service:edge -> service:shipping']);
  const route = evidence.find(
    (e) => e.evidence_kind === 'proxy-route' && e.object_key === 'service:billing',
  );
  t.is(route?.attributes.setting, 'billing.destinations.url');
});
