/**
 * Placeholders and templates (issue 30, item 2): never secrets, never unpinned images, recorded
 * as not applicable with the reason. Real files through the analyzers, per format a case that
 * must pass and one that must fail.
 */
import test from 'ava';
import { placeholderReason } from '../analysis/shared/secrets';
import { assessFiles, control } from './helpers/assess-files';

test('placeholderReason: placeholders, templates and secret manager references', (t) => {
  for (const v of [
    'GOOGLE_API_KEY_VAL',
    '<your-api-key>',
    '[TOKEN]',
    'changeme',
    'CHANGE_ME',
    'dummy',
    'your-api-key-here',
    'xxxx',
    'arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf',
    'projects/acme/secrets/db-password/versions/latest',
    'vault:secret/data/db#password',
    '{{resolve:secretsmanager:MySecret:SecretString:password}}',
    '@Microsoft.KeyVault(SecretUri=https://v.vault.azure.net/secrets/x)',
  ])
    t.truthy(placeholderReason(v), v);
  for (const v of ['s3cr3t-Pa55', 'hunter2', 'mysecretpassword', 'AbC123xyz', 'my-password'])
    t.is(placeholderReason(v), null, v);
  // Linear on hostile input (no backtracking blow-up).
  const started = Date.now();
  placeholderReason(`your-${'a-'.repeat(50_000)}!`);
  t.true(Date.now() - started < 500);
});

const SECRETS = 'no-committed-secrets';

test('secrets: placeholders pass and are named in the applicability, in every format', async (t) => {
  const list = await assessFiles({
    'docker-compose.yml':
      'services:\n  cart:\n    image: cart:1.0\n    environment:\n      - AWS_SECRET_ACCESS_KEY=dummy\n      - API_TOKEN=<token>\n',
    'k8s/app.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: app:1.0\n          env:\n            - name: GOOGLE_API_KEY\n              value: GOOGLE_API_KEY_VAL\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: changeme\ndata:\n  token: ' +
      Buffer.from('<replace with token>').toString('base64') +
      '\n',
    'overlay/kustomization.yaml':
      'resources: []\nsecretGenerator:\n  - name: db\n    literals:\n      - DB_PASSWORD=arn:aws:secretsmanager:us-east-1:1:secret:db\n',
    'infra/main.tf':
      'resource "aws_db_instance" "db" {\n  engine = "postgres"\n  password = "CHANGE_ME"\n}\n',
    '.github/workflows/ci.yml':
      'on: push\npermissions: {}\njobs:\n  build:\n    runs-on: ubuntu-latest\n    env:\n      NPM_TOKEN: your-npm-token\n    steps:\n      - run: echo hi\n',
  });
  const a = control(list, SECRETS);
  t.is(a.status, 'pass', a.rationale);
  t.deepEqual(a.findings, []);
  for (const where of [
    'docker-compose.yml (AWS_SECRET_ACCESS_KEY: a placeholder word)',
    'k8s/app.yaml (GOOGLE_API_KEY: an upper-case placeholder replaced at deploy time)',
    'k8s/app.yaml (token: a <...> placeholder)',
    'overlay/kustomization.yaml (DB_PASSWORD: a secret manager reference)',
    'infra/main.tf',
    '.github/workflows/ci.yml (NPM_TOKEN: a placeholder word)',
  ])
    t.true(a.applicability_rationale.includes(where), `${where} in ${a.applicability_rationale}`);
});

test('secrets: real literal values still fail, in every format', async (t) => {
  const list = await assessFiles({
    'docker-compose.yml':
      'services:\n  cart:\n    image: cart:1.0\n    environment:\n      - AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n',
    'k8s/secret.yaml':
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  password: ' +
      Buffer.from('s3cr3t-Pa55').toString('base64') +
      '\n',
    'overlay/kustomization.yaml':
      'resources: []\nsecretGenerator:\n  - name: db\n    literals:\n      - DB_PASSWORD=hunter2\n',
    'infra/main.tf':
      'resource "aws_db_instance" "db" {\n  engine = "postgres"\n  password = "Sup3rS3cret"\n}\n',
    '.github/workflows/ci.yml':
      'on: push\npermissions: {}\njobs:\n  build:\n    runs-on: ubuntu-latest\n    env:\n      NPM_TOKEN: npm_abcdef0123456789\n    steps:\n      - run: echo hi\n',
  });
  const a = control(list, SECRETS);
  t.is(a.status, 'fail');
  t.deepEqual([...new Set(a.findings.map((f) => f.location?.path))].sort(), [
    '.github/workflows/ci.yml',
    'docker-compose.yml',
    'infra/main.tf',
    'k8s/secret.yaml',
    'overlay/kustomization.yaml',
  ]);
});

const IMAGES = 'images-pinned';
const deployment = (image: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cart\nspec:\n  template:\n    spec:\n      containers:\n        - name: cart\n          image: ${image}\n`;

test('images: build placeholders, renames without tag, upper-case and ${VAR} are not applicable', async (t) => {
  const list = await assessFiles({
    'src/cart/Dockerfile': 'FROM alpine:3.20\nUSER 1000\n',
    'k8s/cart.yaml': deployment('cart'),
    'kustomize/registry/kustomization.yaml':
      'images:\n  - name: cart\n    newName: CONTAINER_IMAGES_REGISTRY/cart\n  - name: cart\n    newName: ghcr.io/acme/cart\n',
    'docker-compose.yml': 'services:\n  web:\n    image: ${WEB_IMAGE}\n',
    'charts/cart/Chart.yaml': 'apiVersion: v2\nname: cart\nversion: 1.6.2\n',
    'charts/cart/values.yaml': 'image:\n  repository: public.ecr.aws/acme/cart\n  tag:\n',
    'charts/cart/templates/deployment.yaml':
      'spec:\n  containers:\n    - image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.Version }}"\n',
  });
  const a = control(list, IMAGES);
  t.is(a.status, 'pass', a.rationale);
  t.deepEqual(a.findings, []);
  for (const why of [
    'k8s/cart.yaml (cart: an image this repository builds, named and tagged by its build tool)',
    'CONTAINER_IMAGES_REGISTRY/cart: an upper-case placeholder a script replaces',
    'ghcr.io/acme/cart: a kustomize rename that keeps the tag of the image it renames',
    'docker-compose.yml (${WEB_IMAGE}: a variable set at deploy time)',
  ])
    t.true(a.applicability_rationale.includes(why), `${why} in ${a.applicability_rationale}`);
});

test('images: a bare image nobody builds, latest, an untagged base or chart without a version fail', async (t) => {
  const list = await assessFiles({
    'src/cart/Dockerfile': 'FROM gcr.io/distroless/static\nUSER 1000\n',
    'k8s/cart.yaml': deployment('nginx'),
    'kustomize/kustomization.yaml': 'images:\n  - name: cart\n    newTag: latest\n',
    'docker-compose.yml': 'services:\n  web:\n    image: redis:latest\n',
    // Compose variants and Swarm stack files are compose files too.
    'docker-compose-o11y.yaml':
      'services:\n  jaeger:\n    image: jaegertracing/all-in-one:latest\n',
    'docker-stack.yml': 'services:\n  vote:\n    image: dockersamples/examplevotingapp_vote\n',
    'charts/cart/Chart.yaml': 'apiVersion: v2\nname: cart\nversion: 1.6.2\n',
    'charts/cart/values.yaml': 'image:\n  repository: public.ecr.aws/acme/cart\n  tag:\n',
    'charts/cart/templates/deployment.yaml':
      'spec:\n  containers:\n    - image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"\n',
  });
  const a = control(list, IMAGES);
  t.is(a.status, 'fail');
  t.deepEqual([...new Set(a.findings.map((f) => f.location?.path))].sort(), [
    'charts/cart/values.yaml',
    'docker-compose-o11y.yaml',
    'docker-compose.yml',
    'docker-stack.yml',
    'k8s/cart.yaml',
    'kustomize/kustomization.yaml',
    'src/cart/Dockerfile',
  ]);
});
