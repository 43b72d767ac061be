/**
 * A shared env file's framework variables (issue 23, session 16; docs/decisions.md, "A shared
 * env file's framework variables are not a product image's reads"): an `env_file` written for an
 * application image and also given to a third-party product image whose mounted configuration
 * names the variables it reads (`!env SY_DATABASE_URL`). File sets are built in memory and run
 * through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { classifyPath } from '../domain/audits/classify';
import { foreignFrameworkVariables, frameworkOf } from '../analysis/cloud/compose-env-sharing';
import { analyzeFileMap, connections } from './helpers/pipeline';

const COMPOSE = `services:
  app:
    image: example/ledger-server:2.0
    env_file: ./config/app.env
  jobs:
    image: example/ledger-server:2.0
    command: /start-jobs
    env_file: ./config/app.env
  syncer:
    image: example/syncbox-service:1.4
    env_file: ./config/app.env
    volumes:
      - ./syncer-config:/config:ro
    environment:
      SY_KEYS_URL: http://app:8000/keys
  pg:
    image: postgres:16
  kv:
    image: redis:7
`;

const ENV = `SY_DATABASE_URL=postgres://ledger:ledger@pg:5432/ledger
DJANGO_CACHE_LOCATION=redis://kv:6379/1
CELERY_BROKER=redis://kv:6379/2
`;

const SYNCER_CONFIG = `# values from the environment
replication:
  connections:
    - type: postgresql
      uri: !env SY_DATABASE_URL
client_auth:
  jwks_uri: !env SY_KEYS_URL
`;

const FILES = {
  'docker-compose.yml': COMPOSE,
  'config/app.env': ENV,
  'syncer-config/syncer.yaml': SYNCER_CONFIG,
};

test('a product image does not read the framework variables of the env file it shares', async (t) => {
  const { graph } = await analyzeFileMap(FILES);
  const edges = connections(graph);
  t.false(edges.includes('service:syncer -> datastore:kv'), edges.join('\n'));
  // What its mounted configuration names is its read; its own environment still counts.
  t.true(edges.includes('service:syncer -> datastore:pg'), edges.join('\n'));
  t.true(edges.includes('service:syncer -> service:app'), edges.join('\n'));
  // The application's containers keep every connection of the file.
  t.true(edges.includes('service:app -> datastore:kv'), edges.join('\n'));
  t.true(edges.includes('service:jobs -> datastore:kv'), edges.join('\n'));
  t.true(edges.includes('service:app -> datastore:pg'), edges.join('\n'));
});

test('without a mounted configuration naming its variables, the shared file stays its own', async (t) => {
  const { graph } = await analyzeFileMap({
    ...FILES,
    'syncer-config/syncer.yaml': SYNCER_CONFIG.replace(/!env SY_DATABASE_URL/, 'postgres://x'),
  });
  const edges = connections(graph);
  t.true(edges.includes('service:syncer -> datastore:kv'), edges.join('\n'));
});

test('a configuration of the framework itself, or one naming the variable, keeps it', (t) => {
  const base = {
    pulled: true,
    program: 'example/syncbox-service',
    sharers: new Set(['example/syncbox-service', 'example/ledger-server']),
    variables: ['SY_DATABASE_URL', 'DJANGO_CACHE_LOCATION', 'DATABASE_URL'],
  };
  const foreign = foreignFrameworkVariables({ ...base, config: () => SYNCER_CONFIG });
  t.true(foreign('DJANGO_CACHE_LOCATION'));
  // An unprefixed connection variable may be read natively: kept.
  t.false(foreign('DATABASE_URL'));
  t.false(foreign('SY_DATABASE_URL'));
  const django = foreignFrameworkVariables({
    ...base,
    config: () => `${SYNCER_CONFIG}backend: django.core.cache\n`,
  });
  t.false(django('DJANGO_CACHE_LOCATION'));
  const named = foreignFrameworkVariables({
    ...base,
    config: () => `${SYNCER_CONFIG}cache: \${DJANGO_CACHE_LOCATION}\n`,
  });
  t.false(named('DJANGO_CACHE_LOCATION'));
  // A file given to containers of one program only, or a built service: no judgement.
  const alone = foreignFrameworkVariables({
    ...base,
    sharers: new Set(['example/syncbox-service']),
    config: () => SYNCER_CONFIG,
  });
  t.false(alone('DJANGO_CACHE_LOCATION'));
  const built = foreignFrameworkVariables({ ...base, pulled: false, config: () => SYNCER_CONFIG });
  t.false(built('DJANGO_CACHE_LOCATION'));
  t.is(frameworkOf('NODE_OPTIONS'), null);
  t.is(frameworkOf('CELERY_BROKER'), 'celery');
});

test('a YAML file taking values by `!env` is read as deployment configuration', (t) => {
  t.is(classifyPath('syncer-config/syncer.yaml', SYNCER_CONFIG), 'cloud');
  t.is(classifyPath('syncer-config/syncer.yaml', 'replication:\n  enabled: true\n'), null);
});
