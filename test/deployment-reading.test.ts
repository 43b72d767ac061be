/**
 * Reading deployment descriptions as their tools do, or saying why not (issue 23, item 0): YAML
 * anchors and merge keys at the scale real compose files use them, Compose `extends`, `include`,
 * profiles and override files, and for every format a file the reader cannot handle, which must
 * come back as a gap that keeps the snapshot from `complete`. Pure: no database.
 */
import test from 'ava';
import { analyzeCloud } from '../analysis/cloud';
import { analyzeCicd } from '../analysis/cicd';
import type { AnalyzerOutput, Evidence, SourceFile } from '../analysis/evidence';
import { architectureStatus } from '../analysis/uncertainty';
import { analyzeFiles } from './helpers/pipeline';
import type { Graph } from '../analysis/reconcile';

const edges = (g: Graph) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to')
    .map((r) => `${r.source_key} -> ${r.target_key}`)
    .sort();

/** The lines an evidence record cites, from the files given. */
const cited = (files: SourceFile[], e: Evidence) =>
  (files.find((f) => f.path === e.location.path)?.text ?? '')
    .split('\n')
    .slice(e.location.start_line - 1, e.location.end_line)
    .join('\n');

/** A self-hosted product's compose file: services built from shared anchors and merge keys. */
function anchoredCompose(workers: number): string {
  let s = `x-restart: &restart
  restart: unless-stopped
x-pull: &pull
  pull_policy: never
x-healthy: &healthy
  condition: service_healthy
x-env: &env
  DATABASE_URL: postgres://app:\${DB_PASSWORD}@postgres:5432/app
  CACHE_URL: redis://redis:6379/0
x-defaults: &d
  <<: [*restart, *pull]
  image: acme-local
  build:
    context: ./app
  depends_on:
    postgres:
      <<: *healthy
    redis:
      <<: *healthy
  environment:
    <<: *env
    SEARCH_URL: http://search:8080
services:
  postgres:
    <<: *restart
    image: postgres:16
  redis:
    <<: *restart
    image: redis:7
  search:
    <<: [*restart, *pull]
    image: acme/search:1
    environment:
      <<: *env
  web:
    <<: *d
    command: serve
    environment:
      <<: *env
      SEARCH_URL: http://search:8080
      EVENTS_URL: http://events:9000
  events:
    <<: *d
    command: events
`;
  for (let i = 0; i < workers; i++)
    s += `  worker-${i}:\n    <<: *d\n    command: ["worker", "${i}"]\n`;
  return s;
}

test('anchors and merge keys: a compose file of shared anchors yields every service and its edges', async (t) => {
  const files = [{ path: 'docker-compose.yml', text: anchoredCompose(5) }];
  const { graph } = await analyzeFiles(files);
  const keys = graph.entities.map((e) => e.canonical_key);
  for (const k of ['service:web', 'service:events', 'service:search', 'service:worker-4'])
    t.true(keys.includes(k), k);
  t.true(keys.includes('datastore:postgres') && keys.includes('datastore:redis'));
  const got = edges(graph);
  for (const e of [
    'service:web -> datastore:postgres',
    'service:web -> datastore:redis',
    'service:web -> service:search',
    'service:web -> service:events',
    'service:events -> service:search',
    'service:worker-0 -> datastore:postgres',
    'service:worker-4 -> service:search',
    'service:search -> datastore:redis',
  ])
    t.true(got.includes(e), `${e} in ${got.join(', ')}`);
  // What the anchors do not say is not invented: the search service calls nobody but stores.
  t.false(got.some((e) => e.startsWith('service:search -> service:')));
  // Evidence from a merged key cites the lines that write the value (the anchor).
  const pg = (await analyzeCloud(files)).evidence.find(
    (e) => e.subject_key === 'service:worker-2' && e.object_key === 'service:postgres',
  );
  t.truthy(pg);
  t.regex(cited(files, pg!), /postgres:5432/);
});

test('anchors at scale: a 57-service file past the old alias bound is read; an expansion bomb is a gap, fast', async (t) => {
  const big = await analyzeCloud([{ path: 'compose.yaml', text: anchoredCompose(52) }]);
  t.deepEqual(big.gaps, []);
  t.is(big.evidence.filter((e) => e.evidence_kind === 'service-declared').length, 57);
  let bomb = 'x-a: &a ["x","x","x","x","x","x","x","x","x","x"]\n';
  for (let i = 0; i < 9; i++)
    bomb += `x-b${i}: &b${i} [${Array(10)
      .fill(i ? `*b${i - 1}` : '*a')
      .join(',')}]\n`;
  bomb += 'services:\n  app:\n    image: acme/app\n    labels: *b8\n';
  const started = Date.now();
  const out = await analyzeCloud([{ path: 'compose.yaml', text: bomb }]);
  t.true(Date.now() - started < 5000);
  t.is(out.evidence.length, 0);
  t.is(out.gaps[0]?.reason, 'yaml_parse_error');
  t.regex(out.gaps[0]?.message ?? '', /alias/i);
});

test('compose composition: extends (same file and another), include, profiles; inherited values cited where written', async (t) => {
  const files: SourceFile[] = [
    {
      path: 'deploy/docker-compose.common.yml',
      text: `services:
  backend:
    build: ../backend
    environment:
      - DB_URL=postgres://db:5432/shop
`,
    },
    {
      path: 'deploy/docker-compose.yml',
      text: `include:
  - infra/compose.yaml
services:
  api:
    extends:
      file: docker-compose.common.yml
      service: backend
    environment:
      CACHE_URL: redis://cache:6379
  jobs:
    extends: api
    profiles: [batch]
    environment:
      API_URL: http://api:8080
`,
    },
    {
      path: 'deploy/infra/compose.yaml',
      text: 'services:\n  db:\n    image: postgres:16\n  cache:\n    image: redis:7\n',
    },
  ];
  const out = await analyzeCloud(files);
  t.deepEqual(out.gaps, []);
  const { graph } = await analyzeFiles(files);
  const got = edges(graph);
  for (const e of [
    'service:api -> datastore:db',
    'service:api -> datastore:cache',
    'service:jobs -> datastore:db',
    'service:jobs -> datastore:cache',
    'service:jobs -> service:api',
  ])
    t.true(got.includes(e), `${e} in ${got.join(', ')}`);
  t.false(got.includes('service:api -> service:jobs'));
  const jobs = out.evidence.find(
    (e) => e.evidence_kind === 'service-declared' && e.subject_key === 'service:jobs',
  )!;
  t.deepEqual(jobs.attributes.profiles, ['batch']);
  t.deepEqual(jobs.attributes.extends, ['api', 'backend']);
  // The base's build context, rebased: the same folder from the extending file.
  t.is((jobs.attributes.build as { context_dir: string }).context_dir, 'backend');
  const inherited = out.evidence.find(
    (e) => e.subject_key === 'service:jobs' && e.object_key === 'service:db',
  )!;
  t.is(inherited.location.path, 'deploy/docker-compose.common.yml');
  t.regex(cited(files, inherited), /DB_URL=postgres:\/\/db:5432/);
});

test('compose override files are layered onto the base: one entity, both files edges', async (t) => {
  const { graph } = await analyzeFiles([
    {
      path: 'docker-compose.yml',
      text: 'services:\n  api:\n    image: acme/api:1\n    environment:\n      DB_URL: postgres://db/x\n  db:\n    image: postgres\n  mq:\n    image: rabbitmq:3\n',
    },
    {
      path: 'docker-compose.override.yml',
      text: 'services:\n  api:\n    environment:\n      AMQP_URL: amqp://mq:5672\n',
    },
  ]);
  t.is(graph.entities.filter((e) => e.canonical_key === 'service:api').length, 1);
  t.deepEqual(
    edges(graph).filter((e) => e.startsWith('service:api')),
    ['service:api -> datastore:db', 'service:api -> queue:mq'],
  );
  t.is(graph.conflicts?.length ?? 0, 0);
});

/** One file per format that its reader cannot handle, with the gap reason expected. */
const UNREADABLE: Array<[string, SourceFile[], string, 'cloud' | 'cicd']> = [
  [
    'compose, broken YAML',
    [{ path: 'docker-compose.yml', text: 'services:\n  a: [\n' }],
    'yaml_parse_error',
    'cloud',
  ],
  [
    'compose, no services',
    [{ path: 'docker-compose.yml', text: 'version: "3.8"\nnetworks: {}\n' }],
    'compose_no_services',
    'cloud',
  ],

  [
    'compose, services as a list',
    [{ path: 'compose.yaml', text: 'services:\n  - api\n' }],
    'compose_invalid',
    'cloud',
  ],
  [
    'compose, Jinja template',
    [
      {
        path: 'docker-compose.yml',
        text: 'services:\n{% for s in apps %}\n  {{ s }}:\n    image: x\n{% endfor %}\n',
      },
    ],
    'yaml_parse_error',
    'cloud',
  ],
  [
    'compose, include not analyzed',
    [{ path: 'compose.yaml', text: 'include: [other/stack.yml]\n' }],
    'compose_include_not_read',
    'cloud',
  ],
  [
    'compose, extends unresolved',
    [
      {
        path: 'compose.yaml',
        text: 'services:\n  a:\n    extends: { service: b }\n    image: x\n',
      },
    ],
    'compose_extends_not_resolved',
    'cloud',
  ],
  [
    'kubernetes, broken YAML',
    [{ path: 'k8s/app.yaml', text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: [\n' }],
    'yaml_parse_error',
    'cloud',
  ],
  [
    'kubernetes, no object at the root',
    [{ path: 'k8s/app.yaml', text: 'resource:\n  apiVersion: apps/v1\n  kind: Deployment\n' }],
    'kubernetes_no_objects',
    'cloud',
  ],
  [
    'kubernetes, Go template outside a chart',
    [
      {
        path: 'k8s/app.yaml',
        text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Values.name }}\n',
      },
    ],
    'template_not_rendered',
    'cloud',
  ],
  [
    'helm, template with include and tpl',
    [
      { path: 'chart/Chart.yaml', text: 'apiVersion: v2\nname: shop\nversion: 1.0.0\n' },
      {
        path: 'chart/templates/api.yaml',
        text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include "shop.fullname" . }}\nspec:\n  template:\n    spec:\n      containers:\n        - name: api\n          env: {{ tpl (toYaml .Values.env) . | nindent 12 }}\n',
      },
    ],
    'helm_template_not_rendered',
    'cloud',
  ],
  [
    'helm, broken values',
    [
      { path: 'chart/Chart.yaml', text: 'apiVersion: v2\nname: shop\nversion: 1.0.0\n' },
      { path: 'chart/values.yaml', text: 'image: [\n' },
    ],
    'yaml_parse_error',
    'cloud',
  ],
  [
    'kustomize, broken YAML',
    [{ path: 'k8s/kustomization.yaml', text: 'resources: [\n' }],
    'yaml_parse_error',
    'cloud',
  ],
  [
    'terraform, unclosed block',
    [{ path: 'infra/main.tf', text: 'resource "aws_ecs_service" "api" {\n' }],
    'terraform_parse_error',
    'cloud',
  ],
  [
    'Dockerfile without FROM',
    [{ path: 'api/Dockerfile', text: 'RUN make\n' }],
    'dockerfile_no_from',
    'cloud',
  ],
  [
    'GitHub Actions, broken YAML',
    [{ path: '.github/workflows/ci.yml', text: 'on: [push\njobs:\n' }],
    'yaml_parse_error',
    'cicd',
  ],
  [
    'GitLab CI, broken YAML',
    [{ path: '.gitlab-ci.yml', text: 'build: [\n' }],
    'yaml_parse_error',
    'cicd',
  ],
  [
    'CircleCI, broken YAML',
    [{ path: '.circleci/config.yml', text: 'jobs: [\n' }],
    'yaml_parse_error',
    'cicd',
  ],
  [
    'Azure Pipelines, broken YAML',
    [{ path: 'azure-pipelines.yml', text: 'steps: [\n' }],
    'yaml_parse_error',
    'cicd',
  ],
];

for (const [name, files, reason, source] of UNREADABLE) {
  test(`say so: ${name} is a gap (${reason}) and the snapshot is not complete`, async (t) => {
    const out: AnalyzerOutput =
      source === 'cloud' ? await analyzeCloud(files) : await analyzeCicd(files);
    const gap = out.gaps.find((g) => g.reason === reason);
    t.truthy(gap, JSON.stringify(out.gaps));
    t.true(files.some((f) => f.path === gap?.path));
    t.true((gap?.message ?? '').length > 10);
    t.is(architectureStatus({ missingSources: [], gaps: out.gaps }), 'partial');
  });
}

test('say so: a compose file of comments only (a layer left empty on purpose) is said, and hides nothing', async (t) => {
  for (const text of ['', '# add your services here\n# services:\n#   x: {}\n']) {
    const out = await analyzeCloud([
      { path: 'compose.yaml', text: 'services:\n  api:\n    image: acme/api:1\n' },
      { path: 'compose.extras.yaml', text },
    ]);
    t.deepEqual(
      out.gaps.map((g) => [g.path, g.reason]),
      [['compose.extras.yaml', 'compose_empty']],
    );
    t.is(architectureStatus({ missingSources: [], gaps: out.gaps }), 'complete');
  }
});

test('say so: gaps that are not about a deployment description leave the snapshot complete', (t) => {
  t.is(architectureStatus({ missingSources: [], gaps: [] }), 'complete');
  t.is(
    architectureStatus({
      missingSources: [],
      gaps: [
        { reason: 'binary_file' },
        { reason: 'file_too_large' },
        { reason: 'manifest_parse_error' },
      ],
    }),
    'complete',
  );
  // Readable files of every format give no gap at all.
  return analyzeCloud([
    { path: 'compose.yaml', text: 'services:\n  api:\n    image: acme/api:1\n' },
    { path: 'k8s/app.yaml', text: 'apiVersion: v1\nkind: Service\nmetadata: { name: api }\n' },
  ]).then((out) => t.deepEqual(out.gaps, []));
});
