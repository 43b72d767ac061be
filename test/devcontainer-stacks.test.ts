/**
 * A dev container's compose file (issue 23, session 12): the editor's workspace container and
 * the stores beside it are no deployment of the system when the repository deploys it
 * otherwise. Small repositories written here. Pure.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import {
  analyzeFiles,
  connections as edges,
  deployment,
  entityKeys as keys,
} from './helpers/pipeline';

const DEV: SourceFile = {
  path: '.devcontainer/docker-compose.yml',
  text: `services:
  workspace:
    build: { context: ., dockerfile: Dockerfile }
    command: sleep infinity
    environment:
      DB_HOST: devdb
  devdb:
    image: postgres:16
`,
};

const K8S: SourceFile[] = [
  {
    path: 'deploy/api.yaml',
    text: deployment('api', 'acme/api:1', { DATABASE_URL: 'postgres://orders-db:5432/orders' }),
  },
  { path: 'deploy/db.yaml', text: deployment('orders-db', 'postgres:16') },
];

test('dev container: its compose services are no entities when the system is deployed otherwise', async (t) => {
  const { graph } = await analyzeFiles([DEV, ...K8S]);
  const k = keys(graph);
  t.false(k.includes('service:workspace'), k.join(', '));
  t.false(k.includes('datastore:devdb'), k.join(', '));
  t.true(k.includes('datastore:orders-db'), k.join(', '));
  t.deepEqual(edges(graph), ['service:api -> datastore:orders-db']);
});

test('dev container: the only deployment a repository has stays whole; a deployable it shares keeps its identity', async (t) => {
  const alone = await analyzeFiles([DEV]);
  t.true(keys(alone.graph).includes('datastore:devdb'), keys(alone.graph).join(', '));
  t.true(
    edges(alone.graph).includes('service:workspace -> datastore:devdb'),
    edges(alone.graph).join(', '),
  );
  // A compose file outside .devcontainer/ is judged as any other.
  const moved = await analyzeFiles([{ ...DEV, path: 'dev/docker-compose.yml' }, ...K8S]);
  t.true(keys(moved.graph).includes('datastore:devdb'), keys(moved.graph).join(', '));
  // A dev stack's copy of a deployed store adds no edge of its own.
  const shared = await analyzeFiles([
    { ...DEV, text: DEV.text.replace(/devdb/g, 'orders-db') },
    ...K8S,
  ]);
  t.true(keys(shared.graph).includes('datastore:orders-db'), keys(shared.graph).join(', '));
  t.false(keys(shared.graph).includes('service:workspace'), keys(shared.graph).join(', '));
  t.deepEqual(edges(shared.graph), ['service:api -> datastore:orders-db']);
});
