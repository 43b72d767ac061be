/**
 * Environment variables (and config values) read as facts: which service a value points at, and
 * whether a secret is written down literally. Secret values never leave this module.
 */
import { entityKey } from '../evidence';
import {
  isLiteralValue,
  isSecretName,
  looksLikeSecretValue,
  placeholderReason,
} from '../shared/secrets';
import { asString } from '../shared/values';
import { extractHosts, hasEmbeddedCredentials, redact } from './common';
import { seedListHosts } from './seed-lists';

export interface ResolvedHost {
  /** Entity key of the service the host names. */
  key: string;
  /** Display name for summaries. */
  name: string;
  /** How it was resolved (`service`, `kubernetes-service`, `workload`...). */
  via?: string;
}

/** Maps a lowercased host name to the service it names, or null when it is not one of ours. */
export type HostResolver = (host: string) => ResolvedHost | null;

export interface EnvFinding {
  kind: 'env-reference' | 'literal-secret';
  relationship: string | null;
  object: string | null;
  /** Sentence without its subject, e.g. `reads REDIS_ADDR=redis-cart:6379 -> service redis-cart`. */
  summary: string;
  attributes: Record<string, unknown>;
}

/**
 * Facts about one variable: `literal-secret` when a secret-looking name has a literal value (or a
 * URL carries a literal password), and one `env-reference` per host the value points at.
 */
export function envReferences(
  name: string,
  value: unknown,
  resolve: HostResolver,
  source = 'environment',
): EnvFinding[] {
  const str = asString(value);
  if (str === null) return [];
  const out: EnvFinding[] = [];
  const secretValue = looksLikeSecretValue(str.trim());
  if (isSecretName(name) || secretValue) {
    if (isLiteralValue(value)) {
      const placeholder = secretValue ? null : placeholderReason(str);
      out.push({
        kind: 'literal-secret',
        relationship: null,
        object: null,
        summary: placeholder
          ? `sets ${name} to a placeholder (${placeholder}), not a secret`
          : `sets ${name} to a literal secret value`,
        attributes: {
          variable: name,
          source,
          ...(placeholder ? { placeholder } : {}),
          ...(secretValue ? { detected_by: 'value-pattern' } : {}),
        },
      });
    }
    // The value of a secret-looking variable is never read further, so it cannot leak.
    return out;
  }
  if (hasEmbeddedCredentials(str)) {
    out.push({
      kind: 'literal-secret',
      relationship: null,
      object: null,
      summary: `sets ${name} to a connection string with a literal password`,
      attributes: { variable: name, source, embedded_in: 'connection-string' },
    });
  }
  const shown = redact(str);
  const named = namedResource(name, str.trim());
  if (named) {
    out.push({
      kind: 'env-reference',
      relationship: 'connects_to',
      object: entityKey(named, str.trim()),
      summary: `reads ${name}=${shown} -> ${named} ${str.trim()}`,
      attributes: { variable: name, value: shown, source, resolution: `${named}-name` },
    });
    return out;
  }
  const seen = new Set<string>();
  const hosts = extractHosts(name, str);
  // A seed or node list (`ES_SEEDS=elasticsearch`) counts only where its items are declared units.
  const seeds = hosts.length === 0 ? seedListHosts(name, str) : [];
  for (const h of [...hosts, ...seeds]) {
    const r = resolve(h.host);
    if (seeds.includes(h) && (!r || r.via === 'unresolved-short-name')) continue;
    // `sms://user:secret@mock`, `local://default`: a DSN whose scheme is no network protocol
    // chooses an adapter, and its host names the provider; a short name no deployment declares
    // is then no container the value points at.
    if (r?.via === 'unresolved-short-name' && h.scheme !== null && !isNetworkScheme(h.scheme))
      continue;
    const object = r ? r.key : entityKey('external', h.host);
    // kafka:9092,kafka2:9092 may name one service twice (network aliases).
    if (seen.has(object)) continue;
    seen.add(object);
    out.push({
      kind: 'env-reference',
      relationship: 'connects_to',
      object,
      summary: `reads ${name}=${shown} -> ${r ? `service ${r.name}` : `external ${h.host}`}`,
      attributes: {
        variable: name,
        value: shown,
        source,
        host: h.host,
        port: h.port,
        scheme: h.scheme,
        resolution: r ? (r.via ?? 'service') : 'external',
        ...(seeds.includes(h) ? { read_as: 'seed-list' } : {}),
      },
    });
  }
  return out;
}

/** `REPORT_BUCKET=report-archive`, `ORDERS_QUEUE=order-events`: a variable naming a bucket or queue by its plain name. */
const BUCKET_VAR = /(^|_)BUCKET(_NAME)?$/i;
const QUEUE_VAR = /(^|_)(QUEUE|TOPIC|STREAM)(_NAME)?$/i;
const PLAIN_NAME = /^[a-z0-9][a-z0-9._-]{1,254}$/i;
/**
 * `CONFIG_STORAGE_TOPIC`, `CONNECT_OFFSET_STORAGE_TOPIC`, `STATUS_STORAGE_TOPIC`: the topics a
 * Kafka Connect worker keeps its own configuration, offsets and status in, on the broker its
 * bootstrap servers name. A name on that broker, not a queue the worker talks through.
 */
const STORAGE_TOPIC_VAR = /(^|_)(CONFIGS?|OFFSETS?|STATUS)_STORAGE_TOPIC$/i;

function namedResource(name: string, value: string): 'bucket' | 'queue' | null {
  if (!PLAIN_NAME.test(value) || /^\d+$/.test(value) || value.includes('..')) return null;
  if (STORAGE_TOPIC_VAR.test(name)) return null;
  if (BUCKET_VAR.test(name)) return 'bucket';
  if (QUEUE_VAR.test(name)) return 'queue';
  return null;
}

/** URL schemes of network protocols: a host after them is a peer the process opens a socket to. */
const NETWORK_SCHEMES = new Set(
  (
    'http https ws wss grpc grpcs h2c tcp udp tls ssl dns smtp smtps submission imap imaps pop3 ' +
    'pop3s ftp ftps sftp ssh ldap ldaps nfs amqp amqps mqtt mqtts stomp kafka nats redis rediss ' +
    'sentinel memcached memcache mongodb postgres postgresql mysql mariadb mssql sqlserver ' +
    'oracle clickhouse cassandra elasticsearch opensearch etcd consul zookeeper zk nsq pulsar ' +
    'rtmp rtsp sip telnet xmpp thrift influxdb neo4j bolt couchbase couchbases arangodb ' +
    'rethinkdb cockroachdb temporal otlp jaeger zipkin statsd syslog gelf fluentd ' +
    'unix tarantool db2 sqlite'
  ).split(' '),
);

/** `postgresql+psycopg2`, `redis+sentinel`, `neo4j+s`: a driver or transport suffix is allowed. */
function isNetworkScheme(scheme: string): boolean {
  const s = scheme.toLowerCase();
  return NETWORK_SCHEMES.has(s) || s.split('+').some((part) => NETWORK_SCHEMES.has(part));
}
