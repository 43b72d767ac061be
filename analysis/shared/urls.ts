/**
 * Hosts and URLs, one reading for every analyzer (code connection strings, cloud environment
 * values, proxy targets). Credentials never leave here: a parsed URL keeps scheme, hosts, ports
 * and database, and says whether user info was present.
 *
 * Service-discovery forms name a service rather than a host: `https+http://api` and
 * `http+https://api` (.NET service discovery: either scheme, first preferred), `http://_grpc.api`
 * (an endpoint `_name.` of service `api`) and gRPC `dns:///api:50051` (`dns://server/api:50051`):
 * each reads as host `api`, marked `discovery`.
 */
import { entityKey } from '../evidence';

export interface HostPort {
  host: string;
  port: number | null;
}

export interface ParsedUrl {
  /** Lower case, without `jdbc:`/`r2dbc:`; the preferred scheme of `https+http`. */
  scheme: string;
  hosts: HostPort[];
  database: string | null;
  hasCredentials: boolean;
  /** A host could not be read (`${DB_HOST}`, `%s`, empty). */
  unresolved: boolean;
  /** Path without query and fragment: used for classification only, never reported. */
  path: string;
  hasFragment: boolean;
  /** Written in a service-discovery form (`https+http://`, `_endpoint.name`, `dns:///`). */
  discovery: boolean;
}

/** Schemes whose URL path names a database (or an AMQP virtual host). */
const DATABASE_SCHEMES = new Set([
  'postgres',
  'postgresql',
  'mysql',
  'mariadb',
  'mongodb',
  'mongodb+srv',
  'redis',
  'rediss',
  'mssql',
  'sqlserver',
  'amqp',
  'amqps',
]);

/** `host[:port]`, `[v6]:port`; null when the host has characters no host name has. */
export function parseHostPort(part: string): HostPort | null {
  const m = /^\s*(\[[0-9a-fA-F:.]+\]|[^:\s]*)(?::(\d{1,5}))?\s*$/.exec(part);
  if (!m) return null;
  const host = (m[1] ?? '').toLowerCase();
  if (!/^(\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?)$/.test(host)) return null;
  return { host, port: m[2] ? Number(m[2]) : null };
}

/** `_grpc.api` (an endpoint of service discovery) -> `api`; other hosts unchanged. */
function discoveryHost(hp: HostPort): { hp: HostPort; discovery: boolean } {
  const m = /^_[a-z0-9-]+\.([a-z0-9](?:[a-z0-9_.-]*[a-z0-9_])?)$/.exec(hp.host);
  return m
    ? { hp: { host: m[1] ?? '', port: hp.port }, discovery: true }
    : { hp, discovery: false };
}

/** Parses what follows `scheme://` (`restRaw`), tolerating trailing punctuation and `${...}`. */
export function parseUrl(schemeRaw: string, restRaw: string): ParsedUrl {
  const written = schemeRaw.toLowerCase().replace(/^(jdbc|r2dbc):/, '');
  const pair = /^(https?)\+(https?)$/.exec(written);
  const scheme = pair ? (pair[1] ?? written) : written;
  let discovery = pair !== null;
  let rest = restRaw;
  for (;;) {
    // Trailing sentence punctuation; not ':' (`'https://user:' + password` is a fragment).
    const trimmed = rest.replace(/[.,;!?)\]]+$/, '');
    const opens = (trimmed.match(/\{/g) ?? []).length;
    const closes = (trimmed.match(/\}/g) ?? []).length;
    const next = closes > opens && trimmed.endsWith('}') ? trimmed.slice(0, -1) : trimmed;
    if (next === rest) break;
    rest = next;
  }
  if (scheme === 'dns') {
    // gRPC name resolution: `dns:///name:port` or `dns://dns-server/name:port`; the target is
    // the path's first segment.
    const target = /^[^/]*\/([^/?#\s]+)/.exec(rest);
    const hp = target ? parseHostPort(target[1] ?? '') : null;
    const hosts = hp && hp.host !== '' ? [hp] : [];
    return {
      scheme,
      hosts,
      database: null,
      hasCredentials: false,
      unresolved: hosts.length === 0,
      path: '',
      hasFragment: false,
      discovery: true,
    };
  }
  // The authority ends at the first '/', '?', '#' or ';' outside a `${...}` placeholder.
  let authEnd = rest.length;
  let depth = 0;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i];
    if (c === '{') depth++;
    else if (c === '}') depth = Math.max(0, depth - 1);
    else if (depth === 0 && (c === '/' || c === '?' || c === '#' || c === ';')) {
      authEnd = i;
      break;
    }
  }
  let authority = rest.slice(0, authEnd);
  let after = rest.slice(authEnd);
  let at = authority.lastIndexOf('@');
  if (scheme !== 'http' && scheme !== 'https') {
    // A password may hold '/': for non-web schemes the host starts after the last '@' before
    // the query, so no part of the user info can be read as the database.
    const q = rest.search(/[?#]/);
    const lastAt = (q < 0 ? rest : rest.slice(0, q)).lastIndexOf('@');
    if (lastAt >= authEnd) {
      const tail = rest.slice(lastAt + 1);
      const end = tail.search(/[/?#;]/);
      authority = rest.slice(0, lastAt + 1 + (end < 0 ? tail.length : end));
      after = end < 0 ? '' : tail.slice(end);
      at = lastAt;
    }
  }
  const hostPart = at >= 0 ? authority.slice(at + 1) : authority;
  const hosts: HostPort[] = [];
  let unresolved = false;
  for (const part of hostPart.split(',')) {
    const parsed = parseHostPort(part);
    if (parsed && parsed.host !== '') {
      const d = discoveryHost(parsed);
      discovery ||= d.discovery;
      hosts.push(d.hp);
    } else unresolved = true;
  }
  let database: string | null = null;
  const path = /^\/([^/?#;]+)/.exec(after);
  if (path && DATABASE_SCHEMES.has(scheme)) {
    const seg = path[1] ?? '';
    database = /^[\w.-]+$/.test(seg) ? seg : null;
  }
  const query = after.search(/[?#]/);
  return {
    scheme,
    hosts,
    database,
    hasCredentials: at >= 0,
    unresolved: unresolved || hosts.length === 0,
    path: query < 0 ? after : after.slice(0, query),
    hasFragment: after.includes('#'),
    discovery,
  };
}

/** Loopback, wildcard and the Docker host: never another service of the system. */
export function isLocalHost(host: string): boolean {
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === 'localhost.localdomain' ||
    /^127\.\d+\.\d+\.\d+$/.test(host) ||
    host === '0.0.0.0' ||
    host === '[::1]' ||
    host === '[::]' ||
    host === 'host.docker.internal'
  );
}

/** `scheme://rest` at the start of a value: its parsed form, or null for no URL. */
export function parseUrlValue(value: string): ParsedUrl | null {
  const m = /^([a-z][a-z0-9+.:-]*):\/\/(.*)$/i.exec(value.trim());
  return m ? parseUrl(m[1] ?? '', m[2] ?? '') : null;
}

/** A dotted IPv4 address or a bracketed IPv6 one. */
export function isIp(host: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith('[');
}

/** A name that resolves inside the deployment: `cartservice`, `redis.default.svc.cluster.local`. */
export function internalName(host: string): string | null {
  if (isIp(host)) return null;
  if (!host.includes('.')) return host;
  const m =
    /^([a-z0-9_-]+)\.(?:[a-z0-9_-]+\.)?(?:svc(?:\.cluster\.local)?|cluster\.local|internal)$/.exec(
      host,
    );
  return m ? (m[1] ?? null) : null;
}

/**
 * The entity a proxy or client target names: an internal name is the service of that name, any
 * other host name is external; local hosts and IP addresses name nothing we can identify.
 */
export function targetKeyOf(host: string): string | null {
  if (host === '' || isLocalHost(host) || isIp(host)) return null;
  const internal = internalName(host);
  return internal !== null ? entityKey('service', internal) : entityKey('external', host);
}
