/**
 * The connection scan's per-file context and the evidence it emits: connections to datastores
 * and brokers, environment reads, and the detectors that work on one piece of text (key-value
 * and ADO.NET DSNs, datastore/broker clients built with a literal host argument).
 */
import { entityKey, type Evidence, type SourceFile } from '../evidence';
import { evidence, type EvidenceFields } from '../shared/evidence';
import type { LineIndex } from '../shared/text';
import { isLocalHost, parseHostPort, type HostPort } from '../shared/urls';
import { STRING, type LexStyle } from './common';
import { classifyClient } from './clients';
import {
  engineFromKey,
  hostLabel,
  isConnectionEnvName,
  safeValue,
  serviceHostName,
} from './connection-hosts';
import type { Unit } from './model';

/** Local copy: imported bindings are getters in the CommonJS output, slow in hot loops. */
const IN_STRING = STRING;

export interface ScanKind {
  style: LexStyle;
  provider: string;
  /** Source code (env reads by API, call detection) or configuration (key/value lines). */
  code: boolean;
  language: string | null;
}

export interface Ctx {
  unit: Unit;
  file: SourceFile;
  kind: ScanKind;
  inTest: boolean;
  out: Evidence[];
  seen: Set<string>;
}

type LineFields = Omit<EvidenceFields, 'source' | 'provider' | 'subject'>;

/** Evidence about the unit at one line of the file, once for each line and key. */
export function push(ctx: Ctx, line: number, key: string, fields: () => LineFields): void {
  const k = `${line}\u0000${key}`;
  if (ctx.seen.has(k)) return;
  ctx.seen.add(k);
  ctx.out.push(
    evidence(
      ctx.file,
      { start: line, end: line },
      { source: 'code', provider: ctx.kind.provider, subject: ctx.unit.key, ...fields() },
    ),
  );
}

/** A connection to a bare host of a known engine: no URL, so no database and no credentials. */
export function emitHostConnection(
  ctx: Ctx,
  line: number,
  engine: { engine: string; kind: 'datastore' | 'queue' },
  host: HostPort,
  detectedBy: string,
  setting?: string,
): void {
  emitConnection(ctx, line, {
    scheme: engine.engine,
    engine: engine.engine,
    category: engine.kind,
    host,
    database: null,
    hasCredentials: false,
    detectedBy,
    setting,
  });
}

export function emitConnection(
  ctx: Ctx,
  line: number,
  opts: {
    scheme: string;
    engine: string;
    category: 'datastore' | 'queue';
    host: HostPort | null;
    database: string | null;
    hasCredentials: boolean;
    detectedBy: string;
    /** The settings key the address is written under, when a configuration line says it. */
    setting?: string;
  },
): void {
  const { unit } = ctx;
  const hp = opts.host;
  const local = hp !== null && isLocalHost(hp.host);
  const object = hp === null || local ? null : entityKey(opts.category, serviceHostName(hp.host));
  const where =
    hp === null
      ? 'an unresolved host'
      : `${hostLabel(hp)}${opts.database ? `/${opts.database}` : ''}${local ? ' (local)' : ''}`;
  push(ctx, line, `conn\u0000${opts.engine}\u0000${hp ? hostLabel(hp) : '?'}`, () => ({
    kind: 'connection-string',
    relationship: 'connects_to',
    object,
    summary: `${unit.name} connects to ${opts.engine} at ${where}`,
    attributes: {
      scheme: opts.scheme,
      engine: opts.engine,
      category: opts.category,
      host: hp?.host ?? null,
      port: hp?.port ?? null,
      database: opts.database,
      has_credentials: opts.hasCredentials,
      detected_by: opts.detectedBy,
      ...(opts.setting ? { setting: opts.setting } : {}),
      ...(local ? { local_host: true } : {}),
      ...(hp === null ? { unresolved_host: true } : {}),
      in_test: ctx.inTest,
    },
  }));
}

/**
 * The SQL engine of an ADO.NET-style `Server=db;Database=x;...` string: the unit's one SQL client
 * library, else SQL Server's own keys, else unknown (`sql`).
 */
function adoEngine(ctx: Ctx, text: string): string {
  const engines = new Set(
    ctx.unit.manifests
      .flatMap((m) => m.dependencies)
      .map((d) => classifyClient(d.ecosystem, d.name)?.engine)
      .filter((e): e is string => e !== undefined && SQL_ENGINES.has(e)),
  );
  if (engines.size === 1) return [...engines][0]!;
  return /(initial catalog|trusted_connection|trustservercertificate|integrated security)\s*=/i.test(
    text,
  )
    ? 'mssql'
    : 'sql';
}
const SQL_ENGINES = new Set(['postgres', 'mysql', 'mariadb', 'mssql']);

/**
 * libpq / Npgsql key-value DSNs (`host=db dbname=x`), ADO.NET connection strings
 * (`Server=db;Database=x;User Id=u`) and Go MySQL DSNs inside one piece of text on one line.
 */
export function scanDsn(ctx: Ctx, text: string, line: number): void {
  const lower = text.toLowerCase();
  const hasHostKey = lower.includes('host=');
  const hasTcp = text.includes('tcp(');
  const ado =
    !hasHostKey && text.includes(';')
      ? /(?:^|;)\s*(?:server|data source|address)\s*=\s*(?:tcp:)?([A-Za-z0-9][\w.-]*)(?:[,:](\d{1,5}))?\s*(?:;|$)/i.exec(
          text,
        )
      : null;
  if (
    ado &&
    /(?:^|;)\s*(database|initial catalog|user id|uid|username|user|password|pwd|port)\s*=/i.test(
      text,
    )
  ) {
    const db = /(?:^|;)\s*(?:database|initial catalog)\s*=\s*([\w.-]+)/i.exec(text);
    emitConnection(ctx, line, {
      scheme: 'ado-connection-string',
      engine: adoEngine(ctx, text),
      category: 'datastore',
      host: { host: ado[1]!.toLowerCase(), port: ado[2] ? Number(ado[2]) : null },
      database: db?.[1] ?? null,
      hasCredentials: /(?:^|;)\s*(password|pwd)\s*=/i.test(text),
      detectedBy: 'ado-connection-string',
    });
  }
  if (!hasHostKey && !hasTcp) return;
  // PHP PDO: `mysql:host=db;port=3306;dbname=shop`, `pgsql:host=db;dbname=shop`.
  const pdo = /(?:^|[\s'"])(mysql|pgsql):(?:[^\s'"]*;)?host=([^\s;'"]+)/i.exec(text);
  if (pdo) {
    const host = parseHostPort(pdo[2] ?? '');
    const port = /;port=(\d{1,5})/i.exec(text);
    const db = /;dbname=([\w.-]+)/i.exec(text);
    const engine = pdo[1]?.toLowerCase() === 'pgsql' ? 'postgres' : 'mysql';
    emitConnection(ctx, line, {
      scheme: 'pdo-dsn',
      engine,
      category: 'datastore',
      host: host ? { host: host.host, port: port ? Number(port[1]) : host.port } : null,
      database: db?.[1] ?? null,
      hasCredentials: false,
      detectedBy: 'pdo-dsn',
    });
    return;
  }
  const libpq = hasHostKey ? /(?:^|[\s;'"])host=([^\s;'"]+)/i.exec(text) : null;
  if (libpq && /(?:^|[\s;'"])(dbname|user|port|sslmode|database|username)=/i.test(text)) {
    const host = parseHostPort(libpq[1] ?? '');
    const port = /(?:^|[\s;'"])port=(\d{1,5})/i.exec(text);
    const db = /(?:^|[\s;'"])(?:dbname|database)=([\w.-]+)/i.exec(text);
    emitConnection(ctx, line, {
      scheme: 'postgres-dsn',
      engine: 'postgres',
      category: 'datastore',
      host:
        host && host.host !== ''
          ? { host: host.host, port: port ? Number(port[1]) : host.port }
          : null,
      database: db?.[1] ?? null,
      hasCredentials: /(?:^|[\s;'"])(password|pwd)=/i.test(text),
      detectedBy: 'key-value-dsn',
    });
  }
  const my = hasTcp ? /(?:([^\s'"@/()]*)@)?tcp\(([^)\s]+)\)\/([\w.-]*)/.exec(text) : null;
  if (my) {
    const hp = parseHostPort(my[2] ?? '');
    emitConnection(ctx, line, {
      scheme: 'mysql-dsn',
      engine: 'mysql',
      category: 'datastore',
      host: hp && hp.host !== '' ? hp : null,
      database: my[3] || null,
      hasCredentials: my[1] !== undefined && my[1] !== '',
      detectedBy: 'go-mysql-dsn',
    });
  }
}

export function envReadEvidence(
  ctx: Ctx,
  line: number,
  variable: string,
  source: string,
  defaultValue: string | null,
  role: string | null = null,
  goFunction: string | null = null,
): void {
  if (!isConnectionEnvName(variable)) return;
  const { unit } = ctx;
  const safe = defaultValue === null ? null : safeValue(defaultValue);
  push(ctx, line, `env\u0000${variable}`, () => ({
    kind: 'env-read',
    summary: `${unit.name} reads ${variable}`,
    attributes: {
      variable,
      source,
      ...(safe !== null ? { [source === 'env-file' ? 'value' : 'default']: safe } : {}),
      ...(/^(LISTEN|BIND)_/i.test(variable) ? { likely_listen_address: true } : {}),
      ...(role !== null ? { address_role: role } : {}),
      // Go: the exported function the read is in (analysis/code/go-functions.ts).
      ...(goFunction !== null ? { go_function: goFunction } : {}),
      in_test: ctx.inTest,
    },
  }));
}

/**
 * A datastore or broker client built with a literal host argument: `Redis(host="redis")`,
 * `pika.ConnectionParameters(host='rabbitmq')`, `new Redis({ host: 'cache' })`,
 * `MongoClient(host="mongo")`. The callee names the engine; the host is the connection's target.
 */
const CLIENT_CALL_RE =
  /(?<![\w$.])((?:[A-Za-z_$][\w$.]{0,80}?)?(?:redis|Redis|REDIS|Jedis|mongo|Mongo|psycopg|pymysql|mysql|MySQL|pika|amqp|Amqp|Kafka|kafka|postgres|Postgres|ConnectionFactory|ConnectionMultiplexer)[\w$.]*)\s*\(/g;
/**
 * A sole literal argument of a call whose last name segment connects (`OpenRedisConnection("redis")`,
 * `ConnectionMultiplexer.Connect("cache:6379,abortConnect=false")`): the host, before options.
 */
const CLIENT_SOLE_RE = /^\s*(['"])([a-z0-9][a-z0-9.-]*(?::\d{1,5})?)(?:,[^'"]*)?\1\s*$/;
/** `host="redis"`, `Addr: "redis:6379"` (go-redis), `HostName = "rabbitmq"` (RabbitMQ .NET). */
const CLIENT_HOST_ARG_RE =
  /(?<![\w$])(?:host|Host|hostname|HostName|addr|Addr|address|Address)\s*[=:]\s*(['"])([^'"\s]+)\1/;
/** A literal host next to a literal port: `Jedis("redis", 6379)`, `new Redis(6379, "cache")`. */
const CLIENT_POSITIONAL_RE =
  /^\s*(?:(['"])([A-Za-z0-9][\w.-]*)\1\s*,\s*\d{2,5}\b|\d{2,5}\s*,\s*(['"])([A-Za-z0-9][\w.-]*)\3)/;
const CLIENT_ENGINES: [RegExp, string, 'datastore' | 'queue'][] = [
  [/jedis|ConnectionMultiplexer/i, 'redis', 'datastore'],
  // RabbitMQ's client factory (.NET, Java); `ActiveMQConnectionFactory` and others are not it.
  [/^(?:[\w$]+\.)*ConnectionFactory$/, 'rabbitmq', 'queue'],
  [/psycopg|postgres/i, 'postgres', 'datastore'],
  [/pymysql|mysql/i, 'mysql', 'datastore'],
  [/pika|amqp/i, 'rabbitmq', 'queue'],
];

export function scanClientHosts(ctx: Ctx, code: string, mask: Uint8Array, idx: LineIndex): void {
  CLIENT_CALL_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = CLIENT_CALL_RE.exec(code)) !== null) {
    if (mask[m.index] === IN_STRING) continue;
    const callee = m[1] ?? '';
    const engine =
      engineFromKey(callee) ??
      (() => {
        const hit = CLIENT_ENGINES.find(([re]) => re.test(callee));
        return hit ? { engine: hit[1], kind: hit[2] } : null;
      })();
    if (!engine) continue;
    // The arguments up to the call's closing parenthesis (a bounded look-ahead).
    const start = m.index + m[0].length;
    const rest = code.slice(start, start + 400);
    const close = rest.indexOf(')');
    let args = close >= 0 ? rest.slice(0, close) : rest;
    // An object initializer right after the call: `new ConnectionFactory() { HostName = "mq" }`.
    const init = close >= 0 ? /^\)\s*\{([^{}]*)\}/.exec(rest.slice(close)) : null;
    if (init) args += ` ${init[1] ?? ''}`;
    const named = CLIENT_HOST_ARG_RE.exec(args);
    const positional = named ? null : CLIENT_POSITIONAL_RE.exec(args);
    const sole =
      named || positional || !/connect|client/i.test(callee.split('.').pop() ?? '')
        ? null
        : CLIENT_SOLE_RE.exec(args);
    const literal = named?.[2] ?? positional?.[2] ?? positional?.[4] ?? sole?.[2];
    if (literal === undefined) continue;
    const hp = parseHostPort(literal);
    if (!hp || hp.host === '' || hp.host.includes('$') || hp.host.includes('{')) continue;
    emitHostConnection(ctx, idx.lineAt(m.index), engine, hp, 'client-host-argument');
  }
}
