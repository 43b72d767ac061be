/**
 * The CI/CD analyzers (analysis/cicd): GitHub Actions, GitLab CI, CircleCI, Azure Pipelines and
 * Jenkinsfiles, as pure functions over inline fixtures. No database, no network.
 */
import crypto from 'node:crypto';
import test from 'ava';
import type { AnalyzerOutput, Evidence, SourceFile } from '../analysis/evidence';
import { analyzeCicd, cicdSystem } from '../analysis/cicd';
import { parseUses } from '../analysis/cicd/github-steps';
import { parseOrb } from '../analysis/cicd/circleci';
import { scanScript } from '../analysis/cicd/commands';
import { splitCommands } from '../analysis/cicd/shell';

// Line numbers in the assertions below refer to these fixtures; keep them in step.
const GITHUB_CI = `name: CI
on:
  push:
    branches: [main]
  pull_request_target:
    types: [opened, synchronize]
  schedule:
    - cron: '0 3 * * 1'
  workflow_dispatch:
env:
  REGISTRY: ghcr.io
  NPM_TOKEN: npm_L1teralS3cretValue42
jobs:
  build:
    runs-on: ubuntu-latest
    permissions:
      contents: write
      packages: write
    services:
      postgres:
        image: postgres:16
        env:
          POSTGRES_PASSWORD: hunter2pass
    steps:
      - uses: actions/checkout@v4
      - name: Setup tool
        uses: acme/setup-tool@8f4b7f84864484a7bf31766abe9204da3cbe65b3
      - uses: someone/lint-action@main
      - uses: ./.github/actions/prepare
      - uses: docker://alpine@sha256:4bcff63911fcb4448bd4fdacec207030997caf25e9bea4045fa6c8c44de311d1
      - name: Build and push
        uses: docker/build-push-action@v6
        with:
          push: true
          tags: |
            ghcr.io/acme/web:latest
            ghcr.io/acme/web:\${{ github.sha }}
      - name: Docker CLI
        run: |
          echo building
          docker build -t ghcr.io/acme/api:\${{ github.sha }} . && docker push ghcr.io/acme/api
        env:
          GH_TOKEN: \${{ secrets.GH_TOKEN }}
  deploy:
    needs: [build]
    runs-on: ubuntu-latest
    environment:
      name: production
      url: https://shop.example.com
    if: github.ref == 'refs/heads/main'
    steps:
      - uses: azure/setup-kubectl@v4
      - name: Roll out
        run: |
          kubectl set image deployment/api api=ghcr.io/acme/api:\${{ github.sha }} -n shop
          helm upgrade --install cart ./charts/cart \\
            --namespace shop --set image.tag=\${{ github.sha }}
        env:
          KUBECONFIG_DATA: \${{ secrets.KUBECONFIG }}
`;

const GITHUB_RELEASE = `on: release
permissions: write-all
jobs:
  pages:
    runs-on: [self-hosted, linux]
    environment: github-pages
    strategy:
      matrix:
        node: [18, 20]
    steps:
      - uses: actions/deploy-pages@v4
  notify:
    environment: staging
    runs-on: ubuntu-latest
    steps:
      - run: echo done
  call:
    uses: ./.github/workflows/deploy.yml
    secrets: inherit
`;

const GITLAB_CI = `include:
  - template: Security/SAST.gitlab-ci.yml
  - local: ci/templates.yml
  - remote: https://example.com/ci/common.yml

stages:
  - build
  - test
  - deploy

variables:
  DOCKER_DRIVER: overlay2
  IMAGE: registry.gitlab.com/acme/shop/api
  REGISTRY_PASSWORD: s3cr3t-gitlab-value

.docker:
  image: docker:27
  services:
    - docker:27-dind

.deploy-base:
  extends: .docker
  image: bitnami/kubectl:1.30
  when: manual

build:
  extends: .docker
  stage: build
  script:
    - docker build -t $IMAGE:$CI_COMMIT_SHA .
    - docker push $IMAGE:$CI_COMMIT_SHA
  rules:
    - if: $CI_COMMIT_BRANCH == "main"

test:
  stage: test
  image: node:20
  services:
    - name: postgres:16
      alias: db
  needs: [build]
  script:
    - npm ci
    - npm test

deploy:
  extends: .deploy-base
  stage: deploy
  needs:
    - job: build
    - test
  environment:
    name: production
    url: https://shop.example.com
  script:
    - kubectl set image deployment/api api=$IMAGE:$CI_COMMIT_SHA
    - helm upgrade --install cart ./charts/cart -n shop

review:
  extends: .missing-template
  stage: deploy
  environment:
    name: review/$CI_COMMIT_REF_SLUG
  script:
    - echo review
`;

const GITLAB_TEMPLATES = `.lint:
  image: node:20
lint:
  extends: .lint
  stage: test
  script:
    - npx eslint .
`;

const CIRCLECI = `version: 2.1

orbs:
  node: circleci/node@5.2.0
  aws-ecr: circleci/aws-ecr@9.0
  kube: circleci/kubernetes@volatile

executors:
  builder:
    docker:
      - image: cimg/node:20.11
    resource_class: medium

jobs:
  test:
    docker:
      - image: cimg/node:20.11
      - image: cimg/postgres:16.1
        environment:
          POSTGRES_PASSWORD: circle-literal-pw
    steps:
      - checkout
      - node/install-packages
      - run: npm test
  build:
    executor: builder
    steps:
      - checkout
      - setup_remote_docker
      - run:
          name: Build image
          command: |
            docker build -t acme/api:$CIRCLE_SHA1 .
            docker push acme/api:$CIRCLE_SHA1
  deploy:
    docker:
      - image: cimg/base:stable
    steps:
      - kube/install-kubectl
      - run: kubectl rollout restart deployment/api

workflows:
  build-deploy:
    jobs:
      - test
      - build:
          requires: [test]
          context: docker-hub
      - aws-ecr/build_and_push_image:
          name: push-ecr
          repo: api
          tag: latest
          requires:
            - test
      - deploy:
          requires:
            - build
          filters:
            branches:
              only: main
`;

const AZURE = `trigger:
  branches:
    include: [main]
pr: none

variables:
  imageRepository: acme/api
  ACR_PASSWORD: azure-literal-pw

stages:
  - stage: Build
    jobs:
      - job: BuildImage
        pool:
          vmImage: ubuntu-latest
        steps:
          - task: Docker@2
            displayName: Build and push
            inputs:
              command: buildAndPush
              repository: $(imageRepository)
              containerRegistry: acr-connection
              tags: |
                $(Build.BuildId)
          - script: npm test
  - stage: Deploy
    dependsOn: Build
    jobs:
      - deployment: DeployWeb
        environment: production
        pool:
          vmImage: ubuntu-latest
        strategy:
          runOnce:
            deploy:
              steps:
                - task: HelmDeploy@0
                  inputs:
                    command: upgrade
                    releaseName: web
                    chartPath: charts/web
                - bash: |
                    kubectl rollout status deployment/web -n shop
      - template: jobs/smoke.yml
`;

const JENKINS = `@Library('shared-lib@v2.3.1') _

pipeline {
  agent {
    docker { image 'node:20-alpine' }
  }
  environment {
    REGISTRY = 'registry.acme.io'
    DEPLOY_TOKEN = 'jenkins-literal-token'
    AWS_CREDS = credentials('aws-prod')
  }
  stages {
    stage('Build') {
      steps {
        sh 'npm ci && npm run build'
        // sh 'docker push commented/out'
        sh "docker build -t \${REGISTRY}/acme/web:\${BUILD_NUMBER} ."
      }
    }
    stage('Deploy') {
      when { branch 'main' }
      steps {
        sh '''
          helm upgrade --install web ./charts/web --namespace shop
          kubectl rollout status deployment/web -n shop
        '''
      }
    }
  }
}
`;

const JENKINS_SCRIPTED = `node {
  stage('Build') {
    sh 'make'
  }
}
`;

const LITERAL_SECRETS = [
  'npm_L1teralS3cretValue42',
  'hunter2pass',
  's3cr3t-gitlab-value',
  'circle-literal-pw',
  'azure-literal-pw',
  'jenkins-literal-token',
];

const FILES: SourceFile[] = [
  { path: '.github/workflows/ci.yml', text: GITHUB_CI },
  { path: '.github/workflows/release.yaml', text: GITHUB_RELEASE },
  { path: '.gitlab-ci.yml', text: GITLAB_CI },
  { path: 'ci/templates.yml', text: GITLAB_TEMPLATES },
  { path: '.circleci/config.yml', text: CIRCLECI },
  { path: 'azure-pipelines.yml', text: AZURE },
  { path: 'Jenkinsfile', text: JENKINS },
  { path: 'legacy/Jenkinsfile', text: JENKINS_SCRIPTED },
  { path: 'src/index.ts', text: 'export const x = 1;\n' },
];

let out: AnalyzerOutput;
test.before(async () => {
  out = await analyzeCicd(FILES);
});

type Where = Partial<
  Pick<Evidence, 'evidence_kind' | 'subject_key' | 'object_key' | 'relationship_kind'>
> & {
  path?: string;
  line?: number;
};

function all(where: Where): Evidence[] {
  return out.evidence.filter(
    (e) =>
      (where.evidence_kind === undefined || e.evidence_kind === where.evidence_kind) &&
      (where.subject_key === undefined || e.subject_key === where.subject_key) &&
      (where.object_key === undefined || e.object_key === where.object_key) &&
      (where.relationship_kind === undefined || e.relationship_kind === where.relationship_kind) &&
      (where.path === undefined || e.location.path === where.path) &&
      (where.line === undefined || e.location.start_line === where.line),
  );
}

function one(where: Where): Evidence {
  const found = all(where);
  if (found.length !== 1)
    throw new Error(`expected one evidence for ${JSON.stringify(where)}, found ${found.length}`);
  return found[0]!;
}

function lines(e: Evidence): [number, number] {
  return [e.location.start_line, e.location.end_line];
}

function lineText(text: string, n: number): string {
  return text.split('\n')[n - 1] ?? '';
}

const GH = '.github/workflows/ci.yml';
const BUILD = 'job:github-actions/ci/build';
const DEPLOY = 'job:github-actions/ci/deploy';

test('GitHub workflow: triggers, risky pull_request_target, absent top-level permissions', (t) => {
  const p = one({ evidence_kind: 'pipeline-declared', subject_key: 'pipeline:github-actions/ci' });
  t.deepEqual(lines(p), [1, 59]);
  t.is(p.provider, 'github-actions');
  t.is(p.source_type, 'cicd');
  t.is(p.attributes.name, 'CI');
  t.deepEqual(p.attributes.events, [
    'push',
    'pull_request_target',
    'schedule',
    'workflow_dispatch',
  ]);
  t.deepEqual(p.attributes.triggers, [
    { event: 'push', branches: ['main'] },
    { event: 'pull_request_target', types: ['opened', 'synchronize'] },
    { event: 'schedule', crons: ['0 3 * * 1'] },
    { event: 'workflow_dispatch' },
  ]);
  t.true(p.attributes.risky_trigger);
  t.deepEqual(p.attributes.risky_triggers, ['pull_request_target']);
  t.is(p.attributes.permissions, 'default');
  t.false(p.attributes.permissions_declared);
  t.regex(p.summary, /repository default applies, which may be write-all/);
  t.deepEqual(p.attributes.secrets, ['GH_TOKEN', 'KUBECONFIG']);
});

test('GitHub jobs: part_of, job-level and default permissions, needs, environment, services', (t) => {
  const build = one({ evidence_kind: 'job-declared', subject_key: BUILD });
  t.is(build.relationship_kind, 'part_of');
  t.is(build.object_key, 'pipeline:github-actions/ci');
  t.deepEqual(lines(build), [14, 43]);
  t.deepEqual(build.attributes.permissions, { contents: 'write', packages: 'write' });
  t.is(build.attributes.permissions_source, 'job');
  t.is(build.attributes.runs_on, 'ubuntu-latest');
  t.deepEqual(build.attributes.services, [{ name: 'postgres', image: 'postgres:16' }]);
  t.false(build.attributes.matrix);

  const deploy = one({ evidence_kind: 'job-declared', subject_key: DEPLOY });
  t.deepEqual(lines(deploy), [44, 59]);
  t.is(deploy.attributes.permissions, 'default');
  t.is(deploy.attributes.permissions_source, 'default');
  t.deepEqual(deploy.attributes.environment, {
    name: 'production',
    url: 'https://shop.example.com',
  });
  t.deepEqual(deploy.attributes.needs, ['build']);
  t.is(deploy.attributes.if, "github.ref == 'refs/heads/main'");
  t.deepEqual(deploy.attributes.secrets, ['KUBECONFIG']);

  const dep = one({ evidence_kind: 'job-depends-on', subject_key: DEPLOY });
  t.is(dep.relationship_kind, 'depends_on');
  t.is(dep.object_key, BUILD);
  t.deepEqual(lines(dep), [45, 45]);

  const svc = one({ evidence_kind: 'image-reference', subject_key: BUILD });
  t.is(svc.object_key, 'image:postgres');
  t.deepEqual(lines(svc), [20, 23]);
  t.is(svc.attributes.role, 'service');
  t.is(svc.attributes.tag, '16');
});

test('GitHub uses: pin states, first party, objects and exact step lines', (t) => {
  const uses = all({ path: GH, evidence_kind: 'action-use', subject_key: BUILD });
  const by = (u: string) => uses.find((e) => e.attributes.uses === u)!;
  const checkout = by('actions/checkout@v4');
  t.is(checkout.object_key, 'action:actions/checkout');
  t.is(checkout.relationship_kind, 'uses');
  t.like(checkout.attributes, { ref: 'v4', pin: 'tag', pinned: false, first_party: true });
  t.deepEqual(lines(checkout), [25, 25]);
  t.is(
    checkout.summary,
    'step 1 of job build in workflow ci uses actions/checkout@v4 (tag, not pinned to a commit)',
  );

  const sha = by('acme/setup-tool@8f4b7f84864484a7bf31766abe9204da3cbe65b3');
  t.like(sha.attributes, { pin: 'sha', pinned: true, first_party: false, step: 'Setup tool' });
  t.deepEqual(lines(sha), [26, 27]);

  const branch = by('someone/lint-action@main');
  t.like(branch.attributes, { pin: 'branch', pinned: false, ref: 'main' });
  t.regex(branch.summary, /branch, not pinned to a commit/);

  const local = by('./.github/actions/prepare');
  t.is(local.object_key, 'action:./.github/actions/prepare');
  t.like(local.attributes, { pin: 'local', ref: null });

  const docker = uses.find((e) => String(e.attributes.uses).startsWith('docker://'))!;
  t.is(docker.object_key, 'image:alpine');
  t.like(docker.attributes, { pin: 'docker', pinned: true });
  t.deepEqual(lines(docker), [30, 30]);

  const bpa = by('docker/build-push-action@v6');
  t.deepEqual(lines(bpa), [31, 37]);
  t.is(
    one({ path: GH, evidence_kind: 'action-use', subject_key: DEPLOY }).attributes.uses,
    'azure/setup-kubectl@v4',
  );
});

test('GitHub builds and pushes: build-push-action and docker CLI in run scripts', (t) => {
  const web = one({ evidence_kind: 'image-push', object_key: 'image:ghcr.io-acme-web' });
  t.is(web.subject_key, BUILD);
  t.is(web.relationship_kind, 'pushes');
  t.deepEqual(lines(web), [31, 37]);
  t.deepEqual(web.attributes.tags, [
    'ghcr.io/acme/web:latest',
    'ghcr.io/acme/web:${{ github.sha }}',
  ]);
  t.is(
    one({ evidence_kind: 'image-build', object_key: 'image:ghcr.io-acme-web' }).relationship_kind,
    'builds',
  );

  const build = one({ evidence_kind: 'image-build', object_key: 'image:ghcr.io-acme-api' });
  t.deepEqual(lines(build), [41, 41]);
  t.is(build.attributes.tag, '${{ github.sha }}');
  t.is(build.attributes.step, 'Docker CLI');
  const push = one({ evidence_kind: 'image-push', object_key: 'image:ghcr.io-acme-api' });
  t.is(push.summary, 'job build in workflow ci pushes image ghcr.io/acme/api');
  t.deepEqual(lines(push), [41, 41]);
  t.regex(lineText(GITHUB_CI, 41), /docker push ghcr\.io\/acme\/api$/);
});

test('GitHub deploys: kubectl set image and helm upgrade --install name their services', (t) => {
  const deploys = all({ path: GH, evidence_kind: 'deploys' });
  t.is(deploys.length, 2);
  const api = one({ evidence_kind: 'deploys', subject_key: DEPLOY, object_key: 'service:api' });
  t.is(api.relationship_kind, 'deploys');
  t.like(api.attributes, {
    tool: 'kubectl',
    action: 'set image',
    target: 'api',
    environment: 'production',
    namespace: 'shop',
  });
  t.deepEqual(lines(api), [55, 55]);
  const cart = one({ evidence_kind: 'deploys', subject_key: DEPLOY, object_key: 'service:cart' });
  t.like(cart.attributes, {
    tool: 'helm',
    action: 'upgrade --install',
    target: 'cart',
    chart: './charts/cart',
  });
  t.deepEqual(lines(cart), [56, 57]);
  t.is(
    cart.summary,
    'job deploy in workflow ci deploys release cart with helm upgrade --install (environment production)',
  );
});

test('GitHub literal secrets: variable names only, at the exact line', (t) => {
  const secrets = all({ path: GH, evidence_kind: 'literal-secret' });
  t.deepEqual(
    secrets.map((e) => [e.attributes.variable, e.location.start_line, e.subject_key]),
    [
      ['NPM_TOKEN', 12, 'pipeline:github-actions/ci'],
      ['POSTGRES_PASSWORD', 23, BUILD],
    ],
  );
  // `${{ secrets.X }}` values are references, not literals.
  t.false(
    secrets.some(
      (e) => e.attributes.variable === 'GH_TOKEN' || e.attributes.variable === 'KUBECONFIG_DATA',
    ),
  );
});

test('GitHub second workflow: string trigger, write-all, matrix, deploy-pages, environment-only deploy, reusable workflow', (t) => {
  const p = one({
    evidence_kind: 'pipeline-declared',
    subject_key: 'pipeline:github-actions/release',
  });
  t.deepEqual(p.attributes.events, ['release']);
  t.is(p.attributes.permissions, 'write-all');
  t.false(p.attributes.risky_trigger);
  const pages = one({
    evidence_kind: 'job-declared',
    subject_key: 'job:github-actions/release/pages',
  });
  t.true(pages.attributes.matrix);
  t.deepEqual(pages.attributes.runs_on, ['self-hosted', 'linux']);
  t.is(pages.attributes.permissions_source, 'workflow');
  const pagesDeploy = one({
    evidence_kind: 'deploys',
    subject_key: 'job:github-actions/release/pages',
  });
  t.is(pagesDeploy.object_key, 'environment:github-pages');
  t.is(pagesDeploy.attributes.tool, 'github-pages');
  const notify = one({
    evidence_kind: 'deploys',
    subject_key: 'job:github-actions/release/notify',
  });
  t.is(notify.object_key, 'environment:staging');
  t.is(notify.attributes.tool, null);
  t.deepEqual(lines(notify), [13, 13]);
  const call = one({ evidence_kind: 'action-use', subject_key: 'job:github-actions/release/call' });
  t.is(call.object_key, 'pipeline:github-actions/deploy');
  t.like(call.attributes, { reusable_workflow: true, pin: 'local' });
  t.true(
    one({ evidence_kind: 'job-declared', subject_key: 'job:github-actions/release/call' })
      .attributes.secrets_inherit,
  );
});

test('GitLab CI: stages, extends, includes, services, needs, environment deploys', (t) => {
  const p = one({ evidence_kind: 'pipeline-declared', subject_key: 'pipeline:gitlab-ci/root' });
  t.is(p.provider, 'gitlab-ci');
  t.deepEqual(p.attributes.stages, ['build', 'test', 'deploy']);
  t.is(p.attributes.unresolved_includes, 2);
  const gaps = out.gaps.filter((g) => g.path === '.gitlab-ci.yml');
  t.deepEqual(gaps.map((g) => g.reason).sort(), [
    'gitlab_extends_not_resolved',
    'gitlab_include_not_resolved',
    'gitlab_include_not_resolved',
  ]);
  t.true(gaps.some((g) => g.message.includes('Security/SAST.gitlab-ci.yml')));
  t.deepEqual(
    all({ evidence_kind: 'pipeline-include' }).map((e) => [
      e.attributes.include_type,
      e.attributes.resolved,
      e.location.start_line,
    ]),
    [
      ['template', false, 2],
      ['local', true, 3],
      ['remote', false, 4],
    ],
  );
  t.is(
    all({ subject_key: 'job:gitlab-ci/root/.docker' }).length,
    0,
    'hidden templates are not jobs',
  );

  const build = one({ evidence_kind: 'job-declared', subject_key: 'job:gitlab-ci/root/build' });
  t.deepEqual(lines(build), [26, 33]);
  t.like(build.attributes, { stage: 'build', image: 'docker:27', image_from: '.docker' });
  const buildImage = one({
    evidence_kind: 'image-reference',
    subject_key: 'job:gitlab-ci/root/build',
    object_key: 'image:docker',
    line: 17,
  });
  t.is(buildImage.attributes.inherited_from, '.docker');
  const push = one({ evidence_kind: 'image-push', subject_key: 'job:gitlab-ci/root/build' });
  t.is(push.object_key, 'image:registry.gitlab.com-acme-shop-api');
  t.deepEqual(lines(push), [31, 31]);

  const pg = one({
    evidence_kind: 'image-reference',
    subject_key: 'job:gitlab-ci/root/test',
    object_key: 'image:postgres',
  });
  t.deepEqual(lines(pg), [39, 40]);
  t.is(pg.attributes.role, 'service');
  t.is(
    one({ evidence_kind: 'job-depends-on', subject_key: 'job:gitlab-ci/root/test' }).object_key,
    'job:gitlab-ci/root/build',
  );

  const deploy = one({ evidence_kind: 'job-declared', subject_key: 'job:gitlab-ci/root/deploy' });
  t.like(deploy.attributes, { image: 'bitnami/kubectl:1.30', when: 'manual' });
  t.deepEqual(deploy.attributes.inherited_from, ['.deploy-base', '.docker']);
  t.deepEqual(
    all({ evidence_kind: 'job-depends-on', subject_key: 'job:gitlab-ci/root/deploy' }).map(
      (e) => e.object_key,
    ),
    ['job:gitlab-ci/root/build', 'job:gitlab-ci/root/test'],
  );
  const api = one({
    evidence_kind: 'deploys',
    subject_key: 'job:gitlab-ci/root/deploy',
    object_key: 'service:api',
  });
  t.is(api.attributes.environment, 'production');
  t.deepEqual(lines(api), [56, 56]);
  t.truthy(
    one({
      evidence_kind: 'deploys',
      subject_key: 'job:gitlab-ci/root/deploy',
      object_key: 'service:cart',
    }),
  );
  const review = one({ evidence_kind: 'deploys', subject_key: 'job:gitlab-ci/root/review' });
  t.is(review.object_key, 'environment:review-ci-commit-ref-slug');
  t.true(review.attributes.dynamic);
  t.is(
    one({ evidence_kind: 'literal-secret', path: '.gitlab-ci.yml' }).attributes.variable,
    'REGISTRY_PASSWORD',
  );
});

test('GitLab local include: its jobs join the pipeline and are cited in the included file', (t) => {
  const lint = one({ evidence_kind: 'job-declared', subject_key: 'job:gitlab-ci/root/lint' });
  t.is(lint.location.path, 'ci/templates.yml');
  t.deepEqual(lines(lint), [3, 7]);
  t.is(lint.object_key, 'pipeline:gitlab-ci/root');
  t.is(lint.attributes.image, 'node:20');
  t.is(all({ evidence_kind: 'pipeline-declared', path: 'ci/templates.yml' }).length, 0);
});

test('CircleCI: orbs with pin states, jobs, executor images, requires, orb jobs, run steps', (t) => {
  const orbs = all({ evidence_kind: 'action-use', subject_key: 'pipeline:circleci/root' });
  t.deepEqual(
    orbs.map((e) => [e.object_key, e.attributes.pin, e.attributes.pinned, e.location.start_line]),
    [
      ['orb:circleci/node', 'exact', true, 4],
      ['orb:circleci/aws-ecr', 'range', false, 5],
      ['orb:circleci/kubernetes', 'volatile', false, 6],
    ],
  );
  const build = one({ evidence_kind: 'job-declared', subject_key: 'job:circleci/root/build' });
  t.is(build.object_key, 'pipeline:circleci/root');
  t.deepEqual(lines(build), [25, 34]);
  t.like(build.attributes, { executor: 'builder', resource_class: 'medium' });
  t.deepEqual(build.attributes.contexts, ['docker-hub']);
  const executorImage = one({
    evidence_kind: 'image-reference',
    subject_key: 'job:circleci/root/build',
  });
  t.like(executorImage.attributes, { executor: 'builder', role: 'primary' });
  t.deepEqual(lines(executorImage), [11, 11]);
  t.deepEqual(
    lines(one({ evidence_kind: 'image-push', subject_key: 'job:circleci/root/build' })),
    [34, 34],
  );
  t.deepEqual(
    all({ evidence_kind: 'image-reference', subject_key: 'job:circleci/root/test' }).map((e) => [
      e.object_key,
      e.attributes.role,
    ]),
    [
      ['image:cimg-node', 'primary'],
      ['image:cimg-postgres', 'service'],
    ],
  );
  const orbCommand = one({ evidence_kind: 'action-use', subject_key: 'job:circleci/root/test' });
  t.like(orbCommand.attributes, { command: 'install-packages', pin: 'exact' });
  t.is(
    one({ evidence_kind: 'deploys', subject_key: 'job:circleci/root/deploy' }).object_key,
    'service:api',
  );
  const ecr = one({ evidence_kind: 'image-push', subject_key: 'job:circleci/root/push-ecr' });
  t.is(ecr.object_key, 'image:api');
  t.deepEqual(
    all({ evidence_kind: 'job-depends-on', path: '.circleci/config.yml' }).map(
      (e) => `${e.subject_key} -> ${e.object_key}`,
    ),
    [
      'job:circleci/root/build -> job:circleci/root/test',
      'job:circleci/root/push-ecr -> job:circleci/root/test',
      'job:circleci/root/deploy -> job:circleci/root/build',
    ],
  );
  t.like(
    one({ evidence_kind: 'job-declared', subject_key: 'job:circleci/root/deploy' }).attributes,
    {
      filters: { branches: { only: 'main' } },
    },
  );
});

test('Azure Pipelines: stages, jobs, tasks with versions, deployment environment, template gap', (t) => {
  const p = one({
    evidence_kind: 'pipeline-declared',
    subject_key: 'pipeline:azure-pipelines/root',
  });
  t.like(p.attributes, { triggers: { trigger: { branches: { include: ['main'] } }, pr: 'none' } });
  const job = one({
    evidence_kind: 'job-declared',
    subject_key: 'job:azure-pipelines/root/build/buildimage',
  });
  t.deepEqual(lines(job), [13, 25]);
  const task = one({ evidence_kind: 'action-use', object_key: 'task:docker' });
  t.like(task.attributes, { uses: 'Docker@2', ref: '2', pin: 'major', pinned: false });
  const push = one({
    evidence_kind: 'image-push',
    subject_key: 'job:azure-pipelines/root/build/buildimage',
  });
  t.is(push.object_key, 'image:acme-api');
  const deploy = one({
    evidence_kind: 'job-declared',
    subject_key: 'job:azure-pipelines/root/deploy/deployweb',
  });
  t.like(deploy.attributes, {
    kind: 'deployment',
    strategy: 'runOnce',
    environment: { name: 'production' },
  });
  t.deepEqual(deploy.attributes.stage_depends_on, ['Build']);
  const helm = one({
    evidence_kind: 'deploys',
    object_key: 'service:web',
    path: 'azure-pipelines.yml',
    line: 37,
  });
  t.like(helm.attributes, { tool: 'helm', environment: 'production', chart: 'charts/web' });
  t.deepEqual(
    lines(one({ evidence_kind: 'deploys', path: 'azure-pipelines.yml', line: 43 })),
    [43, 43],
  );
  t.true(
    out.gaps.some(
      (g) => g.path === 'azure-pipelines.yml' && g.reason === 'azure_template_not_resolved',
    ),
  );
  t.is(
    one({ evidence_kind: 'literal-secret', path: 'azure-pipelines.yml' }).attributes.variable,
    'ACR_PASSWORD',
  );
});

test('Jenkinsfile: declarative stages, docker agent, sh commands, shared library; scripted is a gap', (t) => {
  const p = one({ evidence_kind: 'pipeline-declared', subject_key: 'pipeline:jenkins/root' });
  t.deepEqual(lines(p), [3, 30]);
  t.deepEqual(p.attributes.stages, ['Build', 'Deploy']);
  t.deepEqual(p.attributes.credentials, ['aws-prod']);
  t.is(
    one({ evidence_kind: 'image-reference', subject_key: 'pipeline:jenkins/root' }).object_key,
    'image:node',
  );
  const build = one({ evidence_kind: 'job-declared', subject_key: 'job:jenkins/root/build' });
  t.deepEqual(lines(build), [13, 19]);
  const image = one({ evidence_kind: 'image-build', subject_key: 'job:jenkins/root/build' });
  t.is(image.object_key, 'image:registry.acme.io-acme-web');
  t.deepEqual(lines(image), [17, 17]);
  t.is(
    all({ path: 'Jenkinsfile', evidence_kind: 'image-push' }).length,
    0,
    'commented-out steps are ignored',
  );
  t.is(
    one({ evidence_kind: 'job-declared', subject_key: 'job:jenkins/root/deploy' }).attributes.when,
    "branch 'main'",
  );
  const helm = one({ evidence_kind: 'deploys', subject_key: 'job:jenkins/root/deploy', line: 24 });
  t.like(helm.attributes, { tool: 'helm', target: 'web' });
  t.deepEqual(
    lines(one({ evidence_kind: 'deploys', subject_key: 'job:jenkins/root/deploy', line: 25 })),
    [25, 25],
  );
  const lib = one({ evidence_kind: 'action-use', subject_key: 'pipeline:jenkins/root' });
  t.like(lib.attributes, { ref: 'v2.3.1', pin: 'tag' });
  t.is(
    one({ evidence_kind: 'literal-secret', path: 'Jenkinsfile' }).attributes.variable,
    'DEPLOY_TOKEN',
  );

  t.true(
    one({ evidence_kind: 'pipeline-declared', subject_key: 'pipeline:jenkins/legacy' }).attributes
      .scripted,
  );
  t.deepEqual(
    out.gaps.filter((g) => g.path === 'legacy/Jenkinsfile').map((g) => g.reason),
    ['jenkins_scripted_pipeline'],
  );
});

test('every evidence cites real lines with the sha256 of exactly those lines', (t) => {
  const texts = new Map(FILES.map((f) => [f.path, f.text]));
  t.true(out.evidence.length > 80);
  for (const e of out.evidence) {
    const text = texts.get(e.location.path);
    t.truthy(text, e.location.path);
    const fileLines = text!.split('\n');
    t.true(
      e.location.start_line >= 1 && e.location.end_line >= e.location.start_line,
      JSON.stringify(e.location),
    );
    t.true(e.location.end_line <= fileLines.length);
    const expected = crypto
      .createHash('sha256')
      .update(fileLines.slice(e.location.start_line - 1, e.location.end_line).join('\n'))
      .digest('hex');
    t.is(e.content_sha256, expected, `${e.evidence_kind} ${e.subject_key}`);
    t.is(e.source_type, 'cicd');
    t.true(e.summary.length > 0 && !e.summary.includes('\n'));
    t.is(
      e.relationship_kind === null,
      e.object_key === null,
      `${e.evidence_kind} ${e.subject_key}`,
    );
  }
  t.false(out.evidence.some((e) => e.location.path === 'src/index.ts'));
});

test('literal secret values never appear in the output', (t) => {
  const json = JSON.stringify(out);
  for (const secret of LITERAL_SECRETS) t.false(json.includes(secret), secret);
  t.is(all({ evidence_kind: 'literal-secret' }).length, LITERAL_SECRETS.length);
});

test('output is deterministic and ordered by path, then line', async (t) => {
  const again = await analyzeCicd([...FILES].reverse());
  t.deepEqual(again, out);
  t.deepEqual(JSON.parse(JSON.stringify(out)), out, 'plain JSON, nothing lost in serialization');
  const keys = out.evidence.map((e) => [e.location.path, e.location.start_line] as const);
  for (let i = 1; i < keys.length; i++) {
    const [pa, la] = keys[i - 1]!;
    const [pb, lb] = keys[i]!;
    t.true(pa < pb || (pa === pb && la <= lb), `${pa}:${la} before ${pb}:${lb}`);
  }
});

test('malformed and odd input gives gaps, never throws', async (t) => {
  const bad = await analyzeCicd([
    {
      path: '.github/workflows/broken.yml',
      text: 'on: [push\njobs:\n  build: {runs-on: ubuntu-latest\n',
    },
    { path: '.gitlab-ci.yml', text: 'build:\n  script:\n    - echo "unterminated\n  stage: [\n' },
    { path: '.circleci/config.yml', text: 'version: 2.1\njobs:\n\t- bad tab\n' },
    { path: 'azure-pipelines.yml', text: '- just\n- a list\n' },
    { path: '.github/workflows/empty.yml', text: '' },
    {
      path: '.github/workflows/weird.yml',
      text: 'on: 5\njobs:\n  a: 1\n  b:\n    steps: nope\n    needs: {x: 1}\n    services: [1, 2]\n',
    },
    { path: '.github/workflows/two.yml', text: 'on: push\n---\non: pull_request\n' },
    { path: 'Jenkinsfile', text: 'pipeline {\n  stages {\n    stage("x") {\n' },
  ]);
  const reasons = bad.gaps.map((g) => `${g.path}:${g.reason}`);
  t.true(reasons.includes('.github/workflows/broken.yml:yaml_parse_error'));
  t.true(reasons.includes('.gitlab-ci.yml:yaml_parse_error'));
  t.true(reasons.includes('.circleci/config.yml:yaml_parse_error'));
  t.true(reasons.includes('azure-pipelines.yml:yaml_not_a_mapping'));
  t.true(reasons.includes('.github/workflows/empty.yml:yaml_not_a_mapping'));
  t.true(reasons.includes('.github/workflows/two.yml:yaml_parse_error'));
  t.false(
    reasons.some((r) => r.endsWith('analyzer_error')),
    reasons.join(', '),
  );
  const broken = bad.gaps.find((g) => g.path === '.github/workflows/broken.yml')!;
  t.regex(broken.message, /line \d+/);
  t.truthy(bad.evidence.find((e) => e.subject_key === 'pipeline:github-actions/weird'));
  t.truthy(bad.evidence.find((e) => e.subject_key === 'job:jenkins/root/x'));
});

test('pin classification and orb versions', (t) => {
  t.is(parseUses('actions/cache@v3.3.1').pin, 'tag');
  t.is(parseUses('actions/cache@1.2').pin, 'tag');
  t.is(parseUses('org/repo/sub/path@release/v2').pin, 'branch');
  t.is(parseUses('org/repo/sub/path@release/v2').object, 'action:org/repo/sub/path');
  t.is(parseUses('org/repo@abc1234').pin, 'branch', 'short shas are not pins');
  t.is(parseUses('github/codeql-action/init@v3').first_party, true);
  t.is(parseUses('docker://node:20').pinned, false);
  t.is(parseUses('org/shared/.github/workflows/build.yml@v1').reusable_workflow, true);
  t.is(parseOrb('n', 'circleci/node@5').pin, 'range');
  t.is(parseOrb('n', 'acme/tools@dev:alpha').pin, 'dev');
  t.is(parseOrb('n', 'circleci/node@5.1.0').pin, 'exact');
});

test('shell scanner: quoting, continuations, expressions, flags before positionals', (t) => {
  t.deepEqual(
    splitCommands('echo "a && b" && docker push x\\\n  --quiet; ls # docker push no').map((c) => [
      c.words,
      c.line,
      c.line_count,
    ]),
    [
      [['echo', 'a && b'], 0, 1],
      [['docker', 'push', 'x', '--quiet'], 0, 2],
      [['ls'], 1, 1],
    ],
  );
  const ops = scanScript(
    [
      'sudo docker buildx build --platform linux/amd64 --tag=reg.io/a/b:${{ github.sha }} --push .',
      'helm --kube-context prod upgrade -n shop --install api ./chart',
      'kubectl -n shop rollout restart deploy api',
      'terraform -chdir=infra apply -auto-approve',
      'aws ecs update-service --cluster prod --service orders --force-new-deployment',
      'gcloud run deploy checkout --image gcr.io/p/checkout:1 --region europe-west1',
      'az webapp deploy --resource-group rg -n storefront --src-path app.zip',
      'az webapp list',
      'npm publish --access public',
      'docker push $IMAGE',
    ].join('\n'),
    { IMAGE: 'ghcr.io/acme/worker:1' },
  );
  t.deepEqual(
    ops.map((o) => [o.kind, o.tool, o.target ?? o.image ?? null, o.line]),
    [
      ['image-build', 'docker', 'reg.io/a/b:${{ github.sha }}', 0],
      ['image-push', 'docker', 'reg.io/a/b:${{ github.sha }}', 0],
      ['deploy', 'helm', 'api', 1],
      ['deploy', 'kubectl', 'api', 2],
      ['deploy', 'terraform', null, 3],
      ['deploy', 'aws-ecs', 'orders', 4],
      ['deploy', 'gcloud-run', 'checkout', 5],
      ['deploy', 'az-webapp', 'storefront', 6],
      ['publish', 'npm', null, 8],
      ['image-push', 'docker', 'ghcr.io/acme/worker:1', 9],
    ],
  );
});

test('CI system detection by path', (t) => {
  t.is(cicdSystem('.github/workflows/ci.yml'), 'github-actions');
  t.is(cicdSystem('.github/workflows/nested/ci.yml'), null);
  // Composite actions' steps run in the jobs that use them (issue 30); other files there are not CI.
  t.is(cicdSystem('.github/actions/setup/action.yml'), 'github-actions');
  t.is(cicdSystem('.github/actions/setup/index.js'), null);
  t.is(cicdSystem('.gitlab-ci.yml'), 'gitlab-ci');
  t.is(cicdSystem('ci/deploy.gitlab-ci.yml'), 'gitlab-ci');
  t.is(cicdSystem('.circleci/config.yml'), 'circleci');
  t.is(cicdSystem('azure-pipelines.yml'), 'azure-pipelines');
  t.is(cicdSystem('Jenkinsfile'), 'jenkins');
  t.is(cicdSystem('deploy/Jenkinsfile.prod'), 'jenkins');
  t.is(cicdSystem('docker-compose.yml'), null);
});
