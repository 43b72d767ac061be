/**
 * Kafka Connect connector configurations (docs/decisions.md, "Kafka Connect connectors"): a JSON
 * file with a `connector.class` (flat, as `PUT /connectors/<name>/config` takes it, or under
 * `config`, as `POST /connectors` does) is registered with a Kafka Connect worker over its REST
 * API; the connector then runs inside that worker, which opens the connection the file names:
 * a Debezium source's `database.hostname`, a JDBC connector's `connection.url`, a MongoDB
 * connector's connection string. The worker is the one compose service of the project running a
 * Kafka Connect image; with none, or several, nobody is said to connect.
 */
import type { Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence } from '../shared/evidence';
import { parseImageRef } from '../shared/images';
import { parseUrlValue } from '../shared/urls';
import { asString, isRecord } from '../shared/values';
import type { ComposeFile } from './compose-merge';
import type { HostResolver } from './env';

/** Kafka Connect worker images (the last repository segment, or Debezium's `connect`). */
const WORKER_IMAGE =
  /(^|\/)(debezium\/connect|cp-kafka-connect(-base)?|cp-server-connect(-base)?|kafka-connect)$/i;

/** The engine a connector class reads or writes, by its package or name. */
const ENGINES: [RegExp, string][] = [
  [/postgres/i, 'postgres'],
  [/mysql/i, 'mysql'],
  [/mariadb/i, 'mariadb'],
  [/mongo/i, 'mongodb'],
  [/sqlserver/i, 'mssql'],
  [/oracle/i, 'oracle'],
];

/** Whether a file is a connector configuration: JSON whose head names a `connector.class`. */
export function isConnectorConfig(file: SourceFile): boolean {
  return /\.json$/i.test(file.path) && /"connector\.class"\s*:/.test(file.text.slice(0, 4096));
}

/** The connector's settings: the object itself, or its `config`. */
function settingsOf(text: string): Record<string, unknown> | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(v)) return null;
  const cfg = isRecord(v.config) ? v.config : v;
  return typeof cfg['connector.class'] === 'string' ? cfg : null;
}

/** The setting naming the host the connector opens, and the host. */
function target(cfg: Record<string, unknown>): { key: string; host: string } | null {
  const hostname = asString(cfg['database.hostname']);
  if (hostname && /^[a-z0-9][\w.-]*$/i.test(hostname))
    return { key: 'database.hostname', host: hostname.toLowerCase() };
  for (const key of ['connection.url', 'mongodb.connection.string', 'connection.uri']) {
    const url = asString(cfg[key]);
    const host = url ? parseUrlValue(url)?.hosts[0]?.host : undefined;
    if (host && !url?.includes('${')) return { key, host: host.toLowerCase() };
  }
  return null;
}

/** 1-based line of the first line of `text` holding `"key"`. */
function lineOf(text: string, key: string): number {
  const i = text.split('\n').findIndex((l) => l.includes(`"${key}"`));
  return i < 0 ? 1 : i + 1;
}

/**
 * Connections the project's Kafka Connect worker opens for the connectors the repository
 * configures. `parsed` are the compose files, `resolverOf` resolves a host for a compose file's
 * project.
 */
export function connectorEvidence(
  parsed: ComposeFile[],
  files: SourceFile[],
  resolverOf: (cf: ComposeFile) => HostResolver,
): Evidence[] {
  const workers = new Map<string, ComposeFile>();
  for (const cf of parsed)
    for (const [name, svc] of Object.entries(cf.services)) {
      const image = isRecord(svc) ? asString(svc.image) : null;
      const repo = image ? parseImageRef(image)?.repo : null;
      if (repo && WORKER_IMAGE.test(repo) && !workers.has(name)) workers.set(name, cf);
    }
  if (workers.size !== 1) return [];
  const [[worker, cf]] = [...workers] as [[string, ComposeFile]];
  const resolve = resolverOf(cf);
  const out: Evidence[] = [];
  for (const file of files) {
    if (!isConnectorConfig(file)) continue;
    const cfg = settingsOf(file.text);
    const t = cfg ? target(cfg) : null;
    if (!cfg || !t) continue;
    const cls = String(cfg['connector.class']);
    const r = resolve(t.host);
    // A connector to a host no compose service answers to is not this project's.
    if (!r || r.via === 'unresolved-short-name') continue;
    const engine = ENGINES.find(([re]) => re.test(cls))?.[1] ?? null;
    const line = lineOf(file.text, t.key);
    out.push(
      evidence(
        file,
        { start: line, end: line },
        {
          source: 'cloud',
          provider: 'kafka-connect',
          kind: 'connector-reference',
          subject: entityKey('service', worker),
          relationship: 'connects_to',
          object: r.key,
          summary: `connector ${cls} run by Kafka Connect worker ${worker} opens ${t.key}=${t.host} -> service ${r.name}`,
          attributes: {
            connector_class: cls,
            setting: t.key,
            host: t.host,
            ...(engine ? { engine } : {}),
            worker,
          },
        },
      ),
    );
  }
  return out;
}
