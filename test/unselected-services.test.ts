/**
 * A Kubernetes Service that selects no Pod of the repository and that nothing addresses is no
 * deployable (issue 23, session 15): a NodePort opened onto a chart's Pods for local debugging
 * makes no entity of its own. Small repositories written here. Pure.
 */
import test from 'ava';
import {
  analyzeFileMap,
  connections as edges,
  deployment,
  entityKeys as keys,
} from './helpers/pipeline';

const COMPOSE = `services:
  api:
    build: { context: ., dockerfile: Api/Dockerfile }
    environment:
      DATABASE_URL: postgres://db:5432/app
  db:
    image: postgres:16
`;

/** A NodePort Service selecting `app: <app>`. */
const nodePort = (name: string, app: string, port: number) => `kind: Service
apiVersion: v1
metadata:
  name: ${name}
spec:
  type: NodePort
  selector:
    app: ${app}
  ports:
    - port: ${port}
      nodePort: 3${port}
`;

test('unselected service: a NodePort selecting no workload of the repository makes no entity', async (t) => {
  const { graph, evidence } = await analyzeFileMap({
    'src/docker-compose.yml': COMPOSE,
    'deploy/k8s/nodeports/db-service.yaml': nodePort('db-service', 'db-data', 5432),
  });
  const k = keys(graph);
  t.false(k.includes('service:db-service'), k.join(', '));
  t.true(k.includes('datastore:db'), k.join(', '));
  t.true(edges(graph).includes('service:api -> datastore:db'), edges(graph).join(', '));
  // Still evidence: the exposure is cited.
  t.true(
    evidence.some(
      (e) => e.evidence_kind === 'service-exposed' && e.subject_key === 'service:db-service',
    ),
  );
});

test('unselected service: a Service selecting a workload of its manifests names that workload', async (t) => {
  const { graph } = await analyzeFileMap({
    'k8s/api.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: { name: api }
spec:
  selector: { matchLabels: { app: api } }
  template:
    metadata: { labels: { app: api } }
    spec:
      containers:
        - { name: api, image: acme/api:1 }
---
${nodePort('api-public', 'api', 8080)}`,
  });
  t.true(keys(graph).includes('service:api'), keys(graph).join(', '));
  t.false(keys(graph).includes('service:api-public'), keys(graph).join(', '));
});

test('unselected service: a Service that selects nothing but that a workload addresses stays', async (t) => {
  const { graph } = await analyzeFileMap({
    'k8s/web.yaml': deployment('web', 'acme/web:1', { CACHE_URL: 'http://cache-service:8080' }),
    'k8s/cache-service.yaml': nodePort('cache-service', 'cache', 8080),
  });
  t.true(keys(graph).includes('service:cache-service'), keys(graph).join(', '));
  t.true(edges(graph).includes('service:web -> service:cache-service'), edges(graph).join(', '));
});

test('unselected service: a Service without a selector (its endpoints given otherwise) stays', async (t) => {
  const { graph } = await analyzeFileMap({
    'k8s/legacy.yaml': `kind: Service
apiVersion: v1
metadata:
  name: legacy-db
spec:
  ports:
    - port: 5432
`,
  });
  t.true(keys(graph).includes('service:legacy-db'), keys(graph).join(', '));
});
