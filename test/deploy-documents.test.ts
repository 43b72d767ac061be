/**
 * The primary deployment variant from what the repository says it deploys (issue 23 item 1,
 * analysis/cloud/deploy-commands.ts and analysis/variants.ts): the root README's commands, a
 * Makefile's recipes and deploy scripts; and the Helm release name a deploy script installs
 * (item 3). Small repositories written here; pure, no database.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { classifyPath } from '../domain/audits/classify';
import { deployCommands } from '../analysis/cloud/deploy-commands';
import {
  analyzeFiles,
  connections as edges,
  deployment,
  entityKeys as keys,
} from './helpers/pipeline';

/** A base folder and, sorting first, an alternative behind a pooler. */
const VARIANTS: SourceFile[] = [
  {
    path: 'alt/pooled/apps.yaml',
    text:
      deployment('orders', 'acme/orders:1', { DB_HOST: 'pg-pool' }) +
      deployment('users', 'acme/users:1', { DB_HOST: 'pg-pool' }) +
      deployment('pg-pool', 'bitnami/pgbouncer:1', { POSTGRESQL_HOST: 'orders-db' }) +
      deployment('orders-db', 'postgres:16') +
      deployment('users-db', 'postgres:16') +
      deployment('catalog', 'acme/catalog:1') +
      deployment('search', 'acme/search:1'),
  },
  {
    path: 'manifests/apps.yaml',
    text:
      deployment('orders', 'acme/orders:1', { DB_HOST: 'orders-db' }) +
      deployment('users', 'acme/users:1', { DB_HOST: 'users-db' }) +
      deployment('orders-db', 'postgres:16') +
      deployment('users-db', 'postgres:16') +
      deployment('catalog', 'acme/catalog:1'),
  },
];

const README = (cmd: string): SourceFile => ({
  path: 'README.md',
  text: `# Shop\n\nCreate the secrets first, then deploy:\n\n\`\`\`console\n$ kubectl apply -f ./secrets/jwt.yaml\n${cmd}\n\`\`\`\n`,
});

test('deploy documents: the README command chooses the primary, said as chosen from README.md:line', async (t) => {
  const readme = README('$ kubectl apply -f ./manifests');
  // The root README is read when it holds a deploy command; another README, or none, is not.
  t.is(classifyPath('README.md', readme.text), 'cloud');
  t.is(classifyPath('README.md', '# Shop\n\nSee the docs.\n'), null);
  t.is(classifyPath('docs/README.md', readme.text), null);
  const { graph } = await analyzeFiles([...VARIANTS, readme]);
  const v = graph.variants?.find((x) => x.family === 'kubernetes');
  t.like(v, { primary: 'manifests', others: ['alt'], guessed: false, chosen_by: 'deploy-step' });
  t.deepEqual(v?.chosen_from, ['README.md:7']);
  t.regex(v!.detail, /chosen from README\.md:7/);
  const got = edges(graph);
  t.true(got.includes('service:orders -> datastore:orders-db'), got.join(', '));
  t.false(
    got.some((e) => e.includes('pg-pool')),
    got.join(', '),
  );
  // Without the README the more complete alternative would have been guessed.
  const { graph: guessed } = await analyzeFiles(VARIANTS);
  t.like(guessed.variants?.[0], { primary: 'alt', guessed: true });
});

test('deploy documents: a pipeline deploy step outranks the README; a Makefile recipe counts after it', async (t) => {
  const ci: SourceFile = {
    path: '.github/workflows/deploy.yml',
    text: 'on: push\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n    steps:\n      - run: kubectl apply -f alt/pooled\n',
  };
  const { graph } = await analyzeFiles([...VARIANTS, README('kubectl apply -f manifests/'), ci]);
  t.like(graph.variants?.[0], { primary: 'alt', guessed: false });
  const make: SourceFile = {
    path: 'Makefile',
    text: '.PHONY: deploy\ndeploy:\n\t@kubectl apply -f manifests/apps.yaml\n',
  };
  const { graph: made } = await analyzeFiles([...VARIANTS, make]);
  t.like(made.variants?.[0], { primary: 'manifests', guessed: false, chosen_from: ['Makefile:3'] });
});

test('deploy documents: the compose file the README runs is primary over developer stacks in sub-folders', async (t) => {
  const stack = (svc: string) =>
    `services:\n  ${svc}:\n    build: .\n    environment:\n      AMQP_URL: amqp://rabbitmq:5672\n  rabbitmq:\n    image: rabbitmq:3\n`;
  const files: SourceFile[] = [
    {
      path: 'docker-compose.yaml',
      text: `services:\n  web:\n    image: acme/web:1\n    environment:\n      API: http://dispatch:8080\n  dispatch:\n    image: acme/dispatch:1\n  payment:\n    image: acme/payment:1\n    environment:\n      AMQP_HOST: rabbitmq\n  rabbitmq:\n    image: rabbitmq:3\n  cart:\n    image: acme/cart:1\n`,
    },
    { path: 'dispatch/docker-compose.yaml', text: stack('dispatch') },
    { path: 'payment/docker-compose.yaml', text: stack('payment') },
    {
      path: 'README.md',
      text: '# Store\n\nRun it locally:\n\n```shell\n$ docker-compose build\n$ docker-compose up\n```\n',
    },
  ];
  const { graph } = await analyzeFiles(files);
  const v = graph.variants?.find((x) => x.family === 'docker-compose');
  t.like(v, { primary: '', others: ['dispatch', 'payment'], guessed: false });
  t.deepEqual(v?.chosen_from, ['README.md:7']);
  // Without the README the developer stacks were chosen among themselves, a guess.
  const { graph: before } = await analyzeFiles(files.slice(0, 3));
  t.like(before.variants?.[0], { primary: 'dispatch', guessed: true });
});

test('deploy documents: commands are read from fenced code, prompts and inline code, not prose', (t) => {
  const cmds = deployCommands({
    path: 'README.md',
    text: [
      'Deploy with `kubectl apply -k overlays/prod` or read on.',
      'We use kubectl apply -f somewhere/ in prose, not a command.',
      '```bash',
      '# kubectl apply -f commented/',
      'docker compose -f compose.yaml -f compose.prod.yaml up -d',
      'helm upgrade --install shop ./charts/shop -f ./charts/shop/values-prod.yaml',
      '```',
    ].join('\n'),
  });
  t.deepEqual(
    cmds.map((c) => [c.tool, c.line, c.kustomize ?? c.compose_files ?? c.release]),
    [
      ['kubectl', 1, 'overlays/prod'],
      ['docker-compose', 5, ['compose.yaml', 'compose.prod.yaml']],
      ['helm', 6, 'shop'],
    ],
  );
});

test('deploy documents: the release name a deploy script installs a chart under names its hosts', async (t) => {
  const chart: SourceFile[] = [
    { path: 'etc/k8s/shop/Chart.yaml', text: 'apiVersion: v2\nname: shop\nversion: 1.0.0\n' },
    { path: 'etc/k8s/shop/values.yaml', text: 'dbHost: st-postgresdb\n' },
    {
      path: 'etc/k8s/shop/templates/db.yaml',
      text: `apiVersion: apps/v1
kind: Deployment
metadata: { name: "{{ .Release.Name }}-postgresdb" }
spec:
  template:
    metadata: { labels: { app: "{{ .Release.Name }}-postgresdb" } }
    spec: { containers: [{ name: db, image: "postgres:16" }] }
---
apiVersion: v1
kind: Service
metadata: { name: "{{ .Release.Name }}-postgresdb" }
spec: { selector: { app: "{{ .Release.Name }}-postgresdb" } }
`,
    },
    {
      path: 'etc/k8s/shop/templates/api.yaml',
      text: `apiVersion: apps/v1
kind: Deployment
metadata: { name: "{{ .Release.Name }}-api" }
spec:
  template:
    spec:
      containers:
        - name: api
          image: acme/api:1
          env:
            - name: ConnectionStrings__Default
              value: "Host={{ .Values.dbHost }};Port=5432;Database=shop"
`,
    },
  ];
  const script: SourceFile = {
    path: 'etc/k8s/deploy-staging.sh',
    text: 'helm upgrade --install st shop -f ./shop/values.yaml --namespace shop --create-namespace',
  };
  t.is(classifyPath(script.path), 'cloud');
  const { graph } = await analyzeFiles([...chart, script]);
  const k = keys(graph);
  t.false(k.includes('service:st-postgresdb'), k.join(', '));
  t.true(
    edges(graph).some((e) => /^service:(st-)?api -> datastore:(st-)?postgresdb$/.test(e)),
    edges(graph).join(', '),
  );
  // Without the script the release is the chart's name and the host resolves to nothing.
  const { graph: before } = await analyzeFiles(chart);
  t.true(keys(before).includes('service:st-postgresdb'), keys(before).join(', '));
});
