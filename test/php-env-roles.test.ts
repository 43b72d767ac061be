/**
 * PHP environment reads through framework helpers (`System::getEnv`, `env()`), and the role of
 * such a read from where its value goes: a host name that only joins a list the code tests
 * membership in (or a list named for a role) is recognised, not called, so the compose variable
 * alone makes no call. A read the code builds a URL from stays a call. Small systems written for
 * this test: a PHP unit built by compose, with a second service it may call.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import type { Graph } from '../analysis/reconcile';
import { phpReadRole } from '../analysis/code/php-env-roles';
import { analyzeFiles, verifiable } from './helpers/pipeline';

const edges = (g: Graph) => g.relationships.map((r) => `${r.source_key} -> ${r.target_key}`);
const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const COMPOSE = `services:
  web:
    build: ./web
    environment:
      - _APP_MIGRATION_HOST=api
      - _APP_EXPORT_HOST=exporter
  api:
    image: example/api:1
  exporter:
    image: example/exporter:1
`;
const COMPOSER = '{"name": "acme/web", "require": {"php": ">=8.1"}}';

const ALLOWED = `<?php
use Utopia\\System\\System;

function isLocal(Request $request): bool {
    $localHosts = ['localhost', 'localhost:' . $request->getPort()];
    $migrationHost = System::getEnv('_APP_MIGRATION_HOST');
    if (!empty($migrationHost)) {
        $localHosts[] = $migrationHost;
        $localHosts[] = $migrationHost . ':' . $request->getPort();
    }
    return \\in_array($request->getHostname(), $localHosts, true);
}
`;
const EXPORT = `<?php
use Utopia\\System\\System;

$host = System::getEnv('_APP_EXPORT_HOST', 'exporter');
$endpoint = 'http://' . $host . '/v1';
$client = new Client($endpoint);
`;

test('a host read only into a membership-tested list makes no call; one built into a URL does', async (t) => {
  const input = files({
    'docker-compose.yml': COMPOSE,
    'web/composer.json': COMPOSER,
    'web/app/hosts.php': ALLOWED,
    'web/app/export.php': EXPORT,
    // A test calling the host is not the deployed code.
    'web/tests/HostsTest.php': `<?php
$host = System::getEnv('_APP_MIGRATION_HOST');
$client = new Client('http://' . $host . '/v1');
`,
  });
  const { graph, evidence } = await analyzeFiles(input);
  const e = edges(graph);
  t.false(e.includes('service:web -> service:api'), e.join('\n'));
  t.true(e.includes('service:web -> service:exporter'), e.join('\n'));
  // The reads are seen, where they are, with their role.
  const reads = evidence.filter((x) => x.evidence_kind === 'env-read');
  const migration = reads.find(
    (x) => x.attributes.variable === '_APP_MIGRATION_HOST' && x.attributes.in_test === false,
  );
  t.is(migration?.location.path, 'web/app/hosts.php');
  t.is(migration?.location.start_line, 6);
  t.is(migration?.attributes.address_role, 'allow-list');
  t.true(verifiable(input, migration!));
  const exporter = reads.find((x) => x.attributes.variable === '_APP_EXPORT_HOST');
  t.is(exporter?.attributes.address_role, undefined);
  t.is(exporter?.attributes.default, 'exporter');
});

test('one read of the variable used as an address keeps the call', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': COMPOSE,
      'web/composer.json': COMPOSER,
      'web/app/hosts.php': ALLOWED,
      'web/app/migrate.php': `<?php
$host = System::getEnv('_APP_MIGRATION_HOST');
$endpoint = 'http://' . $host . '/v1';
`,
    }),
  );
  t.true(edges(graph).includes('service:web -> service:api'), edges(graph).join('\n'));
});

test('list elements: a role-named list is an allow-list, any other list is not judged', (t) => {
  const role = (code: string, read: string) =>
    phpReadRole(code, code.indexOf(read), code.indexOf(read) + read.length);
  const read = "env('TRUSTED_HOST')";
  t.is(role(`<?php return ['trusted_hosts' => [${read}, 'localhost']];`, read), null);
  t.is(role(`<?php return ['allowed_hosts' => [${read}, 'localhost']];`, read), 'allow-list');
  t.is(role(`<?php $allowedHosts = array_filter([${read}]);`, read), 'allow-list');
  // Elasticsearch's `hosts` are the servers the client calls.
  t.is(role(`<?php return ['hosts' => [${read}]];`, read), null);
  t.is(role(`<?php $c = new Client([${read}]);`, read), null);
  // A list handed on to something else is not known to be a membership test.
  t.is(role(`<?php $hosts = [${read}]; connect($hosts);`, read), null);
  t.is(role(`<?php $hosts = [${read}]; return in_array($h, $hosts);`, read), 'allow-list');
});
