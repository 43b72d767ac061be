/**
 * A host-run Go server beside a developer-environment compose project (issue 23, session 16;
 * docs/decisions.md, "ClickHouse addresses, SQLite chosen by default, Go test-support
 * packages"):
 * - a ClickHouse server configuration (`config.d/config.xml`, root `<clickhouse>`) mounted into
 *   the ClickHouse container (`${PWD}/fs/...`, in a `.devenv/` folder): its `<zookeeper><node>`
 *   hosts are that container's connections; `<remote_servers>` replicas are not;
 * - a clickhouse-go DSN default (`tcp://localhost:9000`) of a unit declaring a ClickHouse client
 *   reaches the compose ClickHouse publishing 9000; a `tcp://` address of a unit without one is
 *   nothing;
 * - an embedded SQLite its settings choose (`Provider: "sqlite"`) is the unit's store even beside
 *   a PostgreSQL driver; without that choice it stays an alternative;
 * - a Go test-support package's file (it imports "testing") is test code: its URLs are fixtures.
 * File sets are built in memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { classifyPath } from '../domain/audits/classify';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

const DEV_COMPOSE = `services:
  chserver:
    image: clickhouse/clickhouse-server:25.1
    volumes:
      - \${PWD}/fs/etc/clickhouse-server/config.d/config.xml:/etc/clickhouse-server/config.d/config.xml
    ports:
      - "127.0.0.1:9000:9000"
    depends_on:
      - coordinator
  coordinator:
    image: acme/zookeeper:3.7
  replica-b:
    image: clickhouse/clickhouse-server:25.1
`;

const CH_CONFIG = `<?xml version="1.0"?>
<!-- developer server -->
<clickhouse replace="true">
    <tcp_port>9000</tcp_port>
    <remote_servers>
        <main>
            <shard>
                <replica><host>replica-b</host><port>9000</port></replica>
            </shard>
        </main>
    </remote_servers>
    <zookeeper>
        <node>
            <host>coordinator</host>
            <port>2181</port>
        </node>
    </zookeeper>
</clickhouse>
`;

const CH_PATH = '.devenv/ch/fs/etc/clickhouse-server/config.d/config.xml';

test('a mounted ClickHouse server config: its <zookeeper> node is the container’s connection, replicas are not', async (t) => {
  t.is(classifyPath(CH_PATH, CH_CONFIG), 'code');
  const { graph } = await analyzeFileMap({
    '.devenv/ch/compose.yaml': DEV_COMPOSE,
    [CH_PATH]: CH_CONFIG,
  });
  const edges = connections(graph);
  t.true(edges.includes('datastore:chserver -> service:coordinator'), edges.join('\n'));
  t.false(edges.some((e) => e.includes('replica-b') && e.includes('->')));
});

test('an XML file of another root, or a ClickHouse config nothing mounts, gives nothing', async (t) => {
  const other = CH_CONFIG.replace('<clickhouse replace="true">', '<configuration>').replace(
    '</clickhouse>',
    '</configuration>',
  );
  t.is(classifyPath('conf/hadoop-site.xml', other), null);
  const { graph } = await analyzeFileMap({
    '.devenv/ch/compose.yaml': DEV_COMPOSE.replace(/ {4}volumes:\n {6}- [^\n]*\n/, ''),
    [CH_PATH]: CH_CONFIG,
  });
  t.false(connections(graph).some((e) => e.endsWith('service:coordinator')));
});

const GO_MOD = (deps: string) => `module example.com/metrics

go 1.22

require (
${deps}
)
`;

const MAIN = `package main

func main() { run() }
`;

const STORE_CONFIG = `package telemetry

type Config struct {
	DSN string
}

func newConfig() Config {
	return Config{
		DSN: "tcp://localhost:9000",
	}
}
`;

const HOST_RUN_COMPOSE = `services:
  chserver:
    image: clickhouse/clickhouse-server:25.1
    ports:
      - "127.0.0.1:9000:9000"
`;

test('a clickhouse-go DSN default reaches the compose ClickHouse publishing its port', async (t) => {
  const { graph } = await analyzeFileMap({
    'go.mod': GO_MOD('\tgithub.com/ClickHouse/clickhouse-go/v2 v2.44.0'),
    'cmd/metrics/main.go': MAIN,
    'pkg/telemetry/config.go': STORE_CONFIG,
    'dev/compose.yaml': HOST_RUN_COMPOSE,
  });
  t.true(connections(graph).includes('service:metrics -> datastore:chserver'));
});

test('a tcp:// address of a unit without a ClickHouse client is no ClickHouse connection', async (t) => {
  const { graph } = await analyzeFileMap({
    'go.mod': GO_MOD('\tgithub.com/google/uuid v1.6.0'),
    'cmd/metrics/main.go': MAIN,
    'pkg/telemetry/config.go': STORE_CONFIG,
    'dev/compose.yaml': HOST_RUN_COMPOSE,
  });
  t.false(connections(graph).some((e) => e.endsWith('datastore:chserver')));
});

const SQLITE_OPEN = `package sqlitestore

import "database/sql"

func open(path string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+path)
}
`;

const SQL_CONFIG = `package sqlstore

type Config struct {
	Provider string
}

func newConfig() Config {
	return Config{
		Provider: "sqlite",
	}
}
`;

const SQL_DEPS = '\tgithub.com/jackc/pgx/v5 v5.7.1\n\tmodernc.org/sqlite v1.48.2';

test('an embedded SQLite its settings choose is the unit’s store beside a PostgreSQL driver', async (t) => {
  const { graph } = await analyzeFileMap({
    'go.mod': GO_MOD(SQL_DEPS),
    'cmd/metrics/main.go': MAIN,
    'pkg/sqlstore/sqlitestore/provider.go': SQLITE_OPEN,
    'pkg/sqlstore/config.go': SQL_CONFIG,
  });
  t.true(connections(graph).includes('service:metrics -> datastore:metrics-sqlite'));
});

test('without that choice (or with only a comparison) the embedded SQLite stays an alternative', async (t) => {
  const compared = SQL_CONFIG.replace(
    'return Config{\n\t\tProvider: "sqlite",\n\t}',
    'c := Config{}\n\tif c.Provider == "sqlite" {\n\t}\n\treturn c',
  );
  for (const config of [null, compared]) {
    const files: Record<string, string> = {
      'go.mod': GO_MOD(SQL_DEPS),
      'cmd/metrics/main.go': MAIN,
      'pkg/sqlstore/sqlitestore/provider.go': SQLITE_OPEN,
    };
    if (config) files['pkg/sqlstore/config.go'] = config;
    const { graph } = await analyzeFileMap(files);
    t.false(entityKeys(graph).includes('datastore:metrics-sqlite'));
  }
});

const HELPER = (imports: string) => `package notifytest

import (
${imports}
	"net/url"
)

func Template() *url.URL {
	u, _ := url.Parse("http://relay")
	return u
}
`;

test('a Go test-support package (it imports "testing") builds fixtures, not connections', async (t) => {
  const files = (imports: string) => ({
    'go.mod': GO_MOD('\tgithub.com/google/uuid v1.6.0'),
    'cmd/metrics/main.go': MAIN,
    'pkg/notify/notifytest/helper.go': HELPER(imports),
  });
  const helper = await analyzeFileMap(files('\t"testing"\n'));
  t.false(entityKeys(helper.graph).includes('service:relay'));
  // The same file without the `testing` import is program code: its address is a connection.
  const program = await analyzeFileMap(files(''));
  t.true(connections(program.graph).includes('service:metrics -> service:relay'));
});
