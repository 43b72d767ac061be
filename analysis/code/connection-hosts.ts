/**
 * Hosts, URLs and the names of connection settings, for the connection scan (connections.ts):
 * which schemes are datastores or brokers, which hosts are noise, which variable and key names
 * carry an address and which engine a key names.
 */
import type { HostPort, ParsedUrl } from '../shared/urls';
import { internalName, isIp, parseHostPort, parseUrl } from '../shared/urls';

export const DATASTORE_SCHEMES: Record<string, string> = {
  postgres: 'postgres',
  postgresql: 'postgres',
  mysql: 'mysql',
  mariadb: 'mariadb',
  mongodb: 'mongodb',
  'mongodb+srv': 'mongodb',
  redis: 'redis',
  rediss: 'redis',
  mssql: 'mssql',
  sqlserver: 'mssql',
};

export const BROKER_SCHEMES: Record<string, string> = {
  amqp: 'rabbitmq',
  amqps: 'rabbitmq',
  kafka: 'kafka',
  nats: 'nats',
};

/**
 * URLs of the schemes above; also a scheme chosen by an interpolation between http and https
 * (`$"{(tls ? "https" : "http")}://basket"`), read as http.
 */
export const URL_RE =
  /(?<![\w+.-])(\{[^{}\n]{0,80}?["'`]https?["'`][^{}\n]{0,80}?\}|(?:jdbc:|r2dbc:)?(?:postgres|postgresql|mysql|mariadb|mongodb\+srv|mongodb|rediss|redis|mssql|sqlserver|amqps|amqp|kafka|nats|https\+http|http\+https|https|http|dns)):\/\/([^\s'"`<>\\|^]*)/gi;

/** Hosts that are documentation, schema namespaces or licences, never a dependency. */
const NOISE_HOSTS = new Set([
  'www.w3.org',
  'w3.org',
  'json-schema.org',
  'schema.org',
  'www.apache.org',
  'apache.org',
  'maven.apache.org',
  'opensource.org',
  'spdx.org',
  'xmlns.jcp.org',
  'java.sun.com',
  'schemas.xmlsoap.org',
  'schemas.microsoft.com',
  'schemas.openxmlformats.org',
  'www.gnu.org',
  'creativecommons.org',
  'purl.org',
  'ns.adobe.com',
  'www.springframework.org',
]);

export function isExampleHost(host: string): boolean {
  return (
    /(^|\.)example\.(com|org|net)$/.test(host) ||
    /\.(example|test|invalid|local\.test)$/.test(host) ||
    host === 'example' ||
    /(^|\.)(your-?domain|yourcompany|domain)\.(com|org|net)$/.test(host) ||
    /^(docs|doc|help|support|wiki|blog|learn)\./.test(host) ||
    NOISE_HOSTS.has(host)
  );
}

/** Links to documentation, source browsing or static documents rather than an API. */
const DOC_PATH =
  /\/(docs?|documentation|wiki|blob|tree|issues|pulls?|discussions|rules|guides?|manual|reference|handbook|faq|blog|specs?|licen[cs]es?)(\/|$)|\.(html?|md|pdf|txt|png|jpe?g|svg|gif)$/i;

export function looksLikeDocs(u: ParsedUrl): boolean {
  return u.hasFragment || DOC_PATH.test(u.path);
}

export function isPrivateIp(host: string): boolean {
  return (
    /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|169\.254\.)/.test(host) || host.startsWith('[')
  );
}

/** Object key name for a datastore / broker host (cluster DNS reduced to the service name). */
export function serviceHostName(host: string): string {
  return internalName(host) ?? host;
}

export function hostLabel(hp: HostPort): string {
  return hp.port === null ? hp.host : `${hp.host}:${hp.port}`;
}

/** A value safe to report: `host[:port]` lists or a URL reduced to scheme://host:port/db. */
export function safeValue(raw: string): string | null {
  const v = raw.trim();
  if (v === '') return null;
  const url = /^([a-z][a-z0-9+.:-]*):\/\/(.*)$/i.exec(v);
  if (url) {
    const p = parseUrl(url[1] ?? '', url[2] ?? '');
    if (p.unresolved) return null;
    return `${p.scheme}://${p.hosts.map(hostLabel).join(',')}${p.database ? `/${p.database}` : ''}`;
  }
  const parts = v.split(',').map((x) => x.trim());
  return parts.every(isHostLike) ? parts.join(',') : null;
}

/**
 * `host[:port]` that does not look like a token: labels of at most 63 characters, one case, and
 * no long letter-and-digit runs (a key such as `sk_live_...` or a hex secret is never reported).
 */
export function isHostLike(value: string): boolean {
  const m = /^([A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(value);
  if (!m) return false;
  const host = m[1] ?? '';
  if (/[A-Z]/.test(host) && /[a-z]/.test(host)) return false;
  return host.split('.').every((label) => {
    if (label === '' || label.length > 63) return false;
    if (label.includes('_') && label.length >= 20) return false;
    return !(label.length >= 16 && /\d/.test(label) && /[a-z]/i.test(label) && !/[-_]/.test(label));
  });
}

// ---------------------------------------------------------------------------------------------
// Environment variable names

const CONNECTION_SUFFIX =
  /_(ADDR|ADDRESS|ADDRS|URL|URLS|HOST|HOSTS|HOSTNAME|ENDPOINT|ENDPOINTS|URI|DSN|SERVICE|BROKER|BROKERS|SERVERS|CONNECTION_STRING|CONN_STR|CONNSTR|DBHOST)$|(^|_)(POSTGRES|MYSQL|MARIADB|MONGO|MONGODB|REDIS|SQL|DB|SMTP|MAIL|RABBITMQ|AMQP|KAFKA)_SERVER$/;
const CONNECTION_NAMES = new Set([
  'DATABASE_URL',
  'REDIS_URL',
  'MONGO_URL',
  'MONGODB_URI',
  'AMQP_URL',
  'BROKER_URL',
  'CELERY_BROKER_URL',
  'KAFKA_BROKERS',
  'NATS_URL',
  'ELASTICSEARCH_URL',
  'DSN',
  'PGHOST',
  'PGHOSTADDR',
]);

export function isConnectionEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  return CONNECTION_NAMES.has(upper) || CONNECTION_SUFFIX.test(upper);
}

const ENGINE_WORDS: [RegExp, string, 'datastore' | 'queue'][] = [
  [/KAFKA/, 'kafka', 'queue'],
  [/RABBIT|AMQP/, 'rabbitmq', 'queue'],
  [/NATS/, 'nats', 'queue'],
  [/REDIS|VALKEY/, 'redis', 'datastore'],
  [/POSTGRES|PSQL|(^|[_.-])PG/, 'postgres', 'datastore'],
  [/MARIADB/, 'mariadb', 'datastore'],
  [/MYSQL/, 'mysql', 'datastore'],
  [/MONGO/, 'mongodb', 'datastore'],
  [/ELASTIC/, 'elasticsearch', 'datastore'],
  [/MEMCACHE|MEMC(?=[_.-]?(ADDR|HOST|SERVER))/, 'memcached', 'datastore'],
];

export function engineFromKey(key: string): { engine: string; kind: 'datastore' | 'queue' } | null {
  const upper = key.toUpperCase();
  for (const [re, engine, kind] of ENGINE_WORDS) if (re.test(upper)) return { engine, kind };
  if (/BOOTSTRAP[_.-]?SERVERS/.test(upper)) return { engine: 'kafka', kind: 'queue' };
  return null;
}

const HOST_LIST_RE =
  /^\s*\[?\s*((?:[A-Za-z0-9][\w.-]*|\[[0-9a-fA-F:.]+\]):\d{2,5}(?:\s*,\s*(?:[A-Za-z0-9][\w.-]*|\[[0-9a-fA-F:.]+\]):\d{2,5})*)\s*\]?\s*,?\s*$/;

export function hostList(value: string): HostPort[] {
  const m = HOST_LIST_RE.exec(value);
  if (!m) return [];
  return (m[1] ?? '')
    .split(',')
    .map((p) => parseHostPort(p))
    .filter((h): h is HostPort => h !== null && (/[a-z]/.test(h.host) || isIp(h.host)));
}
