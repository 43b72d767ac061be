/**
 * One image, several compose services: services of one project never merge, so when two services
 * build the same folder (one PHP image, the second run with `entrypoint: worker`) the code unit
 * joins one of them and the other is an entity of its own. It still runs the unit's code, so the
 * roles of the unit's reads (analysis/code/php-env-roles.ts) judge the addresses handed to it
 * too. A small PHP project written for this test.
 */
import test from 'ava';
import { analyzeFileMap, connections } from './helpers/pipeline';

const COMPOSE = `services:
  web:
    build: ./web
    environment:
      - _APP_MIGRATION_HOST=api
  worker:
    build: ./web
    entrypoint: worker
    environment:
      - _APP_MIGRATION_HOST=api
      - _APP_EXPORT_HOST=exporter
  api:
    image: example/api:1
  exporter:
    image: example/exporter:1
`;

const ALLOWED = `<?php
use Utopia\\System\\System;

function isLocal(Request $request): bool {
    $localHosts = ['localhost'];
    $migrationHost = System::getEnv('_APP_MIGRATION_HOST');
    if (!empty($migrationHost)) {
        $localHosts[] = $migrationHost;
    }
    return \\in_array($request->getHostname(), $localHosts, true);
}
`;
const EXPORT = `<?php
use Utopia\\System\\System;

$host = System::getEnv('_APP_EXPORT_HOST', 'exporter');
$client = new Client('http://' . $host . '/v1');
`;

const project = (more: Record<string, string>) => ({
  'docker-compose.yml': COMPOSE,
  'web/composer.json': '{"name": "acme/web", "require": {"php": ">=8.1"}}',
  'web/bin/worker': '#!/bin/sh\nexec php /usr/src/code/app/worker.php "$@"\n',
  'web/app/hosts.php': ALLOWED,
  'web/app/export.php': EXPORT,
  ...more,
});

test('a second service of one image: a host its code only recognises is no call', async (t) => {
  const { graph } = await analyzeFileMap(project({}));
  const e = connections(graph);
  t.true(
    e.some((x) => x.startsWith('service:worker ->')),
    e.join('\n'),
  );
  t.false(e.includes('service:web -> service:api'), e.join('\n'));
  t.false(e.includes('service:worker -> service:api'), e.join('\n'));
  // A host the code builds a URL from stays a call of the second service.
  t.true(e.includes('service:worker -> service:exporter'), e.join('\n'));
});

test('a second service of one image: a read used as an address keeps its call', async (t) => {
  const { graph } = await analyzeFileMap(
    project({
      'web/app/migrate.php': `<?php
$host = System::getEnv('_APP_MIGRATION_HOST');
$client = new Client('http://' . $host . '/v1');
`,
    }),
  );
  const e = connections(graph);
  t.true(e.includes('service:worker -> service:api'), e.join('\n'));
  t.true(e.includes('service:web -> service:api'), e.join('\n'));
});
