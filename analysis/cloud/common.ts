/**
 * Helpers shared by the cloud analyzers: evidence construction, image references, datastore and
 * broker recognition, and the reading of environment values that point at other services.
 */
import { cite, entityKey, type Evidence, type SourceFile } from '../evidence';

/** 1-based inclusive line range. */
export interface Span {
  start: number;
  end: number;
}

export interface EvidenceFields {
  provider: string;
  kind: string;
  subject: string;
  relationship?: string | null;
  object?: string | null;
  summary: string;
  attributes?: Record<string, unknown>;
}

/** One cloud evidence record citing `span` of `file`. */
export function evidence(file: SourceFile, span: Span, f: EvidenceFields): Evidence {
  return cite(file, span.start, span.end, {
    source_type: 'cloud',
    provider: f.provider,
    evidence_kind: f.kind,
    subject_key: f.subject,
    relationship_kind: f.relationship ?? null,
    object_key: f.object ?? null,
    summary: f.summary,
    attributes: f.attributes ?? {},
  });
}

// ---------------------------------------------------------------------------------------------
// Paths

export function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

export function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

// ---------------------------------------------------------------------------------------------
// Images

export interface ImageRef {
  /** As written. */
  raw: string;
  /** Repository without tag or digest; Docker Hub's `docker.io/library/` prefix removed. */
  repo: string;
  tag: string | null;
  digest: string | null;
  /** Pinned by digest. */
  pinned: boolean;
  /** Contains unresolved `${VAR}` interpolation. */
  unresolved: boolean;
}

/** Replaces `${VAR:-default}` / `${VAR-default}` with the default; other variables stay. */
function applyDefaults(ref: string): string {
  return ref.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}/g, '$1');
}

export function parseImage(raw: string): ImageRef {
  const ref = applyDefaults(raw.trim());
  let rest = ref;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | null = null;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const repo = rest
    .replace(/^(?:(?:index\.)?docker\.io\/)?library\//, '')
    .replace(/^docker\.io\//, '');
  return {
    raw,
    repo,
    tag,
    digest,
    pinned: digest !== null && /^sha256:[0-9a-f]{64}$/i.test(digest),
    unresolved: ref.includes('$'),
  };
}

export function imageKey(image: ImageRef): string {
  return entityKey('image', image.repo);
}

export function imageAttributes(image: ImageRef): Record<string, unknown> {
  return {
    image: image.raw,
    repo: image.repo,
    tag: image.tag,
    digest: image.digest,
    pinned: image.pinned,
    latest: image.digest === null && (image.tag === null || image.tag === 'latest'),
    ...(image.unresolved ? { unresolved: true } : {}),
  };
}

export interface ImageClass {
  kind: 'datastore' | 'queue';
  engine: string;
}

const DATASTORES: [RegExp, string][] = [
  [/^(postgres|postgresql|postgis|timescaledb|pgvector)$/, 'postgres'],
  [/^(mysql|mysql-server|percona|percona-server)$/, 'mysql'],
  [/^mariadb$/, 'mariadb'],
  [/^(mongo|mongodb|mongodb-community-server)$/, 'mongodb'],
  [/^(redis|redis-stack|redis-stack-server|valkey|keydb)$/, 'redis'],
  [/^memcached$/, 'memcached'],
  [/^elasticsearch$/, 'elasticsearch'],
  [/^opensearch$/, 'opensearch'],
  [/^(cassandra|scylla)$/, 'cassandra'],
];

const QUEUES: [RegExp, string][] = [
  [/^rabbitmq$/, 'rabbitmq'],
  [/^(kafka|cp-kafka|cp-server)$/, 'kafka'],
  [/^(nats|nats-streaming)$/, 'nats'],
  [/^redpanda$/, 'redpanda'],
  [/^(activemq|activemq-artemis|activemq-classic|artemis)$/, 'activemq'],
];

/** Recognizes well-known datastore and broker images by the last segment of the repository. */
export function classifyImage(image: ImageRef): ImageClass | null {
  const last = (image.repo.split('/').pop() ?? '').toLowerCase();
  for (const [re, engine] of DATASTORES) if (re.test(last)) return { kind: 'datastore', engine };
  for (const [re, engine] of QUEUES) if (re.test(last)) return { kind: 'queue', engine };
  return null;
}

// ---------------------------------------------------------------------------------------------
// Secrets

const SECRET_TOKENS = new Set([
  'PASSWORD',
  'PASSWD',
  'PWD',
  'SECRET',
  'TOKEN',
  'APIKEY',
  'CREDENTIALS',
  'PRIVATEKEY',
]);
/** `KEY` alone is too common (`hash_key`, `CACHE_KEY`); it counts after one of these. */
const KEY_QUALIFIERS = new Set([
  'API',
  'ACCESS',
  'PRIVATE',
  'SECRET',
  'ENCRYPTION',
  'ENCRYPT',
  'SIGNING',
  'MASTER',
  'LICENSE',
  'SSH',
  'AUTH',
  'SESSION',
  'WEBHOOK',
  'HMAC',
  'JWT',
]);
const NOT_SECRET_LAST = new Set([
  'FILE',
  'PATH',
  'NAME',
  'REF',
  'ID',
  'URL',
  'URI',
  'HOST',
  'PORT',
  'ENABLED',
  'LENGTH',
  'TTL',
]);

/** Variable or key names that usually hold a secret (POSTGRES_PASSWORD, API_KEY, authToken). */
export function isSecretName(name: string): boolean {
  const tokens = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter(Boolean);
  const last = tokens[tokens.length - 1];
  if (!last || NOT_SECRET_LAST.has(last)) return false;
  if (tokens.some((t) => SECRET_TOKENS.has(t) || /(PASSWORD|SECRET|TOKEN)$/.test(t))) return true;
  if (last === 'PASS') return true;
  return tokens.some((t, i) => t === 'KEY' && KEY_QUALIFIERS.has(tokens[i - 1] ?? ''));
}

/** Values that are credentials whatever their name (Stripe, AWS, GitHub, Slack keys, PEM keys). */
export function looksLikeSecretValue(value: string): boolean {
  return (
    /^(sk|rk)_(live|test)_[A-Za-z0-9]{8,}/.test(value) ||
    /^(AKIA|ASIA)[0-9A-Z]{16}$/.test(value) ||
    /^gh[pousr]_[A-Za-z0-9]{20,}/.test(value) ||
    /^github_pat_[A-Za-z0-9_]{20,}/.test(value) ||
    /^xox[abpr]-[A-Za-z0-9-]{10,}/.test(value) ||
    /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(value)
  );
}

/** A literal that is not a variable reference (`${X}`, `$X`, `$(X)`), not empty, not a boolean. */
export function isLiteralValue(value: unknown): boolean {
  if (typeof value === 'number') return true;
  if (typeof value !== 'string') return false;
  const v = value.trim();
  if (v === '' || v === 'true' || v === 'false') return false;
  return !/^\$(\{[^}]*\}|\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*)$/.test(v) && !v.includes('${');
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

const HOST_NAME_SUFFIX =
  /_(ADDR|ADDRESS|URL|HOST|HOSTS|HOSTNAME|ENDPOINT|URI|DSN|SERVICE|BROKER|BROKERS|SERVERS)$/i;

export interface HostRef {
  host: string;
  port: number | null;
  scheme: string | null;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '0.0.0.0', '::', '::1', '']);
const HOSTNAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/i;

function hostPort(part: string, scheme: string | null): HostRef | null {
  const m = /^\[?([^\]]*?)\]?(?::(\d{1,5}))?$/.exec(part.trim());
  if (!m) return null;
  const host = (m[1] ?? '').toLowerCase();
  if (LOCAL_HOSTS.has(host) || host.includes('$') || !HOSTNAME.test(host)) return null;
  // `12:30` is a time, not a host; a host has a letter or is a dotted IPv4 address.
  if (!/[a-z]/.test(host) && !/^\d+\.\d+\.\d+\.\d+$/.test(host)) return null;
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
  const urls = [...v.matchAll(/([a-z][a-z0-9+.-]*):\/\/([^\s/?#"']+)/gi)];
  if (urls.length > 0) {
    for (const u of urls) {
      const scheme = (u[1] ?? '').toLowerCase();
      const authority = u[2] ?? '';
      const hosts = authority.slice(authority.lastIndexOf('@') + 1);
      for (const part of hosts.split(',')) {
        const h = hostPort(part, scheme);
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
  const parts = v.split(/[,\s]+/).filter(Boolean);
  const allHostPort = parts.length > 0 && parts.every((p) => /^[^:/\s]+:\d{1,5}$/.test(p));
  if (allHostPort || (HOST_NAME_SUFFIX.test(name) && parts.length > 0)) {
    for (const part of parts) {
      const h = hostPort(part, null);
      if (h) out.push(h);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Output

export { compareEvidence, compareGaps } from '../evidence';

/** Plain-object check for parsed YAML/JSON values. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function asString(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The single distinct port of a list, as a string; null when there are none or several. */
export function singlePort(ports: Array<string | number | null | undefined>): string | null {
  const distinct = new Set(ports.filter((p) => p !== null && p !== undefined).map(String));
  return distinct.size === 1 ? ([...distinct][0] ?? null) : null;
}
