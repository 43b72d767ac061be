/**
 * Helpers shared by the cloud analyzers: datastore and broker images, credentials in values,
 * and the reading of environment values that point at other services.
 */
import { entityKey } from '../evidence';
import type { ImageRef } from '../shared/images';
import { isLocalHost, parseUrl } from '../shared/urls';
import { wrappedEngine } from './image-words';

// ---------------------------------------------------------------------------------------------
// Datastore and broker images

export interface ImageClass {
  kind: 'datastore' | 'queue';
  engine: string;
}

const DATASTORES: [RegExp, string][] = [
  [/^(postgres|postgresql|postgis|timescaledb|pgvector)$/, 'postgres'],
  [/^(mysql|mysql-server|percona|percona-server)$/, 'mysql'],
  [/^mariadb$/, 'mariadb'],
  [/^(mongo|mongodb|mongodb-community-server)$/, 'mongodb'],
  // Bitnami's cluster images run the same engine (`bitnami/redis-cluster`).
  [/^(redis|redis-stack|redis-stack-server|valkey|keydb)(-cluster)?$/, 'redis'],
  [/^memcached$/, 'memcached'],
  [/^elasticsearch$/, 'elasticsearch'],
  [/^opensearch$/, 'opensearch'],
  [/^(cassandra|scylla)$/, 'cassandra'],
  [/^((aws-)?dynamodb-local|dynamodb)$/, 'dynamodb'],
];

const QUEUES: [RegExp, string][] = [
  [/^rabbitmq$/, 'rabbitmq'],
  [/^(kafka|cp-kafka|cp-server)$/, 'kafka'],
  [/^(nats|nats-streaming)$/, 'nats'],
  [/^redpanda$/, 'redpanda'],
  [/^(activemq|activemq-artemis|activemq-classic|artemis)$/, 'activemq'],
];

/**
 * Well-known images whose last segment alone says nothing (`mcr.microsoft.com/mssql/server`) or
 * is named differently from the engine (`apache/kafka-native`, `clickhouse/clickhouse-server`):
 * matched against the whole repository path, registry included. Object stores and emulators
 * (MinIO, Azurite, SeaweedFS, LocalStack), mail catchers and mail relays a service sends to are
 * datastores of the service using them, as the corpus's ground truth types them.
 */
const REPOSITORIES: [RegExp, ImageClass][] = [
  [/(^|\/)mssql\/(server|rhel\/server)$/, { kind: 'datastore', engine: 'mssql' }],
  [/(^|\/)azure-sql-edge$/, { kind: 'datastore', engine: 'mssql' }],
  [/(^|\/)(azure-storage\/)?azurite$/, { kind: 'datastore', engine: 'azurite' }],
  [/(^|\/)clickhouse(-server)?$/, { kind: 'datastore', engine: 'clickhouse' }],
  [/(^|\/)minio$/, { kind: 'datastore', engine: 'minio' }],
  [/(^|\/)seaweedfs$/, { kind: 'datastore', engine: 'seaweedfs' }],
  // Connection poolers stand for the database behind them.
  [/(^|\/)(pgbouncer|pgpool(-ii)?|pgcat|odyssey)$/, { kind: 'datastore', engine: 'pgbouncer' }],
  [/(^|\/)(cockroach|cockroachdb)$/, { kind: 'datastore', engine: 'cockroachdb' }],
  [
    /(^|\/)(neo4j|couchdb|couchbase|influxdb|questdb|surrealdb|arangodb)$/,
    { kind: 'datastore', engine: '' },
  ],
  [
    /(^|\/)(mailhog|mailpit|maildev|mailcatcher|greenmail(\/standalone)?)$/,
    { kind: 'datastore', engine: 'smtp' },
  ],
  // Mail relays an application sends through (`bytemark/smtp`, `boky/postfix`).
  [/(^|\/)(smtp|postfix)$/, { kind: 'datastore', engine: 'smtp' }],
  [/(^|\/)kafka(-native)?$/, { kind: 'queue', engine: 'kafka' }],
  [/(^|\/)(eclipse-)?mosquitto$/, { kind: 'queue', engine: 'mosquitto' }],
  [/(^|\/)(emqx|vernemq|hivemq4?)$/, { kind: 'queue', engine: 'mqtt' }],
  [/(^|\/)pulsar(-all)?$/, { kind: 'queue', engine: 'pulsar' }],
];

/**
 * Recognizes well-known datastore and broker images: by the last segment of the repository,
 * else by the repository path (REPOSITORIES), else as a vendor's wrapping of an engine
 * (wrappedEngine: `eventuateio/eventuate-kafka`, `acme/rs-mysql-db`).
 */
export function classifyImage(image: ImageRef | null): ImageClass | null {
  if (!image) return null;
  const repo = image.repo.toLowerCase();
  const last = repo.split('/').pop() ?? '';
  for (const [re, engine] of DATASTORES) if (re.test(last)) return { kind: 'datastore', engine };
  for (const [re, engine] of QUEUES) if (re.test(last)) return { kind: 'queue', engine };
  for (const [re, cls] of REPOSITORIES) {
    if (re.test(repo)) return cls.engine === '' ? { kind: cls.kind, engine: last } : cls;
  }
  return wrappedEngine(last);
}

/**
 * The engine a bare word names (`elasticsearch`, `postgresql`, `mongo`, `kafka`), as the last
 * segment of a well-known datastore or broker image: the engine words only, not the repository
 * paths or a vendor's wrapping (`acme/rs-mysql-db`), so a variable's prefix `USER_MYSQL` names none.
 */
export function engineOfWord(word: string): ImageClass | null {
  const w = word.toLowerCase();
  for (const [re, engine] of DATASTORES) if (re.test(w)) return { kind: 'datastore', engine };
  for (const [re, engine] of QUEUES) if (re.test(w)) return { kind: 'queue', engine };
  return null;
}

/** Engines by a port the container itself listens on (unambiguous well-known ports only). */
const ENGINE_PORTS: Record<string, ImageClass> = {
  '5432': { kind: 'datastore', engine: 'postgres' },
  '3306': { kind: 'datastore', engine: 'mysql' },
  '27017': { kind: 'datastore', engine: 'mongodb' },
  '6379': { kind: 'datastore', engine: 'redis' },
  '11211': { kind: 'datastore', engine: 'memcached' },
  '9042': { kind: 'datastore', engine: 'cassandra' },
  '5672': { kind: 'queue', engine: 'rabbitmq' },
};
/** Engines by a container port's name (`ports: [{ name: mongo, containerPort: 27017 }]`). */
const ENGINE_PORT_NAMES: [RegExp, ImageClass][] = [
  [/^(postgres|postgresql|pg)$/, { kind: 'datastore', engine: 'postgres' }],
  [/^mysql$/, { kind: 'datastore', engine: 'mysql' }],
  [/^mariadb$/, { kind: 'datastore', engine: 'mariadb' }],
  [/^(mongo|mongodb)$/, { kind: 'datastore', engine: 'mongodb' }],
  [/^redis$/, { kind: 'datastore', engine: 'redis' }],
  [/^(amqp|rabbitmq)$/, { kind: 'queue', engine: 'rabbitmq' }],
];
/**
 * Variables only an engine's own image reads (server initialization), never its clients:
 * `MYSQL_ROOT_PASSWORD`, `MONGO_INITDB_ROOT_USERNAME`... (`POSTGRES_PASSWORD` is not one: clients
 * read it too).
 */
const ENGINE_SERVER_ENV: [RegExp, ImageClass][] = [
  [
    /^MYSQL_(ROOT_PASSWORD|ALLOW_EMPTY_PASSWORD|RANDOM_ROOT_PASSWORD|ROOT_HOST)$/,
    { kind: 'datastore', engine: 'mysql' },
  ],
  [
    /^MARIADB_(ROOT_PASSWORD|ALLOW_EMPTY_ROOT_PASSWORD|RANDOM_ROOT_PASSWORD)$/,
    { kind: 'datastore', engine: 'mariadb' },
  ],
  [/^MONGO_INITDB_/, { kind: 'datastore', engine: 'mongodb' }],
  [/^(POSTGRES_INITDB_ARGS|POSTGRES_HOST_AUTH_METHOD)$/, { kind: 'datastore', engine: 'postgres' }],
  [/^RABBITMQ_DEFAULT_(USER|PASS|VHOST)$/, { kind: 'queue', engine: 'rabbitmq' }],
];

/**
 * A variable a database image reads for its own server (`MARIADB_HOST`, `MYSQL_DATABASE`,
 * `POSTGRES_DB`, `MONGO_INITDB_DATABASE`): given to a container of that engine it configures
 * the server and names no host the server calls.
 */
const SERVER_SETTING: Record<string, RegExp> = {
  mariadb: /^(MARIADB|MYSQL)_/,
  mysql: /^MYSQL_/,
  postgres: /^(POSTGRES|PG)_?/,
  mongodb: /^MONGO_/,
  mssql: /^(MSSQL|SA)_/,
};

export function isServerSetting(engine: string, variable: string): boolean {
  return SERVER_SETTING[engine]?.test(variable.toUpperCase()) ?? false;
}

/** What a container's own declaration (not its image name) says it runs. */
export interface ContainerFacts {
  /** Ports the container listens on (container side of mappings, `containerPort`). */
  ports: Array<string | number>;
  /** Names of those ports, where declared. */
  portNames: string[];
  /** Names of the variables it is given. */
  env: string[];
}

/**
 * The engine a container runs when its image is not a well-known one (`acme/user-db`), from its
 * own declaration: a port named after an engine, a variable only that engine's server reads, or
 * an engine's well-known port it listens on; with the clue that decided. Null when nothing
 * says so or the clues disagree.
 */
export function classifyDeclared(c: ContainerFacts): (ImageClass & { clue: string }) | null {
  const found: Array<ImageClass & { clue: string }> = [];
  for (const name of c.portNames) {
    const hit = ENGINE_PORT_NAMES.find(([re]) => re.test(name.toLowerCase()));
    if (hit) found.push({ ...hit[1], clue: `port named ${name}` });
  }
  for (const name of c.env) {
    const hit = ENGINE_SERVER_ENV.find(([re]) => re.test(name));
    if (hit) found.push({ ...hit[1], clue: `${name} (read by the ${hit[1].engine} server image)` });
  }
  for (const port of c.ports) {
    const hit = ENGINE_PORTS[String(port)];
    if (hit) found.push({ ...hit, clue: `listens on port ${String(port)}` });
  }
  const engines = new Set(found.map((f) => f.engine));
  return engines.size === 1 ? (found[0] ?? null) : null;
}

// ---------------------------------------------------------------------------------------------
// Credentials in values

/**
 * What a workload running a datastore or broker image declares: the store, named after the
 * workload (`runner` says who runs it; `clue` how the engine was told when not by the image).
 */
export function storeDeclared(
  cls: ImageClass,
  clue: string | null | undefined,
  image: ImageRef,
  serviceKey: string,
  runner: string,
  name: string,
): { kind: string; subject: string; summary: string; attributes: Record<string, unknown> } {
  return {
    kind: cls.kind === 'datastore' ? 'datastore-declared' : 'queue-declared',
    subject: entityKey(cls.kind, name),
    summary: `${runner} runs a ${cls.engine} ${cls.kind}${clue ? ` (${clue})` : ''}`,
    attributes: {
      engine: cls.engine,
      ...(clue ? { engine_clue: clue } : {}),
      tag: image.tag,
      service_key: serviceKey,
      image: image.repo,
    },
  };
}

/** Hides credentials inside URLs and key=value connection strings. */
export function redact(value: string): string {
  return value
    .replace(/(\/\/)[^/@\s]*@/g, '$1***@')
    .replace(/((?:password|pwd|secret|token)\s*=\s*)[^;]*/gi, '$1***');
}

/** A URL userinfo password or `Password=` pair written literally (not `${VAR}`). */
export function hasEmbeddedCredentials(value: string): boolean {
  const url = /\/\/[^/@\s:]*:([^/@\s]+)@/.exec(value);
  if (url && !(url[1] ?? '').includes('$')) return true;
  const kv = /(?:^|;)\s*(?:password|pwd)\s*=\s*([^;]*)/i.exec(value);
  const pw = (kv?.[1] ?? '').trim();
  return pw !== '' && !pw.startsWith('$');
}

// ---------------------------------------------------------------------------------------------
// Values that point at other services

/**
 * `..._HOST`-style names, and libpq's `PGHOST` / `PGHOSTADDR` (PostgreSQL docs, "Environment
 * Variables": the server host name / IP address libpq connects to when no host is given),
 * also under a program's prefix for a second database (`CODEINTEL_PGHOST`).
 */
const HOST_NAME_SUFFIX =
  /_(ADDR|ADDRESS|URL|HOST|HOSTS|HOSTNAME|ENDPOINT|URI|DSN|SERVICE|BROKER|BROKERS|SERVERS|DBHOST|SERVICE_DISCOVERY_APPLICATION|SERVICE_DISCOVERY_ADDRESS_LIST)$|(^|_)(POSTGRES|MYSQL|MARIADB|MONGO|MONGODB|REDIS|SQL|DB|SMTP|MAIL|RABBITMQ|AMQP|KAFKA)_SERVER$|(^|_)PGHOST(ADDR)?$/i;

/**
 * Variables naming the container's own public host name for a discovery proxy (nginx-proxy and
 * its companions read them), not an address the container reaches.
 */
const OWN_HOST_NAMES = /^(VIRTUAL_HOST|LETSENCRYPT_HOST)$/;

/**
 * The last segment of a .NET nested settings key (`A__B__HostName`, read as `A:B:HostName`) that
 * names a host. The segment is read whole: `HostName` is one word, not `HOST_NAME`.
 */
const NESTED_HOST_SEGMENT =
  /^(host|hosts|hostname|server|servers|address|addr|url|uri|endpoint|brokers|bootstrapservers)$/i;
/** Engines whose .NET clients take one configuration string (`Redis:Configuration`). */
const NESTED_CLIENT_ENGINE = /^(redis|valkey|garnet|rabbitmq|rabbit|kafka|nats|memcached)/i;

/** Whether a variable's name says its value is a host (or a list of them). */
function namesHost(name: string): boolean {
  const segments = name.split('__');
  if (segments.length > 1 && NESTED_HOST_SEGMENT.test(segments[segments.length - 1]!)) return true;
  return HOST_NAME_SUFFIX.test(upperSnake(name));
}

/** `Redis__Configuration`, `Redis__ConnectionString`: a nested key holding a client's string. */
function nestedClientConfiguration(name: string): boolean {
  const segments = name.split('__');
  if (segments.length !== 2) return false;
  return (
    NESTED_CLIENT_ENGINE.test(segments[0]!) &&
    /^(configuration|connection|connectionstring)$/i.test(segments[1]!)
  );
}

/** `RabbitMqUrl`, `rabbitMq.url` -> `RABBIT_MQ_URL`: one spelling for the suffix rules. */
function upperSnake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toUpperCase();
}

export interface HostRef {
  host: string;
  port: number | null;
  scheme: string | null;
}

/** Values that are flags or empty markers, whatever the variable's name says. */
const NOT_HOSTS = new Set([
  'true',
  'false',
  'yes',
  'no',
  'on',
  'off',
  'null',
  'none',
  'nil',
  'undefined',
  'disabled',
  'enabled',
]);
/** Object-store URLs (`s3://bucket?endpoint=host:port`): the authority is a bucket, not a host. */
const BUCKET_SCHEMES = new Set(['s3', 's3a', 'gs', 'gcs', 'az', 'abfs', 'abfss', 'wasb', 'wasbs']);
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '0.0.0.0', '::', '::1', '']);
const HOSTNAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/i;

function hostPort(part: string, scheme: string | null): HostRef | null {
  const m = /^\[?([^\]]*?)\]?(?::(\d{1,5}))?$/.exec(part.trim());
  if (!m) return null;
  const host = (m[1] ?? '').toLowerCase();
  if (LOCAL_HOSTS.has(host) || isLocalHost(host) || host.includes('$') || !HOSTNAME.test(host))
    return null;
  // `12:30` is a time, not a host; a host has a letter or is a dotted IPv4 address.
  if (!/[a-z]/.test(host) && !/^\d+\.\d+\.\d+\.\d+$/.test(host)) return null;
  // `CALCULATE_API_BASE_URL: "true"`: a flag named like an address is no host.
  if (NOT_HOSTS.has(host)) return null;
  return { host, port: m[2] ? Number(m[2]) : null, scheme };
}

/**
 * Hosts a value points at: URLs (`postgres://u:p@db:5432/x`, multi-host `mongodb://a,b/`),
 * `host:port` lists (`kafka:9092,kafka2:9092`), `Host=db;...` connection strings, and, when the
 * variable's name says so (`*_HOST`, `*_ADDR`...), a bare host name.
 */
export function extractHosts(name: string, value: string): HostRef[] {
  const v = value.trim();
  const out: HostRef[] = [];
  // The authority (or, for gRPC `dns:///name:port`, the target after an empty one).
  const urls = [...v.matchAll(/([a-z][a-z0-9+.-]*):\/\/(\/?[^\s/?#"']*)/gi)];
  if (urls.length > 0) {
    for (const u of urls) {
      if (BUCKET_SCHEMES.has((u[1] ?? '').toLowerCase())) {
        // The store's own address, when the URL carries one (`endpoint=seaweedfs:8333`).
        const endpoint = /[?&]endpoint=(?:[a-z][a-z0-9+.-]*:\/\/)?([^&\s"'/]+)/i.exec(
          v.slice((u.index ?? 0) + u[0].length),
        );
        const h = endpoint ? hostPort(decodeURIComponent(endpoint[1] ?? ''), null) : null;
        if (h) out.push(h);
        continue;
      }
      // One URL reading for every analyzer (analysis/shared/urls.ts): service-discovery forms
      // (`https+http://api`, `http://_grpc.api`, `dns:///api:50051`) name the service.
      const parsed = parseUrl(u[1] ?? '', u[2] ?? '');
      for (const hp of parsed.hosts) {
        const h = hostPort(hp.port === null ? hp.host : `${hp.host}:${hp.port}`, parsed.scheme);
        if (h) out.push(h);
      }
    }
    return out;
  }
  const conn = /(?:^|;)\s*(?:host|server|data source|address|addr)\s*=\s*([^;]+)/i.exec(v);
  if (conn && v.includes(';')) {
    for (const part of (conn[1] ?? '').split(',')) {
      const h = hostPort(part.replace(/^tcp:/i, ''), null);
      if (h) out.push(h);
    }
    return out;
  }
  // A .NET nested settings key (`Redis__Configuration` is `Redis:Configuration`): a client
  // configuration string (`redis:6379,password=...`) whose options are not hosts.
  if (nestedClientConfiguration(name)) {
    for (const item of v.split(',').map((x) => x.trim())) {
      if (item === '' || item.includes('=')) continue;
      const h = hostPort(item, null);
      if (h) out.push(h);
    }
    return out;
  }
  const parts = v.split(/[,\s]+/).filter(Boolean);
  const allHostPort = parts.length > 0 && parts.every((p) => /^[^:/\s]+:\d{1,5}$/.test(p));
  const named = namesHost(name) && !OWN_HOST_NAMES.test(upperSnake(name));
  if (allHostPort || (named && parts.length > 0)) {
    for (const part of parts) {
      const h = hostPort(part, null);
      if (h) out.push(h);
    }
  }
  return out;
}

/** The single distinct port of a list, as a string; null when there are none or several. */
export function singlePort(ports: Array<string | number | null | undefined>): string | null {
  const distinct = new Set(ports.filter((p) => p !== null && p !== undefined).map(String));
  return distinct.size === 1 ? ([...distinct][0] ?? null) : null;
}
