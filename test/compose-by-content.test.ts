/**
 * A compose file named otherwise (`pwd.yml`, `stack.yml`) is known by its content: a top-level
 * `services:` mapping whose entries declare an image or a build, and no top-level key outside
 * the Compose format. The source classifier (which sees the first 4 KiB) and the cloud analyzer
 * apply the same test. Tye's `services:` list, a Helm values file and a CI pipeline with a
 * `services:` key are not compose files. Fixtures of our own, written inline.
 */
import test from 'ava';
import { isComposeHead } from '../analysis/cloud/compose-head';
import { cloudFormat } from '../analysis/cloud';
import { classifyPath } from '../domain/audits/classify';
import { analyzeFileMap, connections } from './helpers/pipeline';

const DEMO =
  '# A single-file demo\nversion: "3"\nx-common: &common\n  restart: always\nservices:\n  app:\n    image: acme/app:1\n    environment:\n      APP_DB_HOST: db\n  db:\n    image: postgres:16\nvolumes:\n  data: {}\n';

test('content: a compose file named pwd.yml is read as compose, its connections in the graph', async (t) => {
  t.true(isComposeHead(DEMO));
  t.is(classifyPath('pwd.yml', DEMO), 'cloud');
  t.is(cloudFormat({ path: 'pwd.yml', text: DEMO }, new Set()), 'compose');
  const { graph } = await analyzeFileMap({ 'pwd.yml': DEMO });
  t.deepEqual(connections(graph), ['service:app -> datastore:db']);
});

test('content: a build-only service counts, a program settings name does not hide it', (t) => {
  const text = 'services:\n  web:\n    build: .\n    ports: ["80:80"]\n';
  t.is(classifyPath('deploy/stack.yml', text), 'cloud');
  t.is(classifyPath('config.yml', text), 'cloud');
});

test('content: look-alikes are not compose files', (t) => {
  const looks: Record<string, string> = {
    // Tye: services is a list of `- name:`.
    'tye.yaml':
      'name: shop\nservices:\n- name: web\n  project: web/web.csproj\n- name: redis\n  image: redis\n',
    // A Helm values file: keys outside the Compose format.
    'values.yaml': 'replicaCount: 1\nservices:\n  web:\n    image: acme/web\n',
    // A Woodpecker-style pipeline.
    'ci.yml': 'steps:\n  test:\n    image: node\nservices:\n  db:\n    image: postgres\n',
    // Services that declare neither an image nor a build (an overlay fragment elsewhere).
    'net.yml': 'services:\n  app:\n    networks: [backend]\n',
    // A flow value, and a Kubernetes object.
    'flow.yml': 'services: {}\n',
    'svc.yaml': 'apiVersion: v1\nkind: List\nservices:\n  a:\n    image: x\n',
  };
  for (const [path, text] of Object.entries(looks)) {
    t.false(isComposeHead(text), path);
    t.not(cloudFormat({ path, text }, new Set()), 'compose', path);
  }
});

test('content: only the first 4 KiB are read, by both classifiers alike', (t) => {
  // The image line falls past the head: neither classifier calls it compose.
  const late = `services:\n  app:\n${'    # padding\n'.repeat(400)}    image: acme/app:1\n`;
  t.false(isComposeHead(late));
  t.not(cloudFormat({ path: 'late.yml', text: late }, new Set()), 'compose');
  t.is(classifyPath('late.yml', late.slice(0, 4096)), null);
  // A head cut inside a top-level key is not taken for a foreign key.
  const start = 'services:\n  app:\n    image: acme/app:1\n    command: ';
  const cut = `${start}${'x'.repeat(4091 - start.length)}\nnetworks:\n  n: {}\n`;
  t.is(Buffer.from(cut).subarray(0, 4096).toString('utf8').slice(-5), '\nnetw');
  t.true(isComposeHead(cut));
  t.is(classifyPath('cut.yml', Buffer.from(cut).subarray(0, 4096).toString('utf8')), 'cloud');
});

test('content: a README command naming pwd.yml is read past a prose blockquote', async (t) => {
  // `> ` outside a fence is a Markdown blockquote: its apostrophe opens no shell quote.
  const readme =
    "# Acme\n\n> For Docker's basics see [docs](https://docs.docker.com)\n\n```sh\ndocker compose -f pwd.yml up -d\n```\n";
  const { evidence } = await analyzeFileMap({ 'README.md': readme, 'pwd.yml': DEMO });
  const deploys = evidence
    .filter((e) => e.evidence_kind === 'deploy-manifests')
    .map((e) => e.attributes);
  t.deepEqual(
    deploys.map((a) => [a.compose_file, a.command]),
    [['pwd.yml', 'docker compose -f pwd.yml up -d']],
  );
});
