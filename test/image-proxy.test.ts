/**
 * A proxy configuration baked into an image (a Dockerfile COPYs the nginx template, the compose
 * file runs the published image), its template filled from the image's entrypoint defaults; and
 * npm/Python manifests that are no services (browser bundles, packages nothing runs, a
 * pyproject.toml of tool settings), and the one program a workspace root starts. Fixtures of our
 * own, written inline.
 */
import test from 'ava';
import { analyzeFileMap } from './helpers/pipeline';
import { entrypointDefaults } from '../analysis/cloud/proxies';
import { manifestKindOf } from '../analysis/code/manifests';
import type { Evidence } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';
import { classifyPath } from '../domain/audits/classify';

type Files = Record<string, string>;

const run = analyzeFileMap;

const edges = (g: Graph, from?: string) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to' && (from === undefined || r.source_key === from))
    .map((r) => `${r.source_key}->${r.target_key}`)
    .sort();
const entities = (g: Graph) =>
  g.entities
    .filter((e) => ['service', 'datastore', 'queue'].includes(e.kind))
    .map((e) => e.canonical_key)
    .sort();

// ---------------------------------------------------------------------------------------------
// 1. A proxy configuration COPY'd into an image

const ENTRYPOINT = `#!/usr/bin/env bash
export SHOP_API_URI=\${SHOP_API_URI:-http://shop-api:6060}
export SHOP_RENDER_URI="\${SHOP_RENDER_URI:-http://shop-render:6061}"
: "\${SHOP_SIZE:=10m}"
export SHOP_DYNAMIC=\${SHOP_DYNAMIC:-$(hostname)}
envsubst "\\$SHOP_API_URI,\\$SHOP_RENDER_URI" < /tmp/nginx.conf.template > /etc/nginx/nginx.conf
exec "$@"
`;

const IMAGE_FILES: Files = {
  'deploy/images/Dockerfile.web': `FROM nginx:1.27
COPY ./files/nginx.conf.template /tmp/nginx.conf.template
COPY ./files/web-entrypoint.sh /entrypoint.sh
ENTRYPOINT ["/bin/bash", "/entrypoint.sh"]
`,
  'deploy/images/Dockerfile.api': 'FROM eclipse-temurin:21\n',
  'deploy/images/files/web-entrypoint.sh': ENTRYPOINT,
  'deploy/images/files/nginx.conf.template': `http {
  server {
    location /api { proxy_pass $SHOP_API_URI/api; }
    location /render { proxy_pass $SHOP_RENDER_URI; }
  }
}
`,
};

test('classify: a container entrypoint script is deployment configuration', (t) => {
  t.is(classifyPath('deploy/images/files/web-entrypoint.sh'), 'cloud');
  t.is(classifyPath('docker/docker-entrypoint.sh'), 'cloud');
  t.is(classifyPath('scripts/build.sh'), 'code');
});

test('entrypoint defaults: literal `${X:-value}` and `${X:=value}` defaults, not computed ones', (t) => {
  t.deepEqual(
    [...entrypointDefaults(ENTRYPOINT)],
    [
      ['SHOP_API_URI', 'http://shop-api:6060'],
      ['SHOP_RENDER_URI', 'http://shop-render:6061'],
      ['SHOP_SIZE', '10m'],
    ],
  );
});

test('nginx template a Dockerfile COPYs: it belongs to the compose service running the image named like that Dockerfile, filled from the entrypoint defaults', async (t) => {
  const { graph, evidence } = await run({
    ...IMAGE_FILES,
    'deploy/images/docker-compose.yaml': `services:
  shop-web:
    image: acme/web:2.1
    environment:
      SHOP_RENDER_URI: http://shop-render-2:7000
  shop-api:
    image: acme/api:2.1
  shop-render:
    image: acme/render:2.1
  shop-render-2:
    image: acme/render:2.1
`,
  });
  // The compose environment wins over the entrypoint's default (`shop-render-2`, not `shop-render`).
  t.deepEqual(edges(graph, 'service:shop-web'), [
    'service:shop-web->service:shop-api',
    'service:shop-web->service:shop-render-2',
  ]);
  const route = evidence.find(
    (e) => e.evidence_kind === 'proxy-route' && e.object_key === 'service:shop-api',
  )!;
  t.is(route.attributes.owner, 'dockerfile-copy');
  t.is(route.attributes.owner_link, 'image-name');
  t.deepEqual(route.attributes.filled_from, ['SHOP_API_URI']);
  t.is(route.location.path, 'deploy/images/files/nginx.conf.template');
  // Known only through the image's name: below the 0.5 of a route of a mounted or built file.
  const rel = graph.relationships.find(
    (r) => r.source_key === 'service:shop-web' && r.target_key === 'service:shop-api',
  )!;
  t.true(Number(rel.confidence) < 0.5, rel.confidence);
  // The Dockerfiles' shared folder is no service of its own.
  t.false(entities(graph).includes('service:images'), entities(graph).join(', '));
});

test('a COPYd template whose image two compose services run, or none: no owner from the copy', async (t) => {
  const twice = await run({
    ...IMAGE_FILES,
    'deploy/images/docker-compose.yaml': `services:
  web-a:
    image: acme/web:2.1
  web-b:
    image: acme/web:2.1
  shop-api:
    image: acme/api:2.1
`,
  });
  t.deepEqual(edges(twice.graph, 'service:web-a'), []);
  t.deepEqual(edges(twice.graph, 'service:web-b'), []);
  const none = await run({
    ...IMAGE_FILES,
    'deploy/images/docker-compose.yaml': 'services:\n  shop-api:\n    image: acme/api:2.1\n',
  });
  t.false(
    none.evidence.some(
      (e) => e.evidence_kind === 'proxy-route' && e.attributes.owner === 'dockerfile-copy',
    ),
  );
});

test('a COPYd template of a Dockerfile a compose service builds: that service, at full strength', async (t) => {
  const { graph, evidence } = await run({
    'web/Dockerfile':
      'FROM nginx:1.27\nCOPY conf/default.conf.template /etc/nginx/templates/\nCOPY docker-entrypoint.sh /\n',
    'web/docker-entrypoint.sh': 'export API_ADDR=${API_ADDR:-api:8080}\nexec "$@"\n',
    'web/conf/default.conf.template': 'server { location / { proxy_pass http://$API_ADDR; } }\n',
    'deploy/docker-compose.yml': `services:
  front:
    build:
      context: ../web
  api:
    image: acme/api:1
`,
  });
  t.deepEqual(edges(graph, 'service:front'), ['service:front->service:api']);
  const route = evidence.find((e) => e.evidence_kind === 'proxy-route')!;
  t.is(route.attributes.owner, 'compose-build');
  t.is(route.attributes.owner_link, undefined);
});

// ---------------------------------------------------------------------------------------------
// 2. Manifests that are no services

test('a pyproject.toml of tool settings only declares no package', (t) => {
  t.is(manifestKindOf('pyproject.toml', '[tool.black]\nline_length = 100\n'), null);
  t.is(manifestKindOf('pyproject.toml', '[project]\nname = "api"\n'), 'pyproject.toml');
  t.is(manifestKindOf('pyproject.toml', '[tool.poetry]\nname = "api"\n'), 'pyproject.toml');
  t.is(
    manifestKindOf('pyproject.toml', '[build-system]\nrequires = ["hatchling"]\n'),
    'pyproject.toml',
  );
  t.is(manifestKindOf('pyproject.toml'), 'pyproject.toml');
});

test('an image repository: linter settings and configuration code beside a root Dockerfile make no root service', async (t) => {
  const { graph } = await run({
    Dockerfile: 'ARG FROM\nFROM ${FROM} AS main\nCOPY configuration/ /etc/app/config/\n',
    'pyproject.toml': '[tool.black]\nline_length = 100\n\n[tool.isort]\nprofile = "black"\n',
    'configuration/configuration.py':
      "import os\nDATABASE = {'HOST': os.environ.get('DB_HOST', 'localhost')}\n",
    'docker-compose.yml': `services:
  app:
    image: acme/app:latest
    environment:
      DB_HOST: postgres
  postgres:
    image: postgres:16
`,
  });
  t.deepEqual(entities(graph), ['datastore:postgres', 'service:app']);
});

const unitClass = (evidence: Evidence[], key: string) =>
  evidence.find((e) => e.evidence_kind === 'unit-declared' && e.subject_key === key)?.attributes
    .unit_class;

test('npm packages nothing runs: a browser bundle served by a dev server, a package without a run script', async (t) => {
  const { graph, evidence } = await run({
    'plugins/package.json': JSON.stringify({
      name: 'plugins',
      private: true,
      scripts: { build: 'pnpm -r run build', lint: 'eslint .' },
      devDependencies: { '@angular/cli': '22.0.0', vite: '7.0.0' },
    }),
    'plugins/apps/grid-plugin/package.json': JSON.stringify({
      name: 'grid-plugin',
      private: true,
      scripts: { build: 'ng build grid-plugin', serve: 'ng serve grid-plugin', test: 'vitest' },
    }),
    'plugins/apps/grid-plugin/src/main.ts': 'console.log(1);\n',
    'plugins/apps/demo-page/package.json': JSON.stringify({
      name: 'demo-page',
      private: true,
      scripts: { dev: 'vite', build: 'vite build', serve: 'vite preview' },
    }),
    'packages/keys/package.json': JSON.stringify({ name: '@acme/keys', main: 'index.js' }),
    'packages/keys/index.js': 'export function bind() {}\n',
    'shared/package.json': JSON.stringify({
      name: 'shared',
      dependencies: { 'date-fns': '4.0.0' },
      devDependencies: { ws: '8.0.0' },
      scripts: { lint: 'eslint .', test: 'node test.js' },
    }),
    'shared/src/time.js': 'export const now = () => Date.now();\n',
    // Still services: a start script; a package depending on a broker client.
    'api/package.json': JSON.stringify({
      name: 'api',
      scripts: { start: 'node server.js' },
      dependencies: { express: '5.0.0' },
    }),
    'api/server.js': "require('express')().listen(3000);\n",
    'worker/package.json': JSON.stringify({
      name: 'worker',
      main: 'index.js',
      dependencies: { amqplib: '0.10.0' },
    }),
    'worker/index.js': "require('amqplib').connect('amqp://rabbitmq');\n",
  });
  t.is(unitClass(evidence, 'service:grid-plugin'), 'client');
  t.is(unitClass(evidence, 'service:demo-page'), 'client');
  t.is(unitClass(evidence, 'service:keys'), 'library');
  t.is(unitClass(evidence, 'service:shared'), 'library');
  t.is(unitClass(evidence, 'service:api'), 'service');
  t.is(unitClass(evidence, 'service:worker'), 'service');
  const services = entities(graph).filter((k) => k.startsWith('service:'));
  t.deepEqual(services, ['service:api', 'service:worker']);
});

test('a package whose start runs its members (`pnpm -r run start`) is its one member with a start script', async (t) => {
  const { graph } = await run({
    'assist/package.json': JSON.stringify({
      name: '@acme/assist',
      scripts: { build: 'pnpm -r run build', start: 'pnpm -r --parallel run start' },
    }),
    'assist/packages/server/package.json': JSON.stringify({
      name: 'assist-server',
      scripts: { start: 'node dist/index.js' },
      dependencies: { express: '5.0.0' },
    }),
    'assist/packages/server/src/index.ts':
      "import express from 'express';\nexpress().listen(4401);\n",
    'assist/packages/ui/package.json': JSON.stringify({
      name: 'assist-ui',
      scripts: { start: 'vite build --watch' },
      dependencies: { react: '19.0.0' },
    }),
    'deploy/docker-compose.yaml': 'services:\n  acme-assist:\n    image: acme/assist:1\n',
  });
  const assist = graph.entities.find((e) => e.canonical_key === 'service:acme-assist')!;
  t.truthy(assist);
  t.true((assist.attributes.aliases as string[]).includes('service:assist-server'));
  t.false(entities(graph).includes('service:assist-server'));
});

test('a recursive start with several members that run something merges none', async (t) => {
  const { graph } = await run({
    'package.json': JSON.stringify({ name: 'mono', scripts: { start: 'turbo run start' } }),
    'apps/a/package.json': JSON.stringify({
      name: 'a',
      scripts: { start: 'node a.js' },
      dependencies: { express: '5.0.0' },
    }),
    'apps/b/package.json': JSON.stringify({
      name: 'b',
      scripts: { start: 'node b.js' },
      dependencies: { express: '5.0.0' },
    }),
  });
  const keys = entities(graph);
  t.true(keys.includes('service:a') && keys.includes('service:b'), keys.join(', '));
});
