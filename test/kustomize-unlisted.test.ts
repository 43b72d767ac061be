/**
 * Manifests a kustomization leaves out (issue 23, session 12): a kustomization that lists a
 * folder's files one by one assembles those files; a sibling manifest it omits is deployed by
 * nothing, unless a deploy step applies it by path. Small repositories written here. Pure.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import {
  analyzeFiles,
  connections as edges,
  deployment,
  entityKeys as keys,
} from './helpers/pipeline';

const service = (name: string, selector: string, type = 'ClusterIP') => `---
apiVersion: v1
kind: Service
metadata: { name: ${name} }
spec:
  type: ${type}
  selector: { app: ${selector} }
  ports: [{ port: 80 }]
`;

const withLabel = (name: string, image: string, env: Record<string, string> = {}) =>
  deployment(name, image, env).replace(
    'spec:\n  template:\n    spec:',
    `spec:\n  selector: { matchLabels: { app: ${name} } }\n  template:\n    metadata: { labels: { app: ${name} } }\n    spec:`,
  );

const BASE: SourceFile[] = [
  {
    path: 'deploy/base/kustomization.yaml',
    text: 'resources:\n  - ./apps/web.yaml\n  - ./apps/api.yaml\n',
  },
  {
    path: 'deploy/base/apps/web.yaml',
    text: withLabel('web', 'acme/web:1', { API: 'http://api' }),
  },
  {
    path: 'deploy/base/apps/api.yaml',
    text: withLabel('api', 'acme/api:1') + service('api', 'api'),
  },
  // Left out of the kustomization: an old public Service and a worker nothing deploys.
  {
    path: 'deploy/base/apps/legacy.yaml',
    text:
      service('web-public', 'nothing', 'LoadBalancer') +
      withLabel('legacy', 'acme/legacy:1', { API: 'http://api' }),
  },
];

test('kustomize: a manifest the kustomization leaves out of a folder it enumerates shapes no entity', async (t) => {
  const { graph, evidence } = await analyzeFiles(BASE);
  const k = keys(graph);
  t.true(k.includes('service:web') && k.includes('service:api'), k.join(', '));
  t.false(k.includes('service:web-public'), k.join(', '));
  t.false(k.includes('service:legacy'), k.join(', '));
  t.deepEqual(edges(graph), ['service:web -> service:api']);
  // Its records stay evidence.
  t.true(evidence.some((e) => e.location.path === 'deploy/base/apps/legacy.yaml'));
});

test('kustomize: a left-out manifest a deploy step applies by path, or a folder listed whole, counts', async (t) => {
  const applied = await analyzeFiles([
    ...BASE,
    {
      path: '.github/workflows/deploy.yml',
      text: `on: push
jobs:
  deploy:
    runs-on: ubuntu-latest
    steps:
      - run: kubectl apply -f deploy/base/apps/legacy.yaml
`,
    },
  ]);
  t.true(keys(applied.graph).includes('service:legacy'), keys(applied.graph).join(', '));
  // A kustomization listing the folder (its own kustomization lists every file) judges nothing.
  const whole = await analyzeFiles([
    { path: 'deploy/kustomization.yaml', text: 'resources:\n  - ./apps\n' },
    { path: 'deploy/apps/web.yaml', text: withLabel('web', 'acme/web:1') },
    { path: 'deploy/apps/api.yaml', text: withLabel('api', 'acme/api:1') },
  ]);
  t.true(keys(whole.graph).includes('service:api'), keys(whole.graph).join(', '));
  // A patch file beside the resources is no left-out manifest.
  const patched = await analyzeFiles([
    {
      path: 'deploy/kustomization.yaml',
      text: 'resources:\n  - web.yaml\npatchesStrategicMerge:\n  - api.yaml\n',
    },
    { path: 'deploy/web.yaml', text: withLabel('web', 'acme/web:1') },
    { path: 'deploy/api.yaml', text: withLabel('api', 'acme/api:1') },
  ]);
  t.true(keys(patched.graph).includes('service:api'), keys(patched.graph).join(', '));
});
