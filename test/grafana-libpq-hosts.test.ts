/**
 * Two readings of a deployment's own files (issue 23, session 14; docs/decisions.md, "libpq
 * host variables and Grafana data source files"):
 * - libpq's `PGHOST` (and a program's prefixed second database, `CODEINTEL_PGHOST`) holding a
 *   bare host name is the database the container connects to;
 * - a Grafana data source provisioning file (`apiVersion: 1`, `datasources:` with `url`) mounted
 *   into a Grafana container is that container's configuration: Grafana queries each `url`.
 * File sets are built in memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

const COMPOSE = `services:
  web:
    image: acme/web:1
    environment:
      - PGHOST=main-db
      - PGPORT=5432
      - REPORTS_PGHOST=reports-db
      - PGUSER=app
  main-db:
    image: postgres:16
    environment:
      - PGHOST=localhost
  reports-db:
    image: postgres:16
  grafana:
    image: grafana/grafana:11.0.0
    volumes:
      - ./grafana/provisioning/datasources:/etc/grafana/provisioning/datasources
  prometheus:
    image: prom/prometheus:v2.53.0
  loki:
    image: grafana/loki:3.0.0
`;

const DATASOURCES = `apiVersion: 1

datasources:
  - name: Prometheus
    type: prometheus
    access: proxy
    url: http://prometheus:9090
    isDefault: true
  - name: Reports
    type: postgres
    url: $REPORTS_HOST:5432
`;

test('libpq PGHOST and a prefixed *_PGHOST with a bare host name are database connections', async (t) => {
  const { graph } = await analyzeFileMap({ 'docker-compose.yml': COMPOSE });
  const edges = connections(graph);
  t.true(edges.includes('service:web -> datastore:main-db'));
  t.true(edges.includes('service:web -> datastore:reports-db'));
  // A database image's own setting names no connection of its own.
  t.false(edges.some((e) => e.startsWith('datastore:main-db ->')));
  // PGUSER / PGPORT name no host.
  t.false(entityKeys(graph).some((k) => k.includes('app') && k !== 'service:web'));
});

test('a mounted Grafana data source file gives the Grafana container its data sources', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE,
    'grafana/provisioning/datasources/sources.yaml': DATASOURCES,
  });
  const edges = connections(graph);
  t.true(edges.includes('service:grafana -> service:prometheus'));
  // Only what the file names: no other data source, and the file's folder is no service.
  t.false(edges.includes('service:grafana -> service:loki'));
  t.false(edges.some((e) => e.includes('reports-db') && e.startsWith('service:grafana')));
  t.false(entityKeys(graph).some((k) => k.includes('datasources') || k.includes('provisioning')));
});

test('a Grafana data source file no container is given draws no edge', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE.replace(/\n {4}volumes:\n.*datasources\n/, '\n'),
    'grafana/provisioning/datasources/sources.yaml': DATASOURCES,
  });
  t.false(connections(graph).some((e) => e.startsWith('service:grafana ->')));
  t.false(connections(graph).some((e) => e.includes('prometheus')));
});
