/**
 * Kubernetes object names written as envsubst templates (analysis/cloud/kubernetes-placeholders.ts):
 * `cachestore-deployment-${STAGE:-dev}` is known by its `app.kubernetes.io/name` label, a name
 * with a placeholder and no label by the name read with the default, and a plain literal name
 * (`ledger-deployment`) keeps its name. Pure: no database.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeKubernetes } from '../analysis/cloud/kubernetes';
import { resolvePlaceholders } from '../analysis/cloud/kubernetes-placeholders';

const deployment = (name: string, label: string | null, image: string) => `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    tier: backend-\${STAGE:-dev}
${label ? `    app.kubernetes.io/name: ${label}\n` : ''}spec:
  selector:
    matchLabels:
      tier: ${label ?? 'none'}-\${STAGE:-dev}
  template:
    metadata:
      labels:
        tier: ${label ?? 'none'}-\${STAGE:-dev}
${label ? `        app.kubernetes.io/name: ${label}\n` : ''}    spec:
      containers:
        - name: main
          image: ${image}
`;
const service = (name: string, selects: string) => `---
apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  selector:
    tier: ${selects}-\${STAGE:-dev}
  ports:
    - port: 6379
`;
const ingress = `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web-ingress-\${STAGE:-dev}
spec:
  rules:
    - http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: cachestore-service-\${STAGE:-dev}
                port:
                  number: 6379
`;

const FILES: SourceFile[] = [
  {
    path: 'deploy/k8s/infra.yaml',
    text:
      deployment('cachestore-deployment-${STAGE:-dev}', 'cachestore', 'redis:7') +
      service('cachestore-service-${STAGE:-dev}', 'cachestore') +
      deployment('docstore-$STAGE', null, 'mongo:7') +
      ingress,
  },
  {
    path: 'deploy/k8s/ledger.yaml',
    text: deployment('ledger-deployment', 'ledger', 'acme/ledger:1'),
  },
];

function subjects(kind: string): string[] {
  const ev = analyzeKubernetes(FILES).evidence;
  return [...new Set(ev.filter((e) => e.evidence_kind === kind).map((e) => e.subject_key))].sort();
}

test('placeholder names: a templated workload name gives way to its name label', (t) => {
  const stores = subjects('datastore-declared');
  t.true(stores.includes('datastore:cachestore'), stores.join('; '));
  t.false(
    stores.some((s) => /deployment|stage|\$/.test(s)),
    stores.join('; '),
  );
});

test('placeholder names: with no name label the name is read with the default, else dropped', (t) => {
  const stores = subjects('datastore-declared');
  t.true(stores.includes('datastore:docstore'), stores.join('; '));
});

test('placeholder names: a Service and an Ingress backend with templated names reach the workload', (t) => {
  const ev = analyzeKubernetes(FILES).evidence;
  const routes = ev.filter((e) => e.evidence_kind === 'ingress-route').map((e) => e.object_key);
  t.deepEqual(routes, ['service:cachestore']);
  const exposed = ev.filter((e) => e.evidence_kind === 'service-exposed').map((e) => e.subject_key);
  t.deepEqual(exposed, ['service:cachestore']);
});

test('placeholder names: a plain literal workload name is never renamed to its label', (t) => {
  const workloads = subjects('workload-declared');
  t.true(workloads.includes('service:ledger-deployment'), workloads.join('; '));
  t.false(workloads.includes('service:ledger'), workloads.join('; '));
});

test('placeholder names: the placeholder forms resolve with their defaults', (t) => {
  t.is(resolvePlaceholders('db-${ENV:-dev}'), 'db-dev');
  t.is(resolvePlaceholders('db-${ENV-qa}-x'), 'db-qa-x');
  t.is(resolvePlaceholders('db-${ENV}'), 'db');
  t.is(resolvePlaceholders('$PREFIX-db'), 'db');
  t.is(resolvePlaceholders('plain-name'), 'plain-name');
  t.is(resolvePlaceholders('$ONLY'), '$ONLY');
});
