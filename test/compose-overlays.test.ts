/**
 * Compose's default project (issue 23, session 15): `docker compose up` reads a folder's
 * `docker-compose.yml` and its override; `docker-compose.prod.yml` or `docker-compose.elk.yml`
 * beside them are read only with `-f`. Unless a deploy command names them, they add no entity
 * or edge of their own. Small repositories written here. Pure.
 */
import test from 'ava';
import { analyzeFileMap, connections as edges, entityKeys as keys } from './helpers/pipeline';

const BASE = `services:
  web:
    build: ./web
    environment:
      API_URL: http://api:8080
  api:
    build: ./api
    environment:
      DATABASE_URL: postgres://db:5432/app
  db:
    image: postgres:16
`;
const OVERRIDE = `services:
  api:
    ports: ["8080:8080"]
    environment:
      CACHE_URL: redis://cache:6379
  cache:
    image: redis:7
`;
const PROD = `services:
  web:
    environment:
      API_URL: http://api:8080
      BILLING_URL: http://billing:80
  api:
    environment:
      SEARCH_URL: http://elasticsearch:9200
`;
const ELK = `services:
  elasticsearch:
    image: elasticsearch:8.13.0
  kibana:
    image: kibana:8.13.0
    environment:
      ELASTICSEARCH_HOSTS: http://elasticsearch:9200
`;

test('compose overlays: -f files beside the default project add no entity or edge', async (t) => {
  const { graph } = await analyzeFileMap({
    'src/docker-compose.yml': BASE,
    'src/docker-compose.override.yml': OVERRIDE,
    'src/docker-compose.prod.yml': PROD,
    'src/docker-compose.elk.yml': ELK,
  });
  const k = keys(graph);
  const e = edges(graph);
  // The default project: docker-compose.yml and its override.
  for (const x of ['service:web', 'service:api', 'datastore:db', 'datastore:cache'])
    t.true(k.includes(x), k.join(', '));
  t.true(e.includes('service:web -> service:api'), e.join(', '));
  t.true(e.includes('service:api -> datastore:db'), e.join(', '));
  t.true(e.includes('service:api -> datastore:cache'), e.join(', '));
  // The overlays' own entities and edges are not the deployment's.
  t.false(
    k.some((x) => /elasticsearch|kibana|billing/.test(x)),
    k.join(', '),
  );
  t.false(
    e.some((x) => /elasticsearch|kibana|billing/.test(x)),
    e.join(', '),
  );
});

test('compose overlays: a file a README command names with -f is deployed', async (t) => {
  const { graph } = await analyzeFileMap({
    'README.md':
      '# Shop\n\n```sh\ndocker compose -f src/docker-compose.yml -f src/docker-compose.elk.yml up\n```\n',
    'src/docker-compose.yml': BASE,
    'src/docker-compose.elk.yml': ELK,
  });
  const k = keys(graph);
  t.true(
    k.some((x) => x.endsWith(':kibana')),
    k.join(', '),
  );
  t.true(
    edges(graph).some((x) => /kibana -> \w+:elasticsearch/.test(x)),
    edges(graph).join(', '),
  );
});

test('compose overlays: a folder without a default file keeps its compose files', async (t) => {
  const { graph } = await analyzeFileMap({ 'deploy/docker-compose.elk.yml': ELK });
  const k = keys(graph);
  t.true(
    k.some((x) => x.endsWith(':kibana')),
    k.join(', '),
  );
  t.true(
    k.some((x) => x.endsWith(':elasticsearch')),
    k.join(', '),
  );
});

test('compose overlays: an overlay in another folder is not judged by this folder', async (t) => {
  const { graph } = await analyzeFileMap({
    'src/docker-compose.yml': BASE,
    'ops/docker-compose.elk.yml': ELK,
  });
  t.true(
    keys(graph).some((x) => x.endsWith(':kibana')),
    keys(graph).join(', '),
  );
});

test('compose overlays: a Makefile recipe names its -f files through make variables', async (t) => {
  const { graph } = await analyzeFileMap({
    Makefile:
      'COMPOSE ?= docker compose\nFILES_CORE=-f src/docker-compose.yml\nFILES=$(FILES_CORE) -f src/docker-compose.elk.yml\n\nstart:\n\t$(COMPOSE) $(FILES) up -d\n',
    'src/docker-compose.yml': BASE,
    'src/docker-compose.elk.yml': ELK,
  });
  t.true(
    keys(graph).some((x) => x.endsWith(':kibana')),
    keys(graph).join(', '),
  );
});

test("compose overlays: the folder's .env COMPOSE_FILE is what `docker compose up` reads", async (t) => {
  const files = {
    'README.md': '# Shop\n\nRun `docker compose up` in the root folder.\n',
    'docker-compose.yml': BASE,
    'docker-compose.elk.yml': ELK,
  };
  const plain = await analyzeFileMap(files);
  t.false(
    keys(plain.graph).some((x) => x.endsWith(':kibana')),
    keys(plain.graph).join(', '),
  );
  const { graph } = await analyzeFileMap({
    ...files,
    '.env': 'TAG=1\nCOMPOSE_FILE=docker-compose.yml:docker-compose.elk.yml\n',
  });
  t.true(
    keys(graph).some((x) => x.endsWith(':kibana')),
    keys(graph).join(', '),
  );
});

test('compose overlays: a script named for Compose names the files it runs', async (t) => {
  const { graph } = await analyzeFileMap({
    'etc/docker/run-docker-compose.ps1':
      'docker-compose -f docker-compose.yml -f docker-compose.elk.yml up -d\n',
    'etc/docker/docker-compose.yml': BASE,
    'etc/docker/docker-compose.elk.yml': ELK,
  });
  t.true(
    keys(graph).some((x) => x.endsWith(':kibana')),
    keys(graph).join(', '),
  );
});

test('compose ports: a published port written as a variable with a default still says the engine', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': `services:
  api:
    build: ./api
    environment:
      DATABASE_URL: postgresql://app@db:5432/app
  db:
    image: acme/postgres-partman:15
    ports:
      - \${POSTGRES_PORT:-5432}:\${POSTGRES_PORT:-5432}
`,
  });
  t.true(keys(graph).includes('datastore:db'), keys(graph).join(', '));
  t.true(edges(graph).includes('service:api -> datastore:db'), edges(graph).join(', '));
});
