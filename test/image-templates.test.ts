/**
 * Configuration templates an image renders from its environment at start (Go templates with
 * `.Env.X | default "v"`, gomplate `getenv "X" "v"`, `${X:-v}`), COPY'd into the image a compose
 * service pulls by name; the addresses are the templates' defaults and resolve through a compose
 * network alias. A compose value for the variable wins over the default. Fixtures of our own,
 * written inline.
 */
import test from 'ava';
import { analyzeFileMap } from './helpers/pipeline';
import { renderTemplate, templateDefaults } from '../analysis/cloud/image-templates';
import type { Graph } from '../analysis/reconcile';

const edges = (g: Graph) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to')
    .map((r) => `${r.source_key}->${r.target_key}`)
    .sort();

const confidenceOf = (g: Graph, from: string, to: string) =>
  Number(
    g.relationships.find(
      (r) => r.kind === 'connects_to' && r.source_key === from && r.target_key === to,
    )?.confidence,
  );

const DOCKERFILE = (what: string) => `FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y ${what}
COPY rootfs/ /
`;

const COMPOSE = (gatewayEnv = '- CHAT_BOSH_URL', workerEnv = '- CHAT_SERVER') => `services:
  gateway:
    image: \${REPO:-ghcr.io/acme}/gateway:\${TAG:-latest}
    ports: ['80:80']
    environment:
      ${gatewayEnv}
    networks:
      chat.net:
  chatd:
    image: \${REPO:-ghcr.io/acme}/chatd:\${TAG:-latest}
    expose: ['5222']
    networks:
      chat.net:
        aliases:
          - \${CHAT_SERVER:-chat.acme.internal}
  worker:
    image: \${REPO:-ghcr.io/acme}/worker:\${TAG:-latest}
    environment:
      ${workerEnv}
    networks:
      chat.net:
  other:
    image: ghcr.io/acme/other:latest
networks:
  chat.net:
`;

const GATEWAY_CONF = `{{ $CHAT_BOSH_URL := .Env.CHAT_BOSH_URL | default "http://chat.acme.internal:5280" -}}
{{ $STATS_URL := .Env.STATS_URL | default "http://stats.acme.internal:3000" -}}
server {
    listen 80;
    location = /http-bind {
        proxy_pass {{ $CHAT_BOSH_URL }}/http-bind?prefix=$prefix&$args;
    }
    location = /stats {
        proxy_pass {{ $STATS_URL }}/;
    }
}
`;

const WORKER_CONF = `{{ $CHAT_SERVER := .Env.CHAT_SERVER | default "chat.acme.internal" -}}
{{ $CHAT_PORT := .Env.CHAT_PORT | default "5222" -}}
{{ $MODE := .Env.WORKER_MODE | default "other" -}}
worker {
  xmpp {
    hostname = "{{ $CHAT_SERVER }}"
    port = {{ $CHAT_PORT }}
  }
}
`;

const files = (compose: string) => ({
  'docker-compose.yml': compose,
  'gateway/Dockerfile': DOCKERFILE('nginx'),
  'gateway/rootfs/defaults/site.conf': GATEWAY_CONF,
  'chatd/Dockerfile': DOCKERFILE('prosody'),
  'worker/Dockerfile': DOCKERFILE('openjdk-17-jre'),
  'worker/rootfs/defaults/worker.conf': WORKER_CONF,
});

test('template defaults COPYd into pulled images give the running services their addresses, through a network alias', async (t) => {
  const { graph } = await analyzeFileMap(files(COMPOSE()));
  const all = edges(graph);
  t.true(all.includes('service:gateway->service:chatd'), all.join('\n'));
  t.true(all.includes('service:worker->service:chatd'), all.join('\n'));
  // A default naming no declared service (stats.acme.internal) is no edge; a short word in a
  // variable not named for an address (`WORKER_MODE` default "other") neither.
  t.false(
    all.some((e) => /stats|->service:other/.test(e)),
    all.join('\n'),
  );
  // A default is weaker than an explicit value.
  t.true(confidenceOf(graph, 'service:worker', 'service:chatd') < 0.5);
  t.true(confidenceOf(graph, 'service:gateway', 'service:chatd') < 0.5);
});

test('a compose value for the variable wins over the template default', async (t) => {
  const { graph } = await analyzeFileMap(
    files(COMPOSE('- CHAT_BOSH_URL=http://other:5280', '- CHAT_SERVER=other')),
  );
  const all = edges(graph);
  t.false(all.includes('service:worker->service:chatd'), all.join('\n'));
  t.false(all.includes('service:gateway->service:chatd'), all.join('\n'));
  t.true(all.includes('service:gateway->service:other'), all.join('\n'));
});

test('a template in a folder no compose service runs gives no edge', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE(),
    'chatd/Dockerfile': DOCKERFILE('prosody'),
    'tools/Dockerfile': DOCKERFILE('openjdk-17-jre'),
    'tools/rootfs/defaults/worker.conf': WORKER_CONF,
  });
  t.false(
    edges(graph).some((e) => e.startsWith('service:tools')),
    edges(graph).join('\n'),
  );
});

test('templateDefaults and renderTemplate read the three default forms', (t) => {
  const text = [
    '{{ $A := .Env.A_HOST | default "a.internal" }}',
    'b = {{ getenv "B_URL" "http://b:80" }}',
    'c = ${C_ADDR:-c:9000}',
    'd = {{ default "d.internal" .Env.D_HOST }}',
    'a = {{ $A }}',
  ].join('\n');
  t.deepEqual(
    templateDefaults(text).map((d) => `${d.variable}=${d.value}@${d.line}`),
    ['A_HOST=a.internal@1', 'B_URL=http://b:80@2', 'C_ADDR=c:9000@3', 'D_HOST=d.internal@4'],
  );
  const r = renderTemplate(text, new Map([['A_HOST', 'set.internal']]));
  t.is(r.text.split('\n')[4], 'a = set.internal');
  t.is(r.text.split('\n')[1], 'b = http://b:80');
  t.deepEqual([...r.defaulted].sort(), ['B_URL', 'D_HOST']);
});
