/**
 * Compose overlays kept in their own folder (`-f compose.yaml -f ci/x/compose.yaml`: services
 * with neither image nor build) are no deployment variant of the project they layer on; and a
 * project with no `.env` takes a bind mount's `${VAR}` path from the committed template beside the
 * compose file (`env.example`), so the nginx configuration it mounts is the proxy's, at a lower
 * confidence. Fixtures of our own, written inline.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeFiles, connections as edges, entityKeys as keys } from './helpers/pipeline';

const BASE: SourceFile = {
  path: 'compose.yaml',
  text: 'services:\n  app:\n    image: acme/app:1\n    environment:\n      APP_DB_HOST: db\n      APP_CACHE_LOCATION: "cache:11211"\n  db:\n    image: postgres:16\n  cache:\n    image: memcached:1\n',
};
/** A CI overlay: the same services, networking only, plus a test double of its own. */
const OVERLAY: SourceFile = {
  path: 'ci/acme-test/compose.yaml',
  text: 'services:\n  app:\n    networks: [backend]\n  db:\n    networks: [backend]\n  cache:\n    networks: [backend]\n  fake-acme:\n    image: acme/fake:1\n    networks: [backend]\nnetworks:\n  backend: {}\n',
};

test('overlay: a folder of service fragments is no variant of the project it layers on', async (t) => {
  const { graph } = await analyzeFiles([BASE, OVERLAY]);
  t.is(graph.variants, undefined, JSON.stringify(graph.variants));
  t.deepEqual(edges(graph), ['service:app -> datastore:cache', 'service:app -> datastore:db']);
});

test('overlay: two complete projects in two folders still are variants', async (t) => {
  const other: SourceFile = {
    path: 'deploy/alt/compose.yaml',
    text: 'services:\n  app:\n    image: acme/app:1\n    environment:\n      APP_DB_HOST: db\n  db:\n    image: postgres:16\n  cache:\n    image: memcached:1\n  extra:\n    image: acme/extra:1\n',
  };
  const { graph } = await analyzeFiles([BASE, other]);
  t.is(graph.variants?.[0]?.family, 'docker-compose');
});

const NGINX_CONF =
  'upstream backend {\n    server app:8065;\n}\nserver {\n    listen 80;\n    location / { proxy_pass http://backend; }\n}\n';
const PROXIED: SourceFile[] = [
  { path: 'docker-compose.yml', text: 'services:\n  app:\n    image: acme/app:${APP_TAG}\n' },
  {
    path: 'docker-compose.nginx.yml',
    text: 'services:\n  nginx:\n    image: nginx:${NGINX_TAG}\n    depends_on: [app]\n    volumes:\n      - ${NGINX_CONFIG_PATH}:/etc/nginx/conf.d:ro\n      - ${DATA_PATH}:/data\n',
  },
  { path: 'nginx/conf.d/default.conf', text: NGINX_CONF },
];

test("env template: with no .env, a mount path the template documents makes the nginx config the proxy's, weaker", async (t) => {
  const template: SourceFile = {
    path: 'env.example',
    text: 'APP_TAG=1\nNGINX_TAG=alpine\nNGINX_CONFIG_PATH=./nginx/conf.d\nDATA_PATH=./volumes/data\n',
  };
  const { graph, evidence } = await analyzeFiles([...PROXIED, template]);
  t.deepEqual(edges(graph), ['service:nginx -> service:app']);
  const edge = graph.relationships.find((r) => r.kind === 'connects_to')!;
  t.true(Number(edge.confidence) < 0.5, edge.confidence);
  const route = evidence.find((e) => e.evidence_kind === 'proxy-route')!;
  t.is(route.attributes.owner_link, 'env-template');
  // The mount records say where the path came from; a folder the repository lacks gets none.
  const mounts = evidence.filter((e) => e.evidence_kind === 'volume-mount');
  t.like(mounts.find((m) => m.attributes.target === '/etc/nginx/conf.d')?.attributes, {
    host_path: 'nginx/conf.d',
    documented_by: 'env.example',
  });
  t.is(mounts.find((m) => m.attributes.target === '/data')?.attributes.host_path, null);
  t.false(keys(graph).includes('service:default'));
});

test('env template: a project .env wins; without either, the mount names nothing', async (t) => {
  const none = await analyzeFiles(PROXIED);
  t.deepEqual(edges(none.graph), []);
  const dotenv: SourceFile = { path: '.env', text: 'NGINX_CONFIG_PATH=/srv/nginx\n' };
  const template: SourceFile = { path: '.env.example', text: 'NGINX_CONFIG_PATH=./nginx/conf.d\n' };
  const withEnv = await analyzeFiles([...PROXIED, dotenv, template]);
  t.deepEqual(edges(withEnv.graph), []);
});
