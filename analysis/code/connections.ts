/**
 * What a unit connects to, from its source and configuration files:
 *
 * - `connection-string` (relationship `connects_to`): URLs with datastore schemes (postgres,
 *   mysql, mariadb, mongodb(+srv), redis(s), mssql/sqlserver, also behind `jdbc:`/`r2dbc:`) ->
 *   `datastore:<host>`; broker schemes (amqp(s), kafka, nats) and Kafka bootstrap `host:port`
 *   lists -> `queue:<host>`; libpq / Npgsql key-value DSNs and Go MySQL `tcp(host:port)/db` DSNs;
 *   `host:port` values of config keys that name an engine (`REDIS_ADDR=redis-cart:6379`);
 *   http(s) URLs -> `external:<host>`, or `service:<name>` when the host is a single-label or
 *   cluster-local name (an internal service, not an external dependency).
 * - `external-api-call` (relationship `calls`): a literal http(s) URL to an external host passed
 *   directly to fetch / axios / requests / http.Get / http.NewRequest / RestTemplate / ...
 * - `env-read` (no object): reads of environment variables whose names point at another
 *   service (`*_ADDR`, `*_URL`, `*_HOST`, `*_DSN`, ...), in code, `${VAR}` placeholders in config,
 *   and keys declared in .env files. The reconciler resolves them against compose/k8s values.
 *
 * Credentials never leave this module: URLs are reduced to scheme, host, port and database; no
 * path, query or user info is kept, and only values that are plainly `host[:port]` or sanitized
 * URLs are reported as defaults. Localhost, documentation/example hosts and unresolved hosts
 * (`${DB_HOST}`) get no object key. Scanning is regex based over the lexed text (comments
 * blanked), so commented-out URLs and doc links in comments are ignored.
 */
import { entityKey, type AnalyzerGap, type Evidence, type SourceFile } from '../evidence';
import { evidence, type EvidenceFields } from '../shared/evidence';
import { basename, dirname, relativeTo, isDockerfile } from '../shared/paths';
import { LineIndex } from '../shared/text';
import {
  internalName,
  isIp,
  isLocalHost,
  parseHostPort,
  parseUrl,
  type HostPort,
  type ParsedUrl,
} from '../shared/urls';
import { addressKey, addressRole, isIdentityProviderPackage } from './address-roles';
import { isTestPath, languageOf, lex, lexStyleOf, STRING, type LexStyle } from './common';
import { classifyClient } from './clients';
import { isLockfile, manifestKindOf } from './manifests';
import type { CodeModel, Unit } from './model';

/** Local copy: imported bindings are getters in the CommonJS output, slow in hot loops. */
const IN_STRING = STRING;

const MAX_FILE_CHARS = 1_000_000;

// ---------------------------------------------------------------------------------------------
// Which files

interface ScanKind {
  style: LexStyle;
  provider: string;
  /** Source code (env reads by API, call detection) or configuration (key/value lines). */
  code: boolean;
  language: string | null;
}

const CONFIG_DIRS = new Set([
  'config',
  'configs',
  'conf',
  'settings',
  '.config',
  'env',
  'environments',
]);

function scanKindOf(path: string, unit: Unit, served = false): ScanKind | null {
  if (manifestKindOf(path) || isLockfile(path)) return null;
  const base = basename(path);
  if (/\.min\.(js|css)$/.test(base) || /\.d\.[cm]?ts$/.test(base)) return null;
  const lang = languageOf(path);
  if (lang)
    return { style: lexStyleOf(lang), provider: `${lang}-source`, code: true, language: lang };
  // PHP is scanned for connections only (no manifests or imports of its own here).
  if (/\.php$/i.test(base))
    return { style: 'c', provider: 'php-source', code: true, language: 'php' };
  if (/^\.env(\..+)?$/i.test(base) || /\.env$/i.test(base)) {
    return { style: 'hash', provider: 'dotenv', code: false, language: null };
  }
  if (isDockerfile(path)) {
    return { style: 'hash-start', provider: 'dockerfile', code: false, language: null };
  }
  const rel = relativeTo(path, unit.dir);
  const inConfigDir = dirname(rel)
    .split('/')
    .some((s) => CONFIG_DIRS.has(s.toLowerCase()));
  const named =
    served ||
    /^(application|bootstrap|appsettings|config|settings)([-._][\w.-]+)?\.[a-z]+$/i.test(base);
  const ext = base.slice(base.lastIndexOf('.') + 1).toLowerCase();
  if (!inConfigDir && !named) return null;
  switch (ext) {
    case 'yaml':
    case 'yml':
      return { style: 'hash', provider: 'yaml-config', code: false, language: null };
    case 'toml':
      return { style: 'hash', provider: 'toml-config', code: false, language: null };
    case 'json':
      return { style: 'json', provider: 'json-config', code: false, language: null };
    case 'properties':
      return { style: 'hash-start', provider: 'java-properties', code: false, language: null };
    case 'ini':
    case 'cfg':
    case 'conf':
      return { style: 'hash-start', provider: 'ini-config', code: false, language: null };
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Hosts and URLs

const DATASTORE_SCHEMES: Record<string, string> = {
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

const BROKER_SCHEMES: Record<string, string> = {
  amqp: 'rabbitmq',
  amqps: 'rabbitmq',
  kafka: 'kafka',
  nats: 'nats',
};

/**
 * URLs of the schemes above; also a scheme chosen by an interpolation between http and https
 * (`$"{(tls ? "https" : "http")}://basket"`), read as http.
 */
const URL_RE =
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

function isExampleHost(host: string): boolean {
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

function looksLikeDocs(u: ParsedUrl): boolean {
  return u.hasFragment || DOC_PATH.test(u.path);
}

function isPrivateIp(host: string): boolean {
  return (
    /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|169\.254\.)/.test(host) || host.startsWith('[')
  );
}

/** Object key name for a datastore / broker host (cluster DNS reduced to the service name). */
function serviceHostName(host: string): string {
  return internalName(host) ?? host;
}

function hostLabel(hp: HostPort): string {
  return hp.port === null ? hp.host : `${hp.host}:${hp.port}`;
}

/** A value safe to report: `host[:port]` lists or a URL reduced to scheme://host:port/db. */
function safeValue(raw: string): string | null {
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
function isHostLike(value: string): boolean {
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
  /_(ADDR|ADDRESS|ADDRS|URL|URLS|HOST|HOSTS|HOSTNAME|ENDPOINT|ENDPOINTS|URI|DSN|SERVICE|BROKER|BROKERS|SERVERS|CONNECTION_STRING|CONN_STR|CONNSTR)$/;
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
  [/MEMCACHE/, 'memcached', 'datastore'],
];

function engineFromKey(key: string): { engine: string; kind: 'datastore' | 'queue' } | null {
  const upper = key.toUpperCase();
  for (const [re, engine, kind] of ENGINE_WORDS) if (re.test(upper)) return { engine, kind };
  if (/BOOTSTRAP[_.-]?SERVERS/.test(upper)) return { engine: 'kafka', kind: 'queue' };
  return null;
}

// ---------------------------------------------------------------------------------------------
// Env reads in code

interface EnvPattern {
  re: RegExp;
  /** Capture group of the variable name. */
  group: number;
  /** Capture group of a literal default, when the pattern has one. */
  defaultGroup?: number;
}

/** Java and Kotlin defaults: `getOrDefault`, `Optional...orElse`, `requireNonNullElse`. */
const JVM_DEFAULTS: EnvPattern[] = [
  {
    re: /\bSystem\.getenv\(\s*\)\s*\.getOrDefault\(\s*"([A-Za-z_]\w*)"\s*,\s*"([^"\n]*)"/g,
    group: 1,
    defaultGroup: 2,
  },
  {
    re: /\bOptional\.ofNullable\(\s*System\.getenv\(\s*"([A-Za-z_]\w*)"\s*\)\s*\)\s*\.orElse\(\s*"([^"\n]*)"\s*\)/g,
    group: 1,
    defaultGroup: 2,
  },
  {
    re: /\bObjects\.requireNonNullElse\(\s*System\.getenv\(\s*"([A-Za-z_]\w*)"\s*\)\s*,\s*"([^"\n]*)"\s*\)/g,
    group: 1,
    defaultGroup: 2,
  },
];

/**
 * A two-argument helper over the environment in any language (not a setter such as
 * `os.Setenv("X", "v")` or `putenv`): a callee whose name holds `env`
 * (`getEnv("X", "h")`, `env('X', 'h')`, `GetEnvOrDefault("X", "h")`), an upper-case variable
 * name and a literal default.
 */
const ENV_HELPER: EnvPattern = {
  re: /(?<![\w$])(?!(?:set|put|unset)[_A-Z]?(?:env|Env|ENV)|(?:Set|Put|Unset|SET|PUT)_?(?:env|Env|ENV))[A-Za-z_$]*(?:env|Env|ENV)[\w$]*\(\s*(['"`])([A-Z][A-Z0-9_]*)\1\s*,\s*(['"`])([^'"`\n]*)\3\s*\)/g,
  group: 2,
  defaultGroup: 4,
};

const ENV_PATTERNS: Record<string, EnvPattern[]> = {
  js: [
    {
      re: /\bprocess\.env\.([A-Za-z_]\w*)(?:\s*(?:\|\||\?\?)\s*(['"`])([^'"`\n]*)\2)?/g,
      group: 1,
      defaultGroup: 3,
    },
    {
      re: /\bprocess\.env\[\s*(['"`])([A-Za-z_]\w*)\1\s*\](?:\s*(?:\|\||\?\?)\s*(['"`])([^'"`\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
    { re: /\bimport\.meta\.env\.([A-Za-z_]\w*)/g, group: 1 },
    { re: /\bDeno\.env\.get\(\s*(['"])([A-Za-z_]\w*)\1/g, group: 2 },
  ],
  go: [
    // `addr, ok := os.LookupEnv("X")` then `if !ok { addr = "h" }` (or `...; !ok { addr = "h" }`).
    {
      re: /(\w+)\s*,\s*(\w+)\s*:?=\s*os\.LookupEnv\(\s*"([A-Za-z_]\w*)"\s*\)\s*(?:;\s*|\n\s*if\s+)!\2\s*\{\s*\1\s*=\s*"([^"\n]*)"/g,
      group: 3,
      defaultGroup: 4,
    },
    { re: /\bos\.(?:Getenv|LookupEnv)\(\s*"([A-Za-z_]\w*)"\s*\)/g, group: 1 },
  ],
  // `os.` is required unless the file does `from os import environ/getenv` (a bare `environ` is
  // often a WSGI request environ, not the process environment).
  python: [
    // `os.getenv("X") or "http://x:8080"`: the literal after `or` is the default.
    {
      re: /\bos\.(?:environ\.get|getenv)\(\s*(['"])([A-Za-z_]\w*)\1\s*\)\s+or\s+(['"])([^'"\n]*)\3/g,
      group: 2,
      defaultGroup: 4,
    },
    { re: /\bos\.environ\[\s*(['"])([A-Za-z_]\w*)\1\s*\]/g, group: 2 },
    {
      re: /\bos\.(?:environ\.get|environ\.setdefault|getenv)\(\s*(['"])([A-Za-z_]\w*)\1(?:\s*,\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
  ],
  'python-from-os': [
    { re: /(?<![\w.])environ\[\s*(['"])([A-Za-z_]\w*)\1\s*\]/g, group: 2 },
    {
      re: /(?<![\w.])(?:environ\.get|environ\.setdefault|getenv)\(\s*(['"])([A-Za-z_]\w*)\1(?:\s*,\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
  ],
  java: [...JVM_DEFAULTS, { re: /\bSystem\.getenv\(\s*"([A-Za-z_]\w*)"\s*\)/g, group: 1 }],
  kotlin: [
    ...JVM_DEFAULTS,
    {
      re: /\bSystem\.getenv\(\s*"([A-Za-z_]\w*)"\s*\)(?:\s*\?:\s*"([^"\n]*)")?/g,
      group: 1,
      defaultGroup: 2,
    },
  ],
  php: [
    {
      re: /(?<![\w$>:])getenv\(\s*(['"])([A-Za-z_]\w*)\1\s*\)(?:\s*(?:\?:|\?\?)\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
    {
      re: /\$_(?:ENV|SERVER)\[\s*(['"])([A-Za-z_]\w*)\1\s*\](?:\s*(?:\?:|\?\?)\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
  ],
  csharp: [
    {
      re: /\bEnvironment\.GetEnvironmentVariable\(\s*"([A-Za-z_]\w*)"(?:\s*\)\s*\?\?\s*"([^"\n]*)")?/g,
      group: 1,
      defaultGroup: 2,
    },
  ],
  rust: [
    { re: /\benv::var(?:_os)?\(\s*"([A-Za-z_]\w*)"\s*\)/g, group: 1 },
    { re: /\b(?:option_)?env!\(\s*"([A-Za-z_]\w*)"/g, group: 1 },
  ],
  ruby: [
    {
      re: /\bENV\[\s*(['"])([A-Za-z_]\w*)\1\s*\](?:\s*(?:\|\||\bor\b)\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
    {
      re: /\bENV\.fetch\(\s*(['"])([A-Za-z_]\w*)\1(?:\s*,\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
  ],
};

/** `${VAR}`, `${VAR:default}`, `${VAR:-default}` in configuration (and Spring @Value strings). */
const PLACEHOLDER_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-?|-)?([^}]*)\}/g;

// ---------------------------------------------------------------------------------------------
// Call context for http(s) URLs

const CALLEE = String.raw`(?:\bfetch|\baxios(?:\.\w+)?|\bgot(?:\.\w+)?|\bky(?:\.\w+)?|\bneedle|\brequest|\burlopen|\bURI\.create|\bURI(?:\.parse)?|\bURL|new\s+URL|new\s+Uri|\bhttp\.(?:Get|Post|Head|PostForm|NewRequest|NewRequestWithContext)|\breqwest::get|\bHTTParty\.\w+|\bFaraday\.\w+|[\w$)\]]\.(?:get|post|put|patch|delete|head|request|options|getForObject|getForEntity|postForObject|postForEntity|exchange|GetAsync|PostAsync|PutAsync|DeleteAsync|GetStringAsync|SendAsync|fetch|stream|uri))`;
const CALL_RE = new RegExp(
  `${CALLEE}\\s*\\(\\s*(?:url\\s*[:=]\\s*)?(?:(?:[\\w$.]+|"[A-Za-z]+"|'[A-Za-z]+'|http\\.Method\\w+)\\s*,\\s*){0,2}[rRfFbBuU@$]{0,2}$`,
);

// ---------------------------------------------------------------------------------------------
// The scan

interface Ctx {
  unit: Unit;
  file: SourceFile;
  kind: ScanKind;
  inTest: boolean;
  out: Evidence[];
  seen: Set<string>;
}

type LineFields = Omit<EvidenceFields, 'source' | 'provider' | 'subject'>;

/** Evidence about the unit at one line of the file, once for each line and key. */
function push(ctx: Ctx, line: number, key: string, fields: () => LineFields): void {
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

function emitConnection(
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
      ...(local ? { local_host: true } : {}),
      ...(hp === null ? { unresolved_host: true } : {}),
      in_test: ctx.inTest,
    },
  }));
}

function scanUrls(ctx: Ctx, code: string, idx: LineIndex): void {
  const { unit } = ctx;
  const selfNames = new Set(unit.aliases);
  let m: RegExpExecArray | null;
  URL_RE.lastIndex = 0;
  while ((m = URL_RE.exec(code)) !== null) {
    const line = idx.lineAt(m.index);
    const written = m[1] ?? '';
    const parsed = parseUrl(written.startsWith('{') ? 'http' : written, m[2] ?? '');
    const dsEngine = DATASTORE_SCHEMES[parsed.scheme];
    const brokerEngine = BROKER_SCHEMES[parsed.scheme];
    if (dsEngine || brokerEngine) {
      const engine = (dsEngine ?? brokerEngine) as string;
      const category = dsEngine ? 'datastore' : 'queue';
      const hosts: (HostPort | null)[] =
        parsed.unresolved && parsed.hosts.length === 0 ? [null] : parsed.hosts;
      for (const hp of hosts) {
        emitConnection(ctx, line, {
          scheme: parsed.scheme,
          engine,
          category,
          host: hp,
          database: parsed.database,
          hasCredentials: parsed.hasCredentials,
          detectedBy: 'url',
        });
      }
      continue;
    }
    // http(s)
    const hp = parsed.hosts[0];
    if (!hp || parsed.unresolved) continue;
    const host = hp.host;
    if (isLocalHost(host) || isExampleHost(host) || (isIp(host) && isPrivateIp(host))) continue;
    const internal = internalName(host);
    if (internal !== null && selfNames.has(internal)) continue;
    const lineStart = idx.lineStart(line);
    const before = code.slice(lineStart, m.index);
    const quoted = /['"`]$/.test(before);
    const inCall = ctx.kind.code && quoted && CALL_RE.test(before.slice(0, -1));
    if (!inCall && looksLikeDocs(parsed)) continue;
    // An address given for a redirect, callback, allow-list or issuer (or a client registered
    // with this identity provider) is a fact about the unit, not a call it makes.
    const role = inCall
      ? null
      : addressRole(addressKey(code, m.index) ?? '', identityProvider(unit));
    if (role !== null) {
      push(ctx, line, `role\u0000${host}`, () => ({
        kind: 'address-handed',
        summary: `${unit.name} is given ${host} as a ${role} address, not an address it calls`,
        attributes: { address_role: role, host, port: hp.port, in_test: ctx.inTest },
      }));
      continue;
    }
    const base = {
      scheme: parsed.scheme,
      host,
      port: hp.port,
      has_credentials: parsed.hasCredentials,
      ...(parsed.discovery ? { service_discovery: true } : {}),
      in_test: ctx.inTest,
    };
    if (internal !== null) {
      push(ctx, line, `svc\u0000${internal}`, () => ({
        kind: 'connection-string',
        relationship: 'connects_to',
        object: entityKey('service', internal),
        summary: `${unit.name} connects to service ${internal} at ${hostLabel(hp)}`,
        attributes: { ...base, internal_host: true, detected_by: inCall ? 'http-call' : 'url' },
      }));
      continue;
    }
    const object = entityKey('external', host);
    if (inCall) {
      push(ctx, line, `api\u0000${host}`, () => ({
        kind: 'external-api-call',
        relationship: 'calls',
        object,
        summary: `${unit.name} calls external API ${host}`,
        attributes: base,
      }));
    } else {
      push(ctx, line, `ext\u0000${host}`, () => ({
        kind: 'connection-string',
        relationship: 'connects_to',
        object,
        summary: `${unit.name} connects to external host ${host}`,
        attributes: { ...base, detected_by: 'url' },
      }));
    }
  }
}

/** The unit depends on an identity provider / authorization server package. */
function identityProvider(unit: Unit): boolean {
  return unit.manifests.some((m) => m.dependencies.some((d) => isIdentityProviderPackage(d.name)));
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
function scanDsn(ctx: Ctx, text: string, line: number): void {
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

const HOST_LIST_RE =
  /^\s*\[?\s*((?:[A-Za-z0-9][\w.-]*|\[[0-9a-fA-F:.]+\]):\d{2,5}(?:\s*,\s*(?:[A-Za-z0-9][\w.-]*|\[[0-9a-fA-F:.]+\]):\d{2,5})*)\s*\]?\s*,?\s*$/;

function hostList(value: string): HostPort[] {
  const m = HOST_LIST_RE.exec(value);
  if (!m) return [];
  return (m[1] ?? '')
    .split(',')
    .map((p) => parseHostPort(p))
    .filter((h): h is HostPort => h !== null && (/[a-z]/.test(h.host) || isIp(h.host)));
}

function envReadEvidence(
  ctx: Ctx,
  line: number,
  variable: string,
  source: string,
  defaultValue: string | null,
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
      in_test: ctx.inTest,
    },
  }));
}

function scanCode(ctx: Ctx, code: string, mask: Uint8Array, idx: LineIndex): void {
  const lang = ctx.kind.language ?? '';
  const family = lang === 'typescript' || lang === 'javascript' ? 'js' : lang;
  const patterns = [...(ENV_PATTERNS[family] ?? []), ENV_HELPER];
  if (
    family === 'python' &&
    /\bfrom[ \t]+os[ \t]+import[ \t][^\n]*\b(environ|getenv)\b/.test(code)
  ) {
    patterns.push(...(ENV_PATTERNS['python-from-os'] ?? []));
  }
  for (const p of patterns) {
    p.re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = p.re.exec(code)) !== null) {
      if (mask[m.index] === IN_STRING) continue;
      const name = m[p.group] ?? '';
      const def = p.defaultGroup !== undefined ? (m[p.defaultGroup] ?? null) : null;
      envReadEvidence(ctx, idx.lineAt(m.index), name, 'code', def);
    }
  }
  if (family === 'js') {
    const destructure = /\{([^{}]*)\}\s*=\s*process\.env\b/g;
    let m: RegExpExecArray | null;
    while ((m = destructure.exec(code)) !== null) {
      const body = m[1] ?? '';
      const bodyStart = m.index + 1;
      for (const v of body.matchAll(
        /([A-Za-z_]\w*)\s*(?::\s*[\w$]+\s*)?(?:=\s*(['"`])([^'"`\n]*)\2)?/g,
      )) {
        envReadEvidence(
          ctx,
          idx.lineAt(bodyStart + (v.index ?? 0)),
          v[1] ?? '',
          'code',
          v[3] ?? null,
        );
      }
    }
  }
  if (family === 'java' || family === 'kotlin') {
    // Spring @Value("${X:default}") placeholders inside string literals.
    PLACEHOLDER_RE.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = PLACEHOLDER_RE.exec(code)) !== null) {
      if (mask[m.index] !== IN_STRING) continue;
      envReadEvidence(ctx, idx.lineAt(m.index), m[1] ?? '', 'placeholder', m[2] || null);
    }
  }
  scanClientHosts(ctx, code, mask, idx);
  const readsEnv = ENV_API_RE.test(code);
  // String literals on each line: DSNs, and Kafka bootstrap lists on lines that mention Kafka.
  const lines = code.split('\n');
  let offset = 0;
  lines.forEach((text, i) => {
    const line = i + 1;
    const literals: string[] = [];
    let j = 0;
    while (j < text.length) {
      if (mask[offset + j] === IN_STRING) {
        const start = j;
        while (j < text.length && mask[offset + j] === IN_STRING) j++;
        literals.push(
          text
            .slice(start, j)
            .replace(/^[rRbBfFuU@$]{0,2}(['"`])/, '')
            .replace(/(['"`])$/, ''),
        );
      } else j++;
    }
    if (literals.length > 0) {
      for (const lit of literals) scanDsn(ctx, lit, line);
      // A helper that wraps the environment API (`mustMapEnv(&addr, "CART_SERVICE_ADDR")`):
      // in a file that reads the environment, a literal that is exactly an address variable's
      // name is a read of that variable.
      if (readsEnv) {
        for (const lit of literals) {
          if (ENV_NAME_LITERAL.test(lit)) envReadEvidence(ctx, line, lit, 'code-literal', null);
        }
      }
      if (/kafka|bootstrap|brokers?\b/i.test(text)) {
        for (const lit of literals) {
          for (const hp of hostList(lit)) {
            emitConnection(ctx, line, {
              scheme: 'kafka',
              engine: 'kafka',
              category: 'queue',
              host: hp,
              database: null,
              hasCredentials: false,
              detectedBy: 'bootstrap-list',
            });
          }
        }
      }
    }
    offset += text.length + 1;
  });
}

/** Environment APIs of the languages scanned: a file using one may wrap it in a helper. */
const ENV_API_RE =
  /\bos\.(?:Getenv|LookupEnv|getenv|environ)\b|\bprocess\.env\b|\bSystem\.getenv\b|\bEnvironment\.GetEnvironmentVariable\b|\bENV\[|\benv::var\b|(?<![\w$>:])getenv\(|\$_ENV\[/;
/** An upper-case variable name with at least one underscore (`CART_SERVICE_ADDR`). */
const ENV_NAME_LITERAL = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

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

function scanClientHosts(ctx: Ctx, code: string, mask: Uint8Array, idx: LineIndex): void {
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
    emitConnection(ctx, idx.lineAt(m.index), {
      scheme: engine.engine,
      engine: engine.engine,
      category: engine.kind,
      host: hp,
      database: null,
      hasCredentials: false,
      detectedBy: 'client-host-argument',
    });
  }
}

function scanConfig(ctx: Ctx, code: string): void {
  const lines = code.split('\n');
  const dotenv = ctx.kind.provider === 'dotenv';
  // YAML keys are read with their parents (`spring:` / `data:` / `mongodb:` / `host:` is
  // `spring.data.mongodb.host`), so a nested key names its engine as a flat one does.
  const yaml = ctx.kind.provider === 'yaml-config';
  const parents: { indent: number; key: string }[] = [];
  lines.forEach((raw, i) => {
    const line = i + 1;
    const text = raw.replace(/\r$/, '');
    if (text.trim() === '') return;
    if (ctx.kind.provider !== 'dockerfile') {
      PLACEHOLDER_RE.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = PLACEHOLDER_RE.exec(text)) !== null) {
        envReadEvidence(ctx, line, m[1] ?? '', 'placeholder', m[2] || null);
      }
    }
    const kv =
      /^\s*(?:export\s+|ENV\s+|-\s+)?["']?([A-Za-z_][\w.\-[\]]*)["']?\s*(?:=|:(?=\s|$)|\s(?=\S))\s*(.*?)\s*,?\s*$/.exec(
        text,
      );
    if (!kv) {
      scanDsn(ctx, text, line);
      return;
    }
    const value = (kv[2] ?? '').replace(/^(['"])(.*)\1$/, '$2');
    let key = kv[1] ?? '';
    if (yaml) {
      const indent = /^[\s-]*/.exec(text)?.[0].length ?? 0;
      while (parents.length && parents[parents.length - 1]!.indent >= indent) parents.pop();
      const own = key;
      key = [...parents.map((p) => p.key), own].join('.');
      if (value === '') parents.push({ indent, key: own });
    }
    if (dotenv) envReadEvidence(ctx, line, key, 'env-file', value);
    scanDsn(ctx, value, line);
    if (value.includes('://')) return;
    const engine = engineFromKey(key);
    if (!engine) return;
    const keyUpper = key.toUpperCase().replace(/[.-]/g, '_');
    const hostish =
      isConnectionEnvName(keyUpper) || /HOST|ADDR|SERVER|BROKER|ENDPOINT|NODES/.test(keyUpper);
    if (!hostish) return;
    let hosts = hostList(value);
    if (hosts.length === 0 && /HOST/.test(keyUpper) && /^[a-z][\w.-]*$/i.test(value)) {
      const hp = parseHostPort(value);
      if (hp) hosts = [hp];
    }
    for (const hp of hosts) {
      emitConnection(ctx, line, {
        scheme: engine.engine,
        engine: engine.engine,
        category: engine.kind,
        host: hp,
        database: null,
        hasCredentials: false,
        detectedBy: 'config-key',
      });
    }
  });
}

/** env-read, connection-string and external-api-call evidence of every unit. */
export function analyzeConnections(model: CodeModel): {
  evidence: Evidence[];
  gaps: AnalyzerGap[];
} {
  const out: Evidence[] = [];
  const gaps: AnalyzerGap[] = [];
  for (const unit of model.units) {
    for (const file of model.filesByUnit.get(unit.key) ?? []) {
      const kind = scanKindOf(file.path, unit, model.servedConfig?.has(file.path) ?? false);
      if (!kind) continue;
      if (file.text.length > MAX_FILE_CHARS) {
        gaps.push({
          path: file.path,
          reason: 'file_too_large',
          message: `not scanned for connections (${file.text.length} characters)`,
        });
        continue;
      }
      const ctx: Ctx = { unit, file, kind, inTest: isTestPath(file.path), out, seen: new Set() };
      const { code, mask } = lex(file.text, kind.style);
      const idx = new LineIndex(file.text);
      scanUrls(ctx, code, idx);
      if (kind.code) scanCode(ctx, code, mask, idx);
      else scanConfig(ctx, code);
    }
  }
  return { evidence: out, gaps };
}
