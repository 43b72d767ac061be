/**
 * Names resolve within their deployment variant (issue 23 item 1, analysis/cloud/kubernetes-nearest.ts):
 * two manifest folders of one system each declare a ConfigMap `db-config` with a different
 * database host; each workload reads its own folder's. Pure: no database.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeKubernetes } from '../analysis/cloud/kubernetes';

const app = (name: string, config: string) => `---
apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name} }
spec:
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      containers:
        - name: ${name}
          image: acme/${name}:1
          envFrom:
            - configMapRef: { name: ${config} }
          env:
            - name: CACHE_HOST
              valueFrom: { configMapKeyRef: { name: ${config}, key: CACHE_HOST } }
`;
const config = (db: string, cache: string) => `---
apiVersion: v1
kind: ConfigMap
metadata: { name: db-config }
data:
  DATABASE_URL: postgres://${db}:5432/ledger
  CACHE_HOST: ${cache}
`;

/** Hosts each workload's environment names, `workload: host` sorted. */
function hosts(files: SourceFile[]): string[] {
  const out = analyzeKubernetes(files).evidence.filter(
    (e) => e.evidence_kind === 'env-reference' && typeof e.attributes.host === 'string',
  );
  return [...new Set(out.map((e) => `${e.location.path}: ${String(e.attributes.host)}`))].sort();
}

// The alternative folder sorts first, so "the first declared" would be its proxy's address.
const ALT: SourceFile[] = [
  { path: 'extras/cloudsql/manifests/config.yaml', text: config('sql-proxy', 'cache-proxy') },
  { path: 'extras/cloudsql/manifests/ledger.yaml', text: app('ledger', 'db-config') },
];
const BASE: SourceFile[] = [
  { path: 'manifests/config.yaml', text: config('ledger-db', 'cache') },
  { path: 'manifests/ledger.yaml', text: app('ledger', 'db-config') },
  { path: 'manifests/reports/reports.yaml', text: app('reports', 'db-config') },
];

test('variant names: each workload reads the ConfigMap of its own folder, never the other variant', (t) => {
  const got = hosts([...ALT, ...BASE]);
  t.true(got.includes('manifests/ledger.yaml: ledger-db'), got.join('; '));
  t.true(got.includes('manifests/ledger.yaml: cache'), got.join('; '));
  // A sub-folder of the base reads the base's map (the folder above it), not the sibling's.
  t.true(got.includes('manifests/reports/reports.yaml: ledger-db'), got.join('; '));
  t.true(got.includes('extras/cloudsql/manifests/ledger.yaml: sql-proxy'), got.join('; '));
  t.false(
    got.some((h) => h.startsWith('manifests/') && /proxy/.test(h)),
    got.join('; '),
  );
  t.false(got.some((h) => h.startsWith('extras/') && /ledger-db|: cache$/.test(h)));
});

test('variant names: a name only two other variants declare, differently, resolves to nothing', (t) => {
  const got = hosts([
    { path: 'deploy/a/config.yaml', text: config('db-a', 'cache-a') },
    { path: 'deploy/b/config.yaml', text: config('db-b', 'cache-b') },
    { path: 'base/ledger.yaml', text: app('ledger', 'db-config') },
  ]);
  t.deepEqual(
    got.filter((h) => h.startsWith('base/')),
    [],
  );
  // Declared the same in both, it is one value whichever is taken.
  const same = hosts([
    { path: 'deploy/a/config.yaml', text: config('db', 'cache') },
    { path: 'deploy/b/config.yaml', text: config('db', 'cache') },
    { path: 'base/ledger.yaml', text: app('ledger', 'db-config') },
  ]);
  t.deepEqual(
    same.filter((h) => h.startsWith('base/')),
    ['base/ledger.yaml: cache', 'base/ledger.yaml: db'],
  );
});

test('variant names: a Service name resolves to the workload of its own folder', (t) => {
  const svc = `---
apiVersion: v1
kind: Service
metadata: { name: store }
spec: { selector: { role: store } }
`;
  const store = (name: string) => `---
apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name} }
spec:
  template:
    metadata: { labels: { role: store } }
    spec: { containers: [{ name: db, image: postgres:16 }] }
`;
  const client = `---
apiVersion: apps/v1
kind: Deployment
metadata: { name: api }
spec:
  template:
    spec:
      containers:
        - { name: api, image: acme/api:1, env: [{ name: DB_HOST, value: store }] }
`;
  const out = analyzeKubernetes([
    { path: 'alt/store.yaml', text: svc + store('store-pooled') },
    { path: 'main/store.yaml', text: svc + store('store-primary') },
    { path: 'main/api.yaml', text: client },
  ]).evidence;
  const ref = out.find(
    (e) => e.evidence_kind === 'env-reference' && e.subject_key === 'service:api',
  );
  t.is(ref?.object_key, 'service:store-primary');
  const exposed = out
    .filter((e) => e.evidence_kind === 'service-exposed')
    .map((e) => `${e.location.path}: ${String(e.attributes.selected_workload)}`)
    .sort();
  t.deepEqual(exposed, ['alt/store.yaml: store-pooled', 'main/store.yaml: store-primary']);
});
