/**
 * Caddyfile `reverse_proxy` routes (issue 23, session 15): a Caddyfile COPY'd into the image a
 * compose service builds, or mounted into a caddy container, makes that service connect to each
 * upstream; Caddy's environment placeholders filled from the container's environment or their
 * own default. Fixtures of our own, written inline.
 */
import test from 'ava';
import { analyzeFileMap } from './helpers/pipeline';
import { caddyRoutes, fillCaddyPlaceholders } from '../analysis/cloud/caddyfile';
import type { Graph } from '../analysis/reconcile';
import { classifyPath } from '../domain/audits/classify';

const edges = (g: Graph, from: string) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to' && r.source_key === from)
    .map((r) => r.target_key)
    .sort();

const CADDYFILE = `# routes of the shop
(shop_routes) {
	request_body {
		max_size {$MAX_BODY}
	}
	reverse_proxy /api/* shop-api:8000
	reverse_proxy /{$BUCKET}/* files:9000
	reverse_proxy /render/* {
		to {$RENDER_UPSTREAM:http://shop-render:7000}
		lb_policy first
	}
	reverse_proxy @ws {env.WS_UPSTREAM}
	reverse_proxy /echo/* {http.request.host}:80
	# reverse_proxy /old/* shop-old:8000
	reverse_proxy /* h2c://shop-web:3000
}

{$SITE_ADDRESS:localhost} {
	import shop_routes
}
`;

const SERVICES = `  shop-api:
    image: acme/api:1
  shop-web:
    image: acme/web:1
  shop-render:
    image: acme/render:1
  shop-ws:
    image: acme/ws:1
  shop-old:
    image: acme/old:1
  files:
    image: minio/minio
`;

test('classify: a Caddyfile is deployment configuration', (t) => {
  t.is(classifyPath('apps/proxy/Caddyfile'), 'cloud');
  t.is(classifyPath('apps/proxy/Caddyfile.ce'), 'cloud');
  t.is(classifyPath('deploy/site.caddyfile'), 'cloud');
});

test('caddyRoutes: upstreams after the matcher and in `to`, never sockets, placeholders or comments', (t) => {
  const filled = fillCaddyPlaceholders(CADDYFILE, new Map([['WS_UPSTREAM', 'shop-ws:8080']]));
  t.deepEqual([...filled.defaulted].sort(), ['RENDER_UPSTREAM', 'SITE_ADDRESS']);
  const routes = caddyRoutes(
    `${filled.text}\nreverse_proxy unix//run/app.sock\nreverse_proxy 10.0.0.1:80 api:81\n`,
  );
  t.deepEqual(
    routes.map((r) => `${r.line} ${r.target.host}:${r.target.port}`),
    [
      '6 shop-api:8000',
      '7 files:9000',
      '9 shop-render:7000',
      '12 shop-ws:8080',
      '15 shop-web:3000',
      '23 10.0.0.1:80',
      '23 api:81',
    ],
  );
  // A `to` outside a reverse_proxy block is no upstream.
  t.deepEqual(caddyRoutes('example.com {\n\tto api:80\n}\n'), []);
});

test('a Caddyfile a Dockerfile COPYs, built by a compose service: that service routes to every upstream', async (t) => {
  const { graph, evidence } = await analyzeFileMap({
    'proxy/Dockerfile.ce': 'FROM caddy:2.10-alpine\nCOPY Caddyfile.ce /etc/caddy/Caddyfile\n',
    'proxy/Caddyfile.ce': CADDYFILE,
    'docker-compose.yml': `services:
  gateway:
    build:
      context: ./proxy
      dockerfile: Dockerfile.ce
    environment:
      WS_UPSTREAM: shop-ws:8080
${SERVICES}`,
  });
  t.deepEqual(edges(graph, 'service:gateway'), [
    'datastore:files',
    'service:shop-api',
    'service:shop-render',
    'service:shop-web',
    'service:shop-ws',
  ]);
  const ws = evidence.find(
    (e) => e.evidence_kind === 'proxy-route' && e.object_key === 'service:shop-ws',
  )!;
  t.is(ws.location.path, 'proxy/Caddyfile.ce');
  t.is(ws.location.start_line, 12);
  t.deepEqual(ws.attributes.filled_from, ['WS_UPSTREAM']);
});

test('a mounted Caddyfile: the compose service mounting it; its environment wins over the default', async (t) => {
  const { graph } = await analyzeFileMap({
    'deploy/Caddyfile': CADDYFILE,
    'deploy/docker-compose.yml': `services:
  caddy:
    image: caddy:2
    volumes:
      - ./Caddyfile:/etc/caddy/Caddyfile
    environment:
      RENDER_UPSTREAM: shop-render-2:7001
  shop-render-2:
    image: acme/render:1
${SERVICES}`,
  });
  // No WS_UPSTREAM: the `{env.WS_UPSTREAM}` route names nothing.
  t.deepEqual(edges(graph, 'service:caddy'), [
    'datastore:files',
    'service:shop-api',
    'service:shop-render-2',
    'service:shop-web',
  ]);
});
