/**
 * Values of a Compose file as Compose reads them: `.env` files and `${VAR}` interpolation, build
 * contexts, resource limits, healthchecks, `depends_on`, ports, volumes and `environment`.
 */
import { type Evidence, type SourceFile } from '../evidence';
import { evidence, type EvidenceFields, type Span } from '../shared/evidence';
import { dirname, joinPath } from '../shared/paths';
import { asArray, asString, isRecord } from '../shared/values';
import { expandVariables } from '../shared/variables';
import type { PathItem } from '../shared/yaml';

const PROVIDER = 'docker-compose';

/** What a committed template of an environment file is named: `.env.example`, `app.env.sample`. */
const ENV_TEMPLATE_SUFFIXES = ['.example', '.sample', '.template', '.tmpl', '.dist'];

/**
 * The committed template (`.env.example`...) documenting the values of the environment file at
 * `path` that the repository does not hold, or undefined.
 */
export function envTemplateOf<T extends { path: string }>(
  path: string,
  files: Map<string, T>,
): T | undefined {
  for (const suffix of ENV_TEMPLATE_SUFFIXES) {
    const file = files.get(`${path}${suffix}`);
    if (file) return file;
  }
  return undefined;
}

/** A `.env` file as Compose reads it: `KEY=VALUE` lines, quotes, comments, `${VAR}` between them. */
export function parseDotenv(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!;
    let value = m[2] ?? '';
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.indexOf(quote, 1) > 0) {
      value = value.slice(1, value.indexOf(quote, 1));
      vars.set(key, quote === "'" ? value : interpolate(value, vars));
      continue;
    }
    // An unquoted value ends at ` #` (an inline comment).
    value = value.replace(/\s+#.*$/, '').trim();
    vars.set(key, interpolate(value, vars));
  }
  return vars;
}

/**
 * Compose interpolation: `${VAR}`, `$VAR`, `${VAR:-default}`, `${VAR-default}`, `${VAR:+alt}`,
 * `${VAR+alt}`, `${VAR:?err}`, `$$` (a literal `$`). A variable `vars` does not define stays
 * written as it is, so callers can tell a resolved value from an unknown one.
 */
export function interpolate(value: string, vars: Map<string, string>): string {
  return expandVariables(value, (name) => vars.get(name), { dollarEscape: true });
}

export function cite(
  file: SourceFile,
  span: Span,
  f: Omit<EvidenceFields, 'source' | 'provider'>,
): Evidence {
  return evidence(file, span, { source: 'cloud', provider: PROVIDER, ...f });
}

/**
 * A service's `build:` as Compose runs it: `${VAR}` in the context, Dockerfile and target is
 * interpolated from the project's `.env` like every other value (an uninterpolated
 * `${AGENT_DOCKERFILE}` would leave the build pointing at the context's own Dockerfile).
 */
export function buildContext(
  composePath: string,
  build: unknown,
  vars: Map<string, string> = new Map(),
): Record<string, unknown> | null {
  const spec = typeof build === 'string' ? { context: build } : isRecord(build) ? build : null;
  if (!spec) return null;
  const value = (v: unknown) => {
    const s = asString(v);
    return s === null ? null : interpolate(s, vars);
  };
  const context = value(spec.context) ?? '.';
  return {
    context,
    // Null when the context lies outside the repository.
    context_dir: joinPath(dirname(composePath), context),
    dockerfile: value(spec.dockerfile),
    target: value(spec.target),
  };
}

export function resourceLimits(
  svc: Record<string, unknown>,
  deploy: Record<string, unknown>,
): Record<string, unknown> | null {
  const resources = isRecord(deploy.resources) ? deploy.resources : {};
  if (isRecord(resources.limits) && Object.keys(resources.limits).length > 0)
    return resources.limits;
  const legacy: Record<string, unknown> = {};
  if (svc.mem_limit !== undefined) legacy.memory = svc.mem_limit;
  if (svc.cpus !== undefined) legacy.cpus = svc.cpus;
  return Object.keys(legacy).length > 0 ? legacy : null;
}

export function hasHealthcheck(h: unknown): boolean {
  if (!isRecord(h)) return false;
  if (h.disable === true) return false;
  const test = Array.isArray(h.test) ? h.test[0] : h.test;
  return test !== 'NONE';
}

export function dependencies(
  svc: Record<string, unknown>,
): [string, PathItem[], Record<string, unknown>][] {
  const out: [string, PathItem[], Record<string, unknown>][] = [];
  const d = svc.depends_on;
  if (Array.isArray(d))
    d.forEach((dep, i) => out.push([String(dep), ['depends_on', i], { form: 'list' }]));
  else if (isRecord(d)) {
    for (const [dep, spec] of Object.entries(d)) {
      const condition = isRecord(spec) ? asString(spec.condition) : null;
      out.push([dep, ['depends_on', dep], { form: 'map', condition }]);
    }
  }
  asArray(svc.links).forEach((l, i) => {
    const [dep, alias] = String(l).split(':');
    if (dep) out.push([dep, ['links', i], { form: 'links', alias: alias ?? null }]);
  });
  return out;
}

export interface PortMapping extends Record<string, unknown> {
  mapping: string;
  host_ip: string | null;
  published: string | null;
  target: string;
  protocol: string;
  public: boolean;
  /** The long syntax's port name, when given. */
  name?: string;
}

const PUBLIC_IPS = new Set(['', '0.0.0.0', '::', '[::]']);

/**
 * `s` split at `sep` outside `${...}`: a variable left uninterpolated
 * (`${POSTGRES_PORT:-5432}:5432`) stays one part, its `:-` default with it.
 */
function splitOutsideBraces(s: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '$' && s[i + 1] === '{') {
      depth++;
      i++;
    } else if (c === '}' && depth > 0) depth--;
    else if (c === sep && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

export function parsePort(p: unknown): PortMapping | null {
  if (isRecord(p)) {
    const target = asString(p.target);
    if (!target) return null;
    const published = asString(p.published);
    const hostIp = asString(p.host_ip);
    return {
      mapping: published ? `${published}:${target}` : target,
      host_ip: hostIp,
      published,
      target,
      protocol: asString(p.protocol) ?? 'tcp',
      public: PUBLIC_IPS.has(hostIp ?? ''),
      ...(asString(p.name) ? { name: asString(p.name) ?? '' } : {}),
    };
  }
  const s = asString(p);
  if (!s) return null;
  const [spec = '', protocol = 'tcp'] = splitOutsideBraces(s, '/');
  let hostIp: string | null = null;
  let rest = spec;
  const v6 = /^\[([^\]]+)\]:(.*)$/.exec(spec);
  if (v6) {
    hostIp = v6[1] ?? null;
    rest = v6[2] ?? '';
  }
  const parts = splitOutsideBraces(rest, ':');
  if (parts.length === 3 && hostIp === null) hostIp = parts.shift() ?? null;
  const target = parts.pop() ?? '';
  const published = parts.pop() ?? null;
  return {
    mapping: published ? `${published}:${target}` : target,
    host_ip: hostIp,
    published: published || null,
    target,
    protocol,
    public: PUBLIC_IPS.has(hostIp ?? ''),
  };
}

export interface VolumeMount extends Record<string, unknown> {
  type: string;
  source: string | null;
  target: string;
  read_only: boolean;
  docker_socket: boolean;
}

export function parseVolume(v: unknown): VolumeMount | null {
  let type: string;
  let source: string | null;
  let target: string;
  let readOnly = false;
  if (isRecord(v)) {
    target = asString(v.target) ?? '';
    source = asString(v.source);
    type = asString(v.type) ?? (source && /^[./~]/.test(source) ? 'bind' : 'volume');
    readOnly = v.read_only === true;
  } else {
    const s = asString(v);
    if (!s) return null;
    const parts = s.split(':');
    if (parts.length === 1) {
      source = null;
      target = parts[0] ?? '';
    } else {
      source = parts[0] ?? null;
      target = parts[1] ?? '';
      readOnly = (parts[2] ?? '').split(',').includes('ro');
    }
    type = source && (source.includes('/') || /^[.~$]/.test(source)) ? 'bind' : 'volume';
  }
  if (!target) return null;
  return {
    type,
    source,
    target,
    read_only: readOnly,
    docker_socket: (source ?? '').endsWith('docker.sock'),
  };
}

export interface EnvVar {
  name: string;
  value: unknown;
  /** Path item under `environment` (list index or map key). */
  key: PathItem;
}

export function environment(env: unknown): EnvVar[] {
  if (Array.isArray(env)) {
    return env.flatMap((item, i): EnvVar[] => {
      const s = asString(item);
      if (!s) return [];
      const eq = s.indexOf('=');
      return eq < 0
        ? [{ name: s, value: null, key: i }]
        : [{ name: s.slice(0, eq), value: s.slice(eq + 1), key: i }];
    });
  }
  if (isRecord(env))
    return Object.entries(env).map(([name, value]) => ({ name, value, key: name }));
  return [];
}

/** An environment variable that holds a login: `RABBITMQ_USER`, `DB_PASS`, `MYSQL_PWD`, `PGPASSWORD`. */
const CREDENTIAL_NAME = /(?:^|_|^PG)(?:USER|USERNAME|PASS|PASSWD|PASSWORD|PWD)$/i;
/** A value that is one variable of the project and nothing else: `${X}`, `${X:-d}`, `${X?msg}`, `$X`. */
const WHOLE_VARIABLE =
  /^\$(?:\{([A-Za-z_][A-Za-z0-9_]{0,99})(?:[:]?[-?+][^}]*)?\}|([A-Za-z_][A-Za-z0-9_]{0,99}))$/;

/**
 * The project variables (`.env`, the shell) a service's login variables take whole: the names
 * only, never a value. A store given `RABBITMQ_DEFAULT_USER: ${RABBITMQ_USER}` and a service given
 * `RABBITMQ_USER: ${RABBITMQ_USER}` share `RABBITMQ_USER`: the service holds that store's login.
 * `- RABBITMQ_USER` with no value passes the project's variable of that name.
 */
export function credentialVariables(env: EnvVar[]): string[] {
  const out = new Set<string>();
  for (const e of env) {
    if (e.name.length > 100 || !CREDENTIAL_NAME.test(e.name)) continue;
    if (e.value === null) {
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(e.name)) out.add(e.name);
      continue;
    }
    if (typeof e.value !== 'string' || e.value.length > 300) continue;
    const m = WHOLE_VARIABLE.exec(e.value.trim());
    if (m) out.add((m[1] ?? m[2])!);
  }
  return [...out].sort();
}

/**
 * The names other containers reach a compose service by, lowercase -> service: its name, then
 * `hostname`, `container_name`, network aliases (`networks: {net: {aliases: [xmpp.example]}}`)
 * each interpolated from the project's `.env` like Compose does
 * (`${XMPP_SERVER:-xmpp.meet.jitsi}` is its default without one). The first service wins a name.
 */
export function serviceHostNames(
  projects: Array<{ services: Record<string, unknown>; vars: Map<string, string> }>,
): Map<string, string> {
  const names = new Map<string, string>();
  const add = (alias: unknown, service: string, vars: Map<string, string>) => {
    const raw = asString(alias);
    const a = raw === null ? null : interpolate(raw, vars).trim().toLowerCase();
    if (a && !a.includes('$') && !names.has(a)) names.set(a, service);
  };
  for (const p of projects) for (const name of Object.keys(p.services)) add(name, name, p.vars);
  for (const { services, vars } of projects) {
    for (const [name, svc] of Object.entries(services)) {
      if (!isRecord(svc)) continue;
      add(svc.hostname, name, vars);
      add(svc.container_name, name, vars);
      if (isRecord(svc.networks)) {
        for (const net of Object.values(svc.networks)) {
          if (isRecord(net)) for (const a of asArray(net.aliases)) add(a, name, vars);
        }
      }
    }
  }
  return names;
}
