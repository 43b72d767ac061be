/**
 * Settings a container is given, read by what they are rather than by their name (issue 23,
 * session 15; docs/decisions.md, "Alloy configuration files and settings files known by
 * content"):
 * - a Grafana Alloy configuration (`config.alloy`) mounted into the Alloy container: its
 *   exporters' and writers' endpoints are the servers that container sends to; its scrape
 *   targets are not connections;
 * - a YAML/JSON file of any name whose head names a sibling container by URL, or a Grafana dskit
 *   server's configuration (`server:` with `http_listen_port`), mounted by itself into a
 *   container: its URLs are that container's (`tempo.yaml`'s metrics-generator remote_write);
 *   a folder mount, or no mount, gives nothing.
 * File sets are built in memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { classifyPath } from '../domain/audits/classify';
import { analyzeFileMap, connections } from './helpers/pipeline';

const COMPOSE = `services:
  alloy:
    image: grafana/alloy:v1.12.1
    volumes:
      - ./alloy/config.alloy:/etc/alloy/config.alloy
      - ./alloy/endpoints.json:/etc/alloy/endpoints.json
    command: ["run", "/etc/alloy/config.alloy"]
  tempo:
    image: grafana/tempo:2.9.0
    command: ["-config.file=/etc/tempo.yaml"]
    volumes:
      - ./tempo/tempo.yaml:/etc/tempo.yaml
  loki:
    image: grafana/loki:3.6.3
  mimir:
    image: grafana/mimir:2.17.4
  pyroscope:
    image: grafana/pyroscope:1.16.2
  app:
    image: acme/app:1
  jaeger:
    image: jaegertracing/all-in-one:1
`;

const ALLOY = `// Scrapes are pulls: no connection.
prometheus.scrape "apps" {
  targets = [{"__address__" = "app:4000", service = "app"}]
  forward_to = [prometheus.remote_write.mimir.receiver]
}

prometheus.remote_write "mimir" {
  endpoint {
    url = "http://mimir:9009/api/v1/push"
  }
}

loki.write "logs" {
  endpoint {
    url = "http://loki:3100/loki/api/v1/push"
  }
}

otelcol.receiver.otlp "in" {
  grpc {
    endpoint = "0.0.0.0:4317"
  }
  output { traces = [otelcol.exporter.otlp.tempo.input] }
}

otelcol.exporter.otlp "tempo" {
  client {
    endpoint = "tempo:4317"
    tls { insecure = true }
  }
}

/* otelcol.exporter.otlp "old" { client { endpoint = "jaeger:4317" } } */

pyroscope.write "profiles" {
  endpoint {
    url = "http://pyroscope:4040"
  }
}
`;

/** Tempo's configuration: the remote_write URL lies past the 4 KiB head classify reads. */
const TEMPO = `server:
  http_listen_port: 3200
${'# padding\n'.repeat(500)}metrics_generator:
  storage:
    path: /tmp/tempo/generator/wal
    remote_write:
      - url: http://mimir:9009/api/v1/push
        send_exemplars: true
`;

test('an Alloy config mounted into the Alloy container: its exporters and writers are its edges, scrapes are not', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE,
    'alloy/config.alloy': ALLOY,
  });
  const edges = connections(graph);
  for (const to of ['tempo', 'loki', 'mimir', 'pyroscope'])
    t.true(edges.includes(`service:alloy -> service:${to}`), to);
  t.false(edges.includes('service:alloy -> service:app'), 'a scrape target is no connection');
  t.false(edges.includes('service:alloy -> service:jaeger'), 'a commented exporter is nothing');
  t.false(
    edges.some((e) => e.startsWith('service:app ')),
    'the config is not the connections of anything else',
  );
});

test("a dskit server's config mounted by itself is the container's: tempo's remote_write is tempo -> mimir", async (t) => {
  t.is(classifyPath('tempo/tempo.yaml', TEMPO.slice(0, 4096)), 'code');
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE,
    'tempo/tempo.yaml': TEMPO,
  });
  t.true(connections(graph).includes('service:tempo -> service:mimir'));
});

test('a JSON file naming sibling containers by URL, mounted by itself, is that container’s settings', async (t) => {
  const endpoints = JSON.stringify(
    {
      metrics: { url: 'http://mimir:9009/api/v1/push' },
      traces: { url: 'http://tempo:4317' },
    },
    null,
    2,
  );
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE,
    'alloy/endpoints.json': endpoints,
  });
  const edges = connections(graph);
  t.true(edges.includes('service:alloy -> service:mimir'));
  t.true(edges.includes('service:alloy -> service:tempo'));
});

test('settings known only by content: no mount, or only a folder mount, gives nothing', async (t) => {
  const folderOnly = COMPOSE.replace(
    '- ./tempo/tempo.yaml:/etc/tempo.yaml',
    '- ./tempo:/etc/tempo',
  ).replace(/ {6}- \.\/alloy\/endpoints\.json[^\n]*\n/, '');
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': folderOnly,
    'tempo/tempo.yaml': TEMPO,
    'alloy/endpoints.json': '{"metrics": {"url": "http://mimir:9009/api/v1/push"}}',
  });
  const edges = connections(graph);
  t.false(edges.includes('service:tempo -> service:mimir'));
  t.false(edges.includes('service:alloy -> service:mimir'));
  // Names alone still decide nothing for a file with no such content.
  t.is(classifyPath('configuration.json', '{"name": "x"}'), null);
  t.is(classifyPath('dashboards/app.json', '{"links": [{"url": "https://grafana.com/"}]}'), null);
});

test('settings known only by content in a folder the container names are read', async (t) => {
  const named = COMPOSE.replace(
    '- ./tempo/tempo.yaml:/etc/tempo.yaml',
    '- ./tempo:/etc/tempo',
  ).replace('-config.file=/etc/tempo.yaml', '-config.file=/etc/tempo/tempo.yaml');
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': named,
    'tempo/tempo.yaml': TEMPO,
  });
  t.true(connections(graph).includes('service:tempo -> service:mimir'));
});
