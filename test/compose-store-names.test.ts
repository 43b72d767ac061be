/**
 * A store named by its bare compose service name in a connection variable (issue 23, session 14;
 * docs/decisions.md, "A store named by its bare compose service name"). File sets are built in
 * memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { analyzeFileMap, connections } from './helpers/pipeline';

const COMPOSE = `services:
  cache:
    image: redis:alpine
  bus:
    image: rabbitmq:3-management-alpine
  cart:
    image: example/cart:1.0
  orders:
    image: example/orders:1.0
    environment:
      - ConnectionString=\${CART_REDIS:-cache}
      - EventBusConnection=\${SERVICE_BUS:-bus}
      - APP_NAME=cache
      - EventBus=bus
      - UpstreamConnection=cart
`;

test('a connection variable whose value is a store service name connects to that store', async (t) => {
  const { graph } = await analyzeFileMap({ 'src/docker-compose.yml': COMPOSE });
  const edges = connections(graph);
  t.true(edges.includes('service:orders -> datastore:cache'), edges.join('\n'));
  t.true(edges.includes('service:orders -> queue:bus'), edges.join('\n'));
});

test('a bare service name in another variable, or naming an application, is no address', async (t) => {
  const compose = COMPOSE.replace(/ConnectionString=.*\n/, '').replace(
    /EventBusConnection=.*\n/,
    '',
  );
  const { graph } = await analyzeFileMap({ 'src/docker-compose.yml': compose });
  const edges = connections(graph);
  t.false(
    edges.some((e) => e.startsWith('service:orders -> ')),
    edges.join('\n'),
  );
});

test('a store declared only in an alternative compose file is not one the default project runs', async (t) => {
  const { graph } = await analyzeFileMap({
    'src/docker-compose.yml': `services:
  cache:
    image: redis:alpine
  orders:
    image: example/orders:1.0
`,
    'src/docker-compose.override.yml': `services:
  orders:
    environment:
      - ConnectionString=cache
`,
    'src/docker-compose.prod.yml': `services:
  cache.data:
    image: redis:alpine
  orders:
    environment:
      - ConnectionString=cache.data
`,
  });
  const edges = connections(graph);
  t.true(edges.includes('service:orders -> datastore:cache'), edges.join('\n'));
  t.false(
    edges.some((e) => e.includes('cache.data')),
    edges.join('\n'),
  );
});
