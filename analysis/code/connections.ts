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
import { basename, dirname, relativeTo, isDockerfile } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { goReadFunction } from './go-functions';
import {
  internalName,
  isIp,
  isLocalHost,
  parseHostPort,
  parseUrl,
  type HostPort,
} from '../shared/urls';
import { addressKey, addressRole, isIdentityProviderPackage } from './address-roles';
import { inLogSinkCall } from './log-sinks';
import { isTestPath, languageOf, lex, lexStyleOf, STRING } from './common';
import {
  ENV_API_RE,
  ENV_HELPER,
  ENV_NAME_LITERAL,
  ENV_PATTERNS,
  PLACEHOLDER_RE,
} from './connection-env-patterns';
import {
  BROKER_SCHEMES,
  DATASTORE_SCHEMES,
  engineFromKey,
  hostLabel,
  hostList,
  isConnectionEnvName,
  isExampleHost,
  isPrivateIp,
  looksLikeDocs,
  URL_RE,
} from './connection-hosts';
import {
  emitConnection,
  emitHostConnection,
  envReadEvidence,
  push,
  scanClientHosts,
  scanDsn,
  type Ctx,
  type ScanKind,
} from './connection-scan';
import { boundRoles } from './bound-settings';
import { CLIENT_CONFIGURATION, configurationHosts } from './connection-settings';
import { jsonKeyPaths } from './json-keys';
import { scanLocalSetting, type HostPortPairs } from './local-addresses';
import { isLockfile, manifestKindOf } from './manifests';
import { phpReadRole } from './php-env-roles';
import { scanPythonSettings } from './python-settings';
import { isCloudMetadataHost, isPatternUrl, isPlaceholderHost, isSampleValue } from './url-shapes';
import {
  isAlloyConfig,
  isClickHouseServerConfig,
  isGrafanaDatasources,
  isProgramSettings,
  isSettingsSource,
  settingsSubject,
} from './settings-files';
import { withoutUnusedSettings } from './shared-settings';
import { jsLiteralVariables } from './string-constants';
import { scanAlloyEndpoints } from './alloy-config';
import { CLICKHOUSE_CONFIG, scanClickHouseDsns, scanClickHouseKeepers } from './clickhouse';
import { isGoTestSupport } from './go-test-support';
import { isMountedOnlySettingsFile } from '../../domain/audits/classify';
import { yamlHostItem } from './yaml-host-items';
import type { CodeModel, Unit } from './model';
import {
  isDeployedSettingsFile,
  scanJsonSettingsAddresses,
  scanSettingsAddress,
  settingsHostPairs,
  type SettingsHostPairs,
} from './settings-addresses';

/** Local copy: imported bindings are getters in the CommonJS output, slow in hot loops. */
const IN_STRING = STRING;

const MAX_FILE_CHARS = 1_000_000;
/** What a bootstrap list of brokers connects to. */
const KAFKA = { engine: 'kafka', kind: 'queue' } as const;

// ---------------------------------------------------------------------------------------------
// Which files

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
  // Grafana Alloy's configuration syntax: `//` and `/* */` comments, `"` strings.
  if (isAlloyConfig(path))
    return { style: 'c', provider: 'alloy-config', code: false, language: null };
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
// Call context for http(s) URLs

const CALLEE = String.raw`(?:\bfetch|\baxios(?:\.\w+)?|\bgot(?:\.\w+)?|\bky(?:\.\w+)?|\bneedle|\brequest|\burlopen|\bURI\.create|\bURI(?:\.parse)?|\bURL|new\s+URL|new\s+Uri|\bhttp\.(?:Get|Post|Head|PostForm|NewRequest|NewRequestWithContext)|\breqwest::get|\bHTTParty\.\w+|\bFaraday\.\w+|[\w$)\]]\.(?:get|post|put|patch|delete|head|request|options|getForObject|getForEntity|postForObject|postForEntity|exchange|GetAsync|PostAsync|PutAsync|DeleteAsync|GetStringAsync|SendAsync|fetch|stream|uri))`;
const CALL_RE = new RegExp(
  `${CALLEE}\\s*\\(\\s*(?:url\\s*[:=]\\s*)?(?:(?:[\\w$.]+|"[A-Za-z]+"|'[A-Za-z]+'|http\\.Method\\w+)\\s*,\\s*){0,2}[rRfFbBuU@$]{0,2}$`,
);

/** A URL's authority that is one template substitution (`${host}`), then its path or end. */
const TEMPLATE_HOST = /^\$\{[ \t]*([A-Za-z_$][\w$]*)[ \t]*\}(?=[/?#]|$)/;
/** A plain `host[:port]` value (no scheme, no path). */
const PLAIN_HOST_PORT = /^[A-Za-z0-9][A-Za-z0-9.-]{0,252}(?::\d{1,5})?$/;

function scanUrls(ctx: Ctx, code: string, idx: LineIndex, bound: Map<string, string>): void {
  const { unit } = ctx;
  const selfNames = new Set(unit.aliases);
  const jsonKeys = ctx.kind.provider === 'json-config' ? jsonKeyPaths(code) : null;
  const js = ctx.kind.language === 'javascript' || ctx.kind.language === 'typescript';
  // The file's variables holding one literal, read once when a URL's host is a substitution.
  let literals: Map<string, string> | null = null;
  let m: RegExpExecArray | null;
  URL_RE.lastIndex = 0;
  while ((m = URL_RE.exec(code)) !== null) {
    // A URL in a regular expression or a sample value of a form is no address (url-shapes.ts).
    if (isPatternUrl(code, m.index + m[0].length) || isSampleValue(code, m.index)) continue;
    const line = idx.lineAt(m.index);
    const written = m[1] ?? '';
    let rest = m[2] ?? '';
    // A template literal whose host is a variable holding a literal `host[:port]`
    // (`http://${serverHostPort}/${path}` with `let serverHostPort = "api:4000"`) is that URL.
    let hostVariable: string | null = null;
    const sub = js ? TEMPLATE_HOST.exec(rest) : null;
    if (sub) {
      literals ??= jsLiteralVariables(code);
      const value = literals.get(sub[1] ?? '');
      if (value !== undefined && PLAIN_HOST_PORT.test(value)) {
        rest = value + rest.slice(sub[0].length);
        hostVariable = sub[1] ?? null;
      }
    }
    const parsed = parseUrl(written.startsWith('{') ? 'http' : written, rest);
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
    if (isPlaceholderHost(rest) || isCloudMetadataHost(host)) continue;
    const internal = internalName(host);
    if (internal !== null && selfNames.has(internal)) continue;
    const lineStart = idx.lineStart(line);
    const before = code.slice(lineStart, m.index);
    const quoted = /['"`]$/.test(before);
    const inCall = ctx.kind.code && quoted && CALL_RE.test(before.slice(0, -1));
    if (!inCall && looksLikeDocs(parsed)) continue;
    // An address given for a redirect, callback, allow-list or issuer (or a client registered
    // with this identity provider) is a fact about the unit, not a call it makes.
    const key = inCall ? '' : (jsonKeys?.at(m.index) ?? addressKey(code, m.index) ?? '');
    const role =
      ctx.kind.code && inLogSinkCall(before)
        ? 'log-sink'
        : inCall
          ? null
          : (addressRole(key, identityProvider(unit)) ??
            (ctx.kind.code ? null : bound.get(key)) ??
            null);
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
        attributes: {
          ...base,
          internal_host: true,
          detected_by: inCall ? 'http-call' : 'url',
          ...(hostVariable !== null ? { host_variable: hostVariable } : {}),
        },
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
      const role = family === 'php' ? phpReadRole(code, m.index, m.index + m[0].length) : null;
      const fn = family === 'go' ? goReadFunction(code, m.index) : null;
      envReadEvidence(ctx, idx.lineAt(m.index), name, 'code', def, role, fn);
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
  if (family === 'python') scanPythonSettings(ctx, code, idx);
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
            emitHostConnection(ctx, line, KAFKA, hp, 'bootstrap-list');
          }
        }
      }
    }
    offset += text.length + 1;
  });
}

/** Spring / Micronaut settings files, whose `${VAR:default}` placeholders fall back to a default. */
const JVM_SETTINGS = /(^|\/)(application|bootstrap)([-.][\w.-]+)?\.(ya?ml|properties)$/i;
/** A placeholder with a plain default value (a host, a port, a name). */
const DEFAULTED = /\$\{[A-Za-z_][\w.]*:([\w.-]+)\}/g;

function scanConfig(ctx: Ctx, code: string, resolved: string = code): void {
  const lines = code.split('\n');
  const resolvedLines = resolved.split('\n');
  // Local addresses and the server's own port of a Spring / Micronaut settings file.
  const jvmSettings = JVM_SETTINGS.test(ctx.file.path) && !ctx.inTest;
  const pairs: HostPortPairs = new Map();
  const dotenv = ctx.kind.provider === 'dotenv';
  // YAML keys are read with their parents (`spring:` / `data:` / `mongodb:` / `host:` is
  // `spring.data.mongodb.host`), so a nested key names its engine as a flat one does.
  const yaml = ctx.kind.provider === 'yaml-config';
  const jsonKeys = ctx.kind.provider === 'json-config' ? jsonKeyPaths(code) : null;
  const parents: { indent: number; key: string }[] = [];
  // Scheme-less addresses of a deployed settings file (settings-addresses.ts).
  const deployedSettings = isDeployedSettingsFile(ctx.file.path);
  if (jsonKeys && deployedSettings) scanJsonSettingsAddresses(ctx, code, jsonKeys);
  const addresses = yaml && deployedSettings ? (new Map() as SettingsHostPairs) : null;
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
    const read = resolvedLines[i]?.replace(/\r$/, '') ?? text;
    const kv =
      /^\s*(?:export\s+|ENV\s+|-\s+)?["']?([A-Za-z_][\w.\-[\]]*)["']?\s*(?:=|:(?=\s|$)|\s(?=\S))\s*(.*?)\s*,?\s*$/.exec(
        read,
      );
    if (!kv) {
      scanDsn(ctx, read, line);
      if (yaml) scanYamlAddress(ctx, line, parents.map((p) => p.key).join('.'), read);
      // A block sequence of addresses under an engine's key (`kafka: addrs: - host:9092`).
      const item = yaml ? yamlHostItem(parents, read) : null;
      for (const hp of item?.hosts ?? [])
        emitHostConnection(ctx, line, item!.engine, hp, 'config-key', item!.key);
      return;
    }
    const value = (kv[2] ?? '').replace(/^(['"])(.*)\1$/, '$2');
    let key = kv[1] ?? '';
    if (yaml) {
      const indent = /^[\s-]*/.exec(read)?.[0].length ?? 0;
      while (parents.length && parents[parents.length - 1]!.indent >= indent) parents.pop();
      const own = key;
      key = [...parents.map((p) => p.key), own].join('.');
      if (value === '') parents.push({ indent, key: own });
    }
    if (jsonKeys) key = jsonKeys.line.get(line) ?? key;
    if (dotenv) envReadEvidence(ctx, line, key, 'env-file', value);
    if (jvmSettings && !engineFromKey(key)) scanLocalSetting(ctx, line, key, value, pairs);
    scanDsn(ctx, value, line);
    if (value.includes('://')) return;
    if (yaml) scanYamlAddress(ctx, line, key, read);
    const engine = engineFromKey(key);
    if (!engine && addresses && !/^\s*-/.test(read))
      scanSettingsAddress(ctx, line, key, value, addresses);
    if (!engine) return;
    const keyUpper = key.toUpperCase().replace(/[.-]/g, '_');
    const hostish =
      isConnectionEnvName(keyUpper) ||
      /HOST|ADDR|SERVER|BROKER|ENDPOINT|NODES/.test(keyUpper) ||
      CLIENT_CONFIGURATION.test(keyUpper);
    if (!hostish) return;
    let hosts = hostList(value);
    // A bare name under a host key, or under an engine's URL key (`elasticsearch.url=search`:
    // clients such as Spring Data Elasticsearch's `connectedTo` take `host[:port]` there).
    if (
      hosts.length === 0 &&
      /HOST|(^|_)(URLS?|URIS?)$/.test(keyUpper) &&
      /^[a-z][\w.-]*$/i.test(value)
    ) {
      const hp = parseHostPort(value);
      if (hp) hosts = [hp];
    }
    if (hosts.length === 0 && CLIENT_CONFIGURATION.test(keyUpper))
      hosts = configurationHosts(value);
    for (const hp of hosts) {
      emitHostConnection(ctx, line, engine, hp, 'config-key', key);
    }
  });
  if (addresses) settingsHostPairs(ctx, addresses);
}

/** A mail relay named by a key of a mail namespace (`mail.host: smtp`, `smtp: {server: relay}`). */
const MAIL_HOST_KEY = /(^|[._-])(mail|smtp|email)[._-](host|hostname|server|address)$/i;

/**
 * Addresses of a YAML settings line that name no engine by key: the quoted `host:port` lists
 * of a line about Kafka (`- {name: "bootstrap.servers", value: "kafka:9092"}`), and the mail
 * relay a mail setting names, an internal service.
 */
function scanYamlAddress(ctx: Ctx, line: number, key: string, text: string): void {
  if (/kafka|bootstrap|brokers?\b/i.test(`${key} ${text}`)) {
    for (const lit of text.matchAll(/(["'])([^"'\n]+)\1/g))
      for (const hp of hostList(lit[2] ?? ''))
        emitHostConnection(ctx, line, KAFKA, hp, 'bootstrap-list');
  }
  if (!MAIL_HOST_KEY.test(key)) return;
  const value = /:\s*(["']?)([a-z][\w-]*)\1\s*(#.*)?$/i.exec(text)?.[2] ?? '';
  const internal = value === '' ? null : internalName(value);
  if (internal === null || isLocalHost(internal) || ctx.unit.aliases.includes(internal)) return;
  push(ctx, line, `svc\u0000${internal}`, () => ({
    kind: 'connection-string',
    relationship: 'connects_to',
    object: entityKey('service', internal),
    summary: `${ctx.unit.name} sends mail through service ${internal} (${key})`,
    attributes: {
      host: internal,
      port: null,
      internal_host: true,
      detected_by: 'config-key',
      in_test: ctx.inTest,
    },
  }));
}

/** env-read, connection-string and external-api-call evidence of every unit. */
export function analyzeConnections(model: CodeModel): {
  evidence: Evidence[];
  gaps: AnalyzerGap[];
} {
  const out: Evidence[] = [];
  const gaps: AnalyzerGap[] = [];
  // Served configuration given to several units (a config server's `application.yml`).
  const servedTo = new Map<string, number>();
  // Settings keys whose code bindings give them an address role (a provider's return URL).
  const bound = boundRoles(model.files);
  if (model.servedConfig?.size)
    for (const files of model.filesByUnit.values())
      for (const f of files)
        if (model.servedConfig.has(f.path)) servedTo.set(f.path, (servedTo.get(f.path) ?? 0) + 1);
  const byUnit: [Unit, SourceFile[]][] = model.units.map((u) => [
    u,
    model.filesByUnit.get(u.key) ?? [],
  ]);
  // Settings files no unit holds (a compose project's `./config/app.yml`): read under a subject
  // of their own, no entity; reconcile gives them to the containers they are mounted into.
  // A file that is code only as settings a container may be given by name (a `tempo.yaml`
  // naming `http://mimir:9009`) is read that way only, wherever it lies.
  const mountedOnly = new Set<string>();
  for (const file of model.files) {
    if (isMountedOnlySettingsFile(file.path, file.text.slice(0, 4096))) {
      mountedOnly.add(file.path);
      byUnit.push([settingsSubject(file.path), [file]]);
    } else if (isSettingsSource(file.path, file.text) && model.ownerOf(dirname(file.path)) === null)
      byUnit.push([settingsSubject(file.path), [file]]);
  }
  for (const [unit, files] of byUnit) {
    for (const file of files) {
      const onlyMounted = mountedOnly.has(file.path);
      if (onlyMounted && !unit.key.startsWith('settings:')) continue;
      // A Grafana data source file is settings whatever its name (settings-files.ts).
      const grafana = isGrafanaDatasources(file.path, file.text);
      const served = model.servedConfig?.has(file.path) ?? false;
      const clickhouse = onlyMounted && isClickHouseServerConfig(file.path, file.text);
      const kind = clickhouse
        ? CLICKHOUSE_CONFIG
        : scanKindOf(file.path, unit, served || grafana || onlyMounted);
      if (!kind) continue;
      if (file.text.length > MAX_FILE_CHARS) {
        gaps.push({
          path: file.path,
          reason: 'file_too_large',
          message: `not scanned for connections (${file.text.length} characters)`,
        });
        continue;
      }
      // A test suite's addresses (the system under test) are no calls of a deployed component.
      // A Go test-support package (`footest`, importing "testing") is test code too.
      const inTest =
        isTestPath(file.path) || unit.unitClass === 'test' || isGoTestSupport(file.path, file.text);
      const ctx: Ctx = { unit, file, kind, inTest, out, seen: new Set() };
      const { code, mask } = lex(file.text, kind.style);
      const idx = new LineIndex(file.text);
      const start = out.length;
      // Spring / Micronaut settings: an address written with placeholders
      // (`${KAFKA_HOST:localhost}:${KAFKA_PORT:9092}`) is read as its defaults.
      const resolved = JVM_SETTINGS.test(file.path) ? code.replace(DEFAULTED, '$1') : code;
      scanUrls(ctx, resolved, resolved === code ? idx : new LineIndex(resolved), bound);
      if (!clickhouse) scanClickHouseDsns(ctx, code, idx);
      if (kind.code) scanCode(ctx, code, mask, idx);
      else if (kind.provider === 'alloy-config') scanAlloyEndpoints(ctx, code, mask);
      else if (clickhouse) scanClickHouseKeepers(ctx, file.text);
      else scanConfig(ctx, code, resolved);
      // A program's settings file (`config.yml`) configures whatever container is given it
      // (analysis/reconcile-mounted.ts), not necessarily the unit whose folder holds it; a
      // classpath resource or a file a config server serves is the unit's own.
      if (
        (isProgramSettings(file.path) ||
          isAlloyConfig(file.path) ||
          grafana ||
          unit.key.startsWith('settings:')) &&
        !/(^|\/)src\/main\/resources\//.test(file.path) &&
        !model.servedConfig?.has(file.path)
      )
        for (let i = start; i < out.length; i++)
          out[i] = {
            ...out[i]!,
            attributes: {
              ...out[i]!.attributes,
              settings_file: true,
              ...(onlyMounted ? { mounted_file_only: true } : {}),
            },
          };
      // A Spring / Micronaut settings file (`application.yml`, on the classpath or in the
      // unit's folder) is the program's own committed settings, read by no other program.
      if (JVM_SETTINGS.test(file.path) && !inTest && !kind.code)
        for (let i = start; i < out.length; i++)
          out[i] = { ...out[i]!, attributes: { ...out[i]!.attributes, jvm_settings: true } };
      if ((servedTo.get(file.path) ?? 0) > 1)
        out.splice(
          start,
          out.length - start,
          ...withoutUnusedSettings(unit, out.slice(start), file.text),
        );
    }
  }
  return { evidence: out, gaps };
}
