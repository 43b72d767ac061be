/**
 * ClickHouse idioms (docs/decisions.md, "ClickHouse addresses"):
 *
 * - Client DSNs. clickhouse-go's documented DSN forms are `clickhouse://host:9000/db` and
 *   `tcp://host:9000?...` (its v1 form, still parsed by `clickhouse.ParseDSN`); 9000 and 9440
 *   are ClickHouse's native-protocol ports (plain and TLS). A `clickhouse://` URL is always a
 *   ClickHouse address; a `tcp://` URL is one only in a unit that declares a ClickHouse client
 *   and only at a native port, so that an arbitrary `tcp://` address (a Docker daemon, a
 *   syslog sink) stays unread.
 * - Server configuration (analysis/code/settings-files.ts `isClickHouseServerConfig`). A ClickHouse server configuration file (an XML document whose root is
 *   `<clickhouse>`, or `<yandex>` before 21.x; `config.xml`, `config.d/*.xml`) names its
 *   coordination service under `<zookeeper><node><host>` (ZooKeeper or ClickHouse Keeper: the
 *   same client section). Those hosts are the servers the ClickHouse container given the file
 *   connects to (analysis/reconcile-mounted.ts). Not read: `<remote_servers>` replicas (the
 *   cluster's own members, usually the server itself) and `<keeper_server>` raft peers (the
 *   Keeper server's own quorum).
 */
import { entityKey } from '../evidence';
import { internalName, isLocalHost, parseUrl } from '../shared/urls';
import type { LineIndex } from '../shared/text';
import { emitConnection, push, type Ctx, type ScanKind } from './connection-scan';
import { hostLabel } from './connection-hosts';
import { readXml, type XmlElement } from './xml';
import type { Unit } from './model';

/** A `clickhouse://` or `tcp://` URL (the authority and what follows). */
const DSN_RE = /(?<![\w+.-])(clickhouse|tcp):\/\/([^\s'"`<>\\|^]*)/gi;
/** ClickHouse's native-protocol ports: plain and TLS. */
const NATIVE_PORTS = new Set([9000, 9440]);
/** A ClickHouse client library (clickhouse-go, ch-go, clickhouse-driver, clickhouse-connect...). */
const CLIENT = /(^|[/@])(clickhouse[\w.-]*|ch-go)(\/v\d+)?$/i;
/** Packages named for ClickHouse that are no client (SQL parsers, mocks). */
const NOT_CLIENT = /parser|mock|migrat/i;

/** Whether the unit's manifests declare a ClickHouse client library. */
export function hasClickHouseClient(unit: Unit): boolean {
  return unit.manifests.some((m) =>
    m.dependencies.some((d) => CLIENT.test(d.name) && !NOT_CLIENT.test(d.name)),
  );
}

/**
 * Emits a ClickHouse connection for every `clickhouse://` URL of the (comment-blanked) text, and
 * for every `tcp://` URL at a native port when the unit declares a ClickHouse client: the
 * address a clickhouse-go DSN default or setting names (`tcp://localhost:9000`).
 */
export function scanClickHouseDsns(ctx: Ctx, code: string, idx: LineIndex): void {
  let client: boolean | null = null;
  let m: RegExpExecArray | null;
  DSN_RE.lastIndex = 0;
  while ((m = DSN_RE.exec(code)) !== null) {
    const scheme = (m[1] ?? '').toLowerCase();
    const parsed = parseUrl('http', m[2] ?? '');
    if (parsed.unresolved || parsed.hosts.length === 0) continue;
    if (scheme === 'tcp') {
      client ??= hasClickHouseClient(ctx.unit);
      if (!client || !parsed.hosts.every((h) => h.port !== null && NATIVE_PORTS.has(h.port)))
        continue;
    }
    for (const hp of parsed.hosts)
      emitConnection(ctx, idx.lineAt(m.index), {
        scheme,
        engine: 'clickhouse',
        category: 'datastore',
        host: hp,
        database: parsed.database,
        hasCredentials: parsed.hasCredentials,
        detectedBy: 'clickhouse-dsn',
      });
  }
}

/** A ClickHouse server configuration (XML): read for its `<zookeeper>` nodes only. */
export const CLICKHOUSE_CONFIG: ScanKind = {
  style: 'none',
  provider: 'clickhouse-config',
  code: false,
  language: null,
};

const child = (e: XmlElement, name: string) => e.children.filter((c) => c.name === name);

/**
 * Emits a connection from the file's reader to each host of the configuration's
 * `<zookeeper><node><host>` entries: the coordination service (ZooKeeper or ClickHouse Keeper)
 * the server keeps replication and distributed-DDL state in.
 */
export function scanClickHouseKeepers(ctx: Ctx, text: string): void {
  const root = readXml(text).root;
  if (!root || !/^(clickhouse|yandex)$/.test(root.name)) return;
  for (const zk of child(root, 'zookeeper'))
    for (const node of child(zk, 'node')) {
      const hostEl = child(node, 'host')[0];
      const host = hostEl?.text.trim() ?? '';
      const portText = child(node, 'port')[0]?.text.trim() ?? '';
      const port = /^\d{1,5}$/.test(portText) ? Number(portText) : null;
      const internal = host && !isLocalHost(host) ? internalName(host) : null;
      if (!hostEl || internal === null) continue;
      const hp = { host, port };
      push(ctx, hostEl.line, `svc\u0000${internal}`, () => ({
        kind: 'connection-string',
        relationship: 'connects_to',
        object: entityKey('service', internal),
        summary: `${ctx.unit.name} keeps its coordination state in ${hostLabel(hp)} (ClickHouse <zookeeper> node)`,
        attributes: {
          scheme: 'zookeeper',
          host,
          port,
          has_credentials: false,
          internal_host: true,
          detected_by: 'clickhouse-zookeeper',
          setting: 'zookeeper.node.host',
          in_test: ctx.inTest,
        },
      }));
    }
}
