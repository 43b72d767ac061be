/**
 * Reverse proxies and gateways as routers: the proxy service connects to each upstream it routes
 * to. nginx (`proxy_pass`, `grpc_pass`, `uwsgi_pass`, `fastcgi_pass`, `scgi_pass`, `upstream`
 * blocks, `set $var` targets), Caddyfile `reverse_proxy` upstreams (analysis/cloud/caddyfile.ts,
 * its `{$VAR}` / `{$VAR:default}` / `{env.VAR}` placeholders filled from the owner's
 * environment), Envoy static clusters and the routes that invoke a Dapr app through
 * the sidecar (analysis/cloud/envoy-dapr.ts), Traefik labels on compose services, and the
 * label/env-discovery proxies of analysis/cloud/label-proxies.ts.
 *
 * Which service is the proxy: the compose service that mounts the file (a bind volume of the file
 * or of a folder holding it), else the compose service whose build context holds it, else the
 * one compose service that runs the image of a Dockerfile that COPYs/ADDs the file (or a folder
 * holding it) into its image, else the service of the Dockerfile whose folder holds it (named
 * like analysis/cloud/dockerfile.ts names it). A config file no service owns is a gap, never a
 * guess. The image of a Dockerfile is run by the compose services that build it, else by the
 * image-only compose services whose image is named like it (`Dockerfile.web` or `web/Dockerfile`
 * -> `acme/web`): an owner found by that name is marked `owner_link: 'image-name'` (a weaker
 * link, scored lower in analysis/reconcile-confidence.ts).
 *
 * Templates (`*.template`, `*.tmpl`, or files in a `templates/` folder, which the nginx image
 * fills with `envsubst` at start) are filled from the owner's environment: Dockerfile `ENV`, the
 * defaults the image's entrypoint script exports (`export X=${X:-http://api:8080}`, a script the
 * same Dockerfile copies), then the compose service's `environment` (interpolated from the
 * project `.env`), which wins. Only defined variables are replaced, like envsubst does; a target
 * still holding a variable names nothing.
 */
import type { AnalyzerGap, AnalyzerOutput, Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence, type Span } from '../shared/evidence';
import { parseImageRef } from '../shared/images';
import { basename, dirname, isWithin, joinPath, normalizePath } from '../shared/paths';
import { compareStrings, LineIndex } from '../shared/text';
import { asArray, asString, isRecord } from '../shared/values';
import { expandVariables } from '../shared/variables';
import { parseYamlDocuments } from '../shared/yaml';
import { parseHostPort, parseUrl, targetKeyOf, type HostPort } from '../shared/urls';
import { interpolate, parseDotenv } from './compose';
import { serviceHostNames } from './compose-values';
import { replicaService, type ComposeProject } from './compose-replicas';
import { copiedDirs, dockerfileServiceName, instructions } from './dockerfile';
import { catalogRanges, consulTemplateInvocations, type Invocation } from './consul-template';
import { envoyDaprRoutes } from './envoy-dapr';
import { isImageTemplate, renderTemplate, templateDefaults } from './image-templates';
import { composeLabels, labelProxyEvidence } from './label-proxies';
import { caddyRoutes, fillCaddyPlaceholders, isCaddyfile } from './caddyfile';

export type ProxyKind = 'nginx' | 'envoy' | 'caddy';

/** nginx directives that send a request to an upstream. */
const NGINX_PASS = /\b(proxy_pass|grpc_pass|uwsgi_pass|fastcgi_pass|scgi_pass)\s+([^;\s]+)\s*;/g;
const NGINX_HINT =
  /\b(proxy_pass|grpc_pass|uwsgi_pass|fastcgi_pass|scgi_pass)\s|\bupstream\s+[\w.-]+\s*\{/;

/** Which proxy a file configures, from its name and a look at its text; null for neither. */
export function proxyKindOf(file: SourceFile): ProxyKind | null {
  const name = basename(file.path).toLowerCase();
  if (/\.conf(\.template|\.tmpl)?$|^nginx[\w.-]*$/.test(name) && NGINX_HINT.test(file.text))
    return 'nginx';
  if (/\.ya?ml(\.template|\.tmpl)?$/.test(name) && /^static_resources\s*:/m.test(file.text))
    return 'envoy';
  if (isCaddyfile(file)) return 'caddy';
  return null;
}

function isTemplate(path: string): boolean {
  return /\.(template|tmpl)(\.[a-z]+)?$/i.test(path) || /(^|\/)templates\//.test(path);
}

// ---------------------------------------------------------------------------------------------
// Owners: which service runs a config file, and its environment

interface Owner {
  key: string;
  how: 'compose-volume' | 'compose-build' | 'dockerfile-copy' | 'dockerfile-folder';
  env: Map<string, string>;
  /**
   * How a `dockerfile-copy` owner runs the image: it builds it, or runs an image named like it;
   * `env-template`: a mount whose path only the project's committed `.env` template gives.
   */
  link?: 'build' | 'image-name' | 'env-template';
}

interface Candidate {
  key: string;
  /** The bind-mounted file or folder, the copied file or folder, or the build context / Dockerfile folder. */
  dir: string;
  how: Owner['how'];
  env: Map<string, string>;
  link?: Owner['link'];
}

/**
 * The literal defaults an entrypoint script gives variables the container's environment may not
 * set: `export X=${X:-value}`, `X="${X:-value}"`, `: "${X:=value}"`. A default holding a variable
 * or a command substitution is not known, and is skipped.
 */
export function entrypointDefaults(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const unquote = (v: string) => v.trim().replace(/^(["'])(.*)\1$/, '$2');
  const assign =
    /^[ \t]*(?:export[ \t]+)?([A-Za-z_]\w*)=(["']?)\$\{([A-Za-z_]\w*):?[-=]([^}$`]*)\}\2[ \t]*;?[ \t]*(?:#.*)?$/gm;
  for (const m of text.matchAll(assign))
    if (m[1] === m[3] && !out.has(m[1] ?? '')) out.set(m[1] ?? '', unquote(m[4] ?? ''));
  const colon = /^[ \t]*:[ \t]+(["']?)\$\{([A-Za-z_]\w*):?=([^}$`]*)\}\1[ \t]*;?[ \t]*(?:#.*)?$/gm;
  for (const m of text.matchAll(colon))
    if (!out.has(m[2] ?? '')) out.set(m[2] ?? '', unquote(m[3] ?? ''));
  return out;
}

/** COPY/ADD sources of a Dockerfile's final stage (not `--from` another stage), in `context`. */
function copiedPaths(text: string, context: string): string[] {
  let body: Array<{ cmd: string; args: string }> = [];
  for (const ins of instructions(text)) {
    if (ins.cmd === 'FROM') body = [];
    else body.push(ins);
  }
  return copiedDirs(context, body);
}

/** The defaults of the entrypoint scripts among (or under) the paths a Dockerfile copies. */
function copiedDefaults(copied: string[], entrypoints: SourceFile[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const script of entrypoints)
    if (copied.some((p) => isWithin(script.path, p)))
      for (const [k, v] of entrypointDefaults(script.text)) if (!out.has(k)) out.set(k, v);
  return out;
}

/** The name an image built from a Dockerfile goes by: `Dockerfile.web`, `web.Dockerfile`, `web/Dockerfile`. */
function builtImageName(path: string): string | null {
  const variant = /^(?:Dockerfile|Containerfile)[.-](.+)$|^(.+)\.dockerfile$/i.exec(basename(path));
  const name = variant ? (variant[1] ?? variant[2]) : basename(dirname(path));
  return name ? name.toLowerCase() : null;
}

/** `ENV A=1 B=2` and `ENV A 1` of a Dockerfile's final stage (earlier stages are not the image). */
function dockerfileEnv(text: string): { env: Map<string, string>; stage: string | null } {
  let env = new Map<string, string>();
  let stage: string | null = null;
  for (const ins of instructions(text)) {
    if (ins.cmd === 'FROM') {
      env = new Map();
      stage = /\s+as\s+([\w.-]+)\s*$/i.exec(ins.args)?.[1] ?? null;
    } else if (ins.cmd === 'ENV') {
      const lookup = (n: string) => env.get(n);
      const pairs = [...ins.args.matchAll(/([A-Za-z_]\w*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)];
      if (pairs.length > 0) {
        for (const p of pairs)
          env.set(
            p[1] ?? '',
            expandVariables((p[2] ?? '').replace(/^(["'])(.*)\1$/, '$2'), lookup),
          );
      } else {
        const m = /^([A-Za-z_]\w*)\s+(.*)$/.exec(ins.args);
        if (m) env.set(m[1] ?? '', expandVariables(m[2] ?? '', lookup));
      }
    }
  }
  return { env, stage };
}

function composeEnvironment(value: unknown, vars: Map<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      const s = v === null || v === undefined ? (vars.get(k) ?? null) : String(v);
      if (s !== null) out.set(k, interpolate(s, vars));
    }
  } else {
    for (const item of asArray(value)) {
      const s = asString(item);
      if (!s) continue;
      const eq = s.indexOf('=');
      if (eq < 0) {
        const passed = vars.get(s);
        if (passed !== undefined) out.set(s, passed);
      } else out.set(s.slice(0, eq), interpolate(s.slice(eq + 1), vars));
    }
  }
  return out;
}

interface ComposeRunner {
  key: string;
  /** The Dockerfile its build uses, or null for an image-only service. */
  dockerfile: string | null;
  context: string | null;
  /** The last segment of its image's repository, lowercase. */
  imageName: string | null;
  /** Its `environment`, interpolated. */
  env: Map<string, string>;
}

function candidates(
  compose: SourceFile[],
  dockerfiles: SourceFile[],
  dotenv: SourceFile[],
  entrypoints: SourceFile[] = [],
  envTemplates: SourceFile[] = [],
) {
  const list: Candidate[] = [];
  const runners: ComposeRunner[] = [];
  const projects: ComposeProject[] = [];
  const dockerfileAt = new Map(dockerfiles.map((f) => [f.path, f]));
  for (const file of compose) {
    const dir = dirname(file.path);
    const envFile = dotenv.find((f) => dirname(f.path) === dir);
    const vars = envFile ? parseDotenv(envFile.text) : new Map<string, string>();
    // No `.env`: the committed template beside the compose file documents a mount's path.
    const template = envFile
      ? undefined
      : envTemplates
          .filter((f) => dirname(f.path) === dir)
          .sort((a, b) => compareStrings(a.path, b.path))[0];
    const documented = template ? parseDotenv(template.text) : null;
    for (const doc of parseYamlDocuments(file).docs) {
      const services = isRecord(doc.value) ? doc.value.services : null;
      if (!isRecord(services)) continue;
      projects.push({
        dir,
        name: isRecord(doc.value) ? doc.value.name : undefined,
        services,
        vars,
      });
      for (const [name, svc] of Object.entries(services)) {
        if (!isRecord(svc)) continue;
        const key = entityKey('service', name);
        const build = typeof svc.build === 'string' ? { context: svc.build } : svc.build;
        const contextRaw = isRecord(build) ? asString(build.context) : null;
        const context = contextRaw === null ? null : interpolate(contextRaw, vars);
        const contextDir = context === null ? null : joinPath(dir, context);
        let env = new Map<string, string>();
        // The build folder: the Dockerfile's folder (a context at the repository root builds
        // many services, each from its own folder's Dockerfile), else the context.
        let buildDir = contextDir;
        let dfPath: string | null = null;
        if (contextDir !== null) {
          const df = interpolate(
            isRecord(build) ? (asString(build.dockerfile) ?? 'Dockerfile') : 'Dockerfile',
            vars,
          );
          dfPath = normalizePath(contextDir === '' ? df : `${contextDir}/${df}`);
          const found = dfPath === null ? undefined : dockerfileAt.get(dfPath);
          if (found) {
            env = dockerfileEnv(found.text).env;
            const copied = copiedPaths(found.text, contextDir);
            for (const [k, v] of copiedDefaults(copied, entrypoints))
              if (!env.has(k)) env.set(k, v);
          }
          if (dfPath !== null) buildDir = dirname(dfPath);
        }
        const own = composeEnvironment(svc.environment, vars);
        for (const [k, v] of own) env.set(k, v);
        const image = asString(svc.image);
        const repo = image ? parseImageRef(interpolate(image, vars))?.repo : null;
        runners.push({
          key,
          dockerfile: dfPath,
          context: contextDir,
          imageName: repo ? (repo.split('/').pop() ?? '').toLowerCase() : null,
          env: own,
        });
        if (buildDir !== null) list.push({ key, dir: buildDir, how: 'compose-build', env });
        for (const v of asArray(svc.volumes)) {
          const source = isRecord(v)
            ? asString(v.type) === 'bind' || v.type === undefined
              ? asString(v.source)
              : null
            : (asString(v)?.split(':')[0] ?? null);
          if (!source) continue;
          if (/^\.{1,2}(\/|$)/.test(source)) {
            const mounted = joinPath(dir, interpolate(source, vars));
            if (mounted !== null) list.push({ key, dir: mounted, how: 'compose-volume', env });
            continue;
          }
          const fromTemplate = documented ? interpolate(source, documented) : null;
          if (!fromTemplate || fromTemplate === source || !/^\.{1,2}\/[^$]*$/.test(fromTemplate))
            continue;
          const mounted = joinPath(dir, fromTemplate);
          if (mounted !== null)
            list.push({ key, dir: mounted, how: 'compose-volume', env, link: 'env-template' });
        }
      }
    }
  }
  for (const f of dockerfiles) {
    const { env, stage } = dockerfileEnv(f.text);
    const key = entityKey('service', dockerfileServiceName(f.path, stage));
    list.push({ key, dir: dirname(f.path), how: 'dockerfile-folder', env });
    list.push(...copyCandidates(f, env, runners, entrypoints));
  }
  return { list, names: serviceHostNames(projects), projects };
}

/**
 * The files a Dockerfile copies into its image belong to the one compose service running that
 * image: the services that build it, else the image-only services whose image is named like it.
 * Several services (or none): no owner from the copy.
 */
function copyCandidates(
  f: SourceFile,
  dockerEnv: Map<string, string>,
  runners: ComposeRunner[],
  entrypoints: SourceFile[],
): Candidate[] {
  let link: Owner['link'] = 'build';
  let running = runners.filter((r) => r.dockerfile === f.path);
  if (running.length === 0) {
    const name = builtImageName(f.path);
    link = 'image-name';
    running = name ? runners.filter((r) => r.dockerfile === null && r.imageName === name) : [];
  }
  const keys = [...new Set(running.map((r) => r.key))];
  if (keys.length !== 1) return [];
  const context = running.find((r) => r.context !== null)?.context ?? dirname(f.path);
  const copied = copiedPaths(f.text, context);
  if (copied.length === 0) return [];
  // ENV of the image, then the defaults its entrypoint script exports, then the service's own.
  const env = new Map(dockerEnv);
  for (const [k, v] of copiedDefaults(copied, entrypoints)) if (!env.has(k)) env.set(k, v);
  for (const r of running) for (const [k, v] of r.env) env.set(k, v);
  return copied.map((dir) => ({ key: keys[0]!, dir, how: 'dockerfile-copy' as const, env, link }));
}

function ownerOf(path: string, list: Candidate[]): Owner | null {
  const holding = list.filter((c) => isWithin(path, c.dir));
  // A mount says most, then a compose build context (its name wins over the Dockerfile folder's).
  for (const how of [
    'compose-volume',
    'compose-build',
    'dockerfile-copy',
    'dockerfile-folder',
  ] as const) {
    const cs = holding.filter((c) => c.how === how);
    if (cs.length === 0) continue;
    // The deepest folder; several services at that depth: no owner.
    const depth = Math.max(...cs.map((c) => c.dir.length));
    const keys = [...new Set(cs.filter((c) => c.dir.length === depth).map((c) => c.key))];
    if (keys.length !== 1) return null;
    const c = cs.find((x) => x.key === keys[0] && x.dir.length === depth)!;
    return { key: c.key, how, env: c.env, ...(c.link ? { link: c.link } : {}) };
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Routes

interface Route {
  span: Span;
  directive: string;
  target: HostPort;
  upstream?: string;
  filled?: string[];
  /** The entity the route reaches when it is named, not addressed (a Dapr app id). */
  object?: string;
}

/** `${VAR}` / `$VAR` replaced where `env` defines VAR (envsubst as the nginx image runs it). */
function fill(text: string, env: Map<string, string>): { text: string; used: Set<string> } {
  const used = new Set<string>();
  const out = text.replace(
    /\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)/g,
    (all, a?: string, b?: string) => {
      const name = a ?? b ?? '';
      const v = env.get(name);
      if (v === undefined) return all;
      used.add(name);
      return v;
    },
  );
  return { text: out, used };
}

/** The hosts of a pass target: `http://api:8080/x`, `grpc://svc:50051`, `php:9000`. */
function passHosts(value: string): HostPort[] {
  if (/^unix:/i.test(value)) return [];
  const url = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(value);
  if (url) {
    // nginx variables after the host (`/http-bind?prefix=$prefix&$args`) leave it known.
    const authority = /^[^/?#]*/.exec(url[2] ?? '')?.[0] ?? '';
    if (authority.includes('$')) return [];
    const p = parseUrl(url[1] ?? '', authority);
    return p.unresolved ? [] : p.hosts;
  }
  if (value.includes('$')) return [];
  const hp = parseHostPort(value);
  return hp && hp.host !== '' ? [hp] : [];
}

function nginxRoutes(text: string): Route[] {
  // Comments blanked (a `#` outside quotes to the end of the line), offsets kept.
  const code = text.replace(
    /(^|[^\S\n]|;|\{|\})#[^\n]*/g,
    (m, lead: string) => lead + ' '.repeat(m.length - lead.length),
  );
  const idx = new LineIndex(text);
  const span = (at: number): Span => ({ start: idx.lineAt(at), end: idx.lineAt(at) });
  const upstreams = new Map<string, HostPort[]>();
  for (const u of code.matchAll(/\bupstream\s+([\w.-]+)\s*\{([^}]*)\}/g)) {
    const servers: HostPort[] = [];
    for (const s of (u[2] ?? '').matchAll(/\bserver\s+([^\s;]+)/g)) {
      const hp = passHosts(s[1] ?? '');
      servers.push(...hp);
    }
    upstreams.set((u[1] ?? '').toLowerCase(), servers);
  }
  const sets = new Map<string, string>();
  for (const s of code.matchAll(/\bset\s+\$(\w+)\s+["']?([^"';\s]+)["']?\s*;/g))
    sets.set(s[1] ?? '', s[2] ?? '');
  const routes: Route[] = [];
  for (const m of code.matchAll(NGINX_PASS)) {
    const directive = m[1] ?? '';
    // `proxy_pass http://$backend;` with `set $backend api:8080;`.
    const value = (m[2] ?? '')
      .replace(/^(["'])(.*)\1$/, '$2')
      .replace(/\$(\w+)/g, (all, n: string) => sets.get(n) ?? all);
    for (const hp of passHosts(value)) {
      const servers = upstreams.get(hp.host);
      if (servers) {
        for (const s of servers)
          routes.push({ span: span(m.index ?? 0), directive, target: s, upstream: hp.host });
      } else routes.push({ span: span(m.index ?? 0), directive, target: hp });
    }
  }
  return routes;
}

function envoyRoutes(file: SourceFile): { routes: Route[]; errors: string[] } {
  const routes: Route[] = [];
  const y = parseYamlDocuments(file);
  for (const doc of y.docs) {
    const sr = isRecord(doc.value) ? doc.value.static_resources : null;
    const clusters = isRecord(sr) ? asArray(sr.clusters) : [];
    clusters.forEach((c, i) => {
      if (!isRecord(c)) return;
      const base = ['static_resources', 'clusters', i];
      const la = isRecord(c.load_assignment) ? c.load_assignment : null;
      const found: Array<[unknown, (string | number)[]]> = [];
      asArray(la?.endpoints).forEach((ep, j) => {
        asArray(isRecord(ep) ? ep.lb_endpoints : null).forEach((lb, k) => {
          const endpoint = isRecord(lb) && isRecord(lb.endpoint) ? lb.endpoint : null;
          const address = isRecord(endpoint?.address) ? endpoint.address : null;
          found.push([
            address?.socket_address,
            [...base, 'load_assignment', 'endpoints', j, 'lb_endpoints', k],
          ]);
        });
      });
      // The v2 form: `hosts: [{ socket_address: ... }]`.
      asArray(c.hosts).forEach((h, j) => {
        found.push([isRecord(h) ? h.socket_address : null, [...base, 'hosts', j]]);
      });
      for (const [sa, path] of found) {
        if (!isRecord(sa)) continue;
        const host = asString(sa.address);
        const port = typeof sa.port_value === 'number' ? sa.port_value : Number(sa.port_value);
        const hp = host ? parseHostPort(host) : null;
        if (!hp || hp.host === '') continue;
        routes.push({
          span: doc.span(path),
          directive: 'cluster',
          target: { host: hp.host, port: Number.isFinite(port) ? port : null },
          upstream: asString(c.name) ?? undefined,
        });
      }
    });
    // Routes through a Dapr sidecar name the app they invoke (analysis/cloud/envoy-dapr.ts).
    for (const d of envoyDaprRoutes(doc.value, (p) => doc.span(p)))
      routes.push({
        span: d.span,
        directive: 'dapr-invoke',
        target: { host: d.appId, port: null },
        upstream: d.cluster ?? undefined,
        object: entityKey('service', d.appId),
      });
  }
  return { routes, errors: y.errors };
}

// ---------------------------------------------------------------------------------------------
// Traefik labels on compose services

/** The Traefik service of a compose project routes to every service its labels expose. */
function traefikEvidence(compose: SourceFile[]): Evidence[] {
  const out: Evidence[] = [];
  for (const file of compose) {
    for (const doc of parseYamlDocuments(file).docs) {
      const services = isRecord(doc.value) ? doc.value.services : null;
      if (!isRecord(services)) continue;
      const routers = Object.entries(services).filter(([, svc]) => {
        const image = isRecord(svc) ? asString(svc.image) : null;
        const repo = image ? parseImageRef(image)?.repo : null;
        return (repo?.split('/').pop() ?? '').toLowerCase() === 'traefik';
      });
      if (routers.length !== 1) continue;
      const [proxy] = routers[0]!;
      for (const [name, svc] of Object.entries(services)) {
        if (name === proxy || !isRecord(svc)) continue;
        const l = composeLabels(svc.labels);
        if (l.get('traefik.enable')?.toLowerCase() === 'false') continue;
        const routed = [...l.keys()].filter((k) =>
          /^traefik\.(http|tcp|udp)\.(routers|services)\./.test(k),
        );
        if (routed.length === 0 && l.get('traefik.enable')?.toLowerCase() !== 'true') continue;
        const portKey = routed.find((k) => /\.loadbalancer\.server\.port$/.test(k));
        const ruleKey = routed.find((k) => /\.routers\.[^.]+\.rule$/.test(k));
        out.push(
          evidence(file, doc.span(['services', name, 'labels']), {
            source: 'cloud',
            provider: 'traefik',
            kind: 'proxy-route',
            subject: entityKey('service', proxy),
            relationship: 'connects_to',
            object: entityKey('service', name),
            summary: `traefik service ${proxy} routes to ${name} (labels of ${name})`,
            attributes: {
              proxy: 'traefik',
              port: portKey ? Number(l.get(portKey)) || null : null,
              rule: ruleKey ? (l.get(ruleKey) ?? null) : null,
            },
          }),
        );
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

export interface ProxyContext {
  compose: SourceFile[];
  dockerfiles: SourceFile[];
  dotenv: SourceFile[];
  /** Containers' entrypoint scripts (the defaults they export). */
  entrypoints?: SourceFile[];
  /** Committed `.env` templates (`env.example`): mount paths of a project with no `.env`. */
  envTemplates?: SourceFile[];
  /** Configuration templates an image renders from its environment (image-templates.ts). */
  templates?: SourceFile[];
  /** Consul Template files (`*.ctmpl`, analysis/cloud/consul-template.ts). */
  consulTemplates?: SourceFile[];
}

/** Routes of every proxy config file, and Traefik and label-discovery routes of compose projects. */
export function analyzeProxies(files: SourceFile[], context: ProxyContext): AnalyzerOutput {
  const evidenceOut: Evidence[] = [
    ...traefikEvidence(context.compose),
    ...labelProxyEvidence(context.compose),
  ];
  const gaps: AnalyzerGap[] = [];
  const { list, names, projects } = candidates(
    context.compose,
    context.dockerfiles,
    context.dotenv,
    context.entrypoints,
    context.envTemplates,
  );
  for (const file of files) {
    const kind = proxyKindOf(file);
    if (!kind) continue;
    const owner = ownerOf(file.path, list);
    if (!owner) {
      gaps.push({
        path: file.path,
        reason: 'proxy_owner_unknown',
        message: `${kind} configuration that no compose service mounts or builds and no Dockerfile folder holds: its routes are not attributed`,
      });
      continue;
    }
    let read = file;
    let used = new Set<string>();
    let defaulted = new Set<string>();
    if (kind === 'caddy') {
      // Caddy fills `{$VAR}`, `{$VAR:default}` and `{env.VAR}` from the container's environment.
      const filled = fillCaddyPlaceholders(file.text, owner.env);
      read = { path: file.path, text: filled.text };
      used = filled.used;
      defaulted = filled.defaulted;
    } else if (isImageTemplate(file.text)) {
      const rendered = renderTemplate(file.text, owner.env);
      read = { path: file.path, text: rendered.text };
      used = rendered.used;
      defaulted = rendered.defaulted;
    }
    if (kind !== 'caddy' && isTemplate(file.path)) {
      const filled = fill(read.text, owner.env);
      read = { path: file.path, text: filled.text };
      for (const n of filled.used) used.add(n);
    }
    const lines = file.text.split('\n');
    let routes: Route[];
    if (kind === 'nginx') routes = nginxRoutes(read.text);
    else if (kind === 'caddy')
      routes = caddyRoutes(read.text).map((r) => ({
        span: { start: r.line, end: r.line },
        directive: r.directive,
        target: r.target,
      }));
    else {
      const r = envoyRoutes(read);
      routes = r.routes;
      for (const message of r.errors)
        gaps.push({ path: file.path, reason: 'yaml_parse_error', message });
    }
    // Go template locals (`{{ $X := .Env.X | default "v" }}`): the variable each one reads.
    const locals = templateLocals(file.text);
    for (const r of routes) {
      const named =
        names.get(r.target.host.toLowerCase()) ??
        replicaService(r.target.host, projects) ??
        undefined;
      const object = r.object ?? (named ? entityKey('service', named) : targetKeyOf(r.target.host));
      if (object === null || object === owner.key) continue;
      const label = r.target.port === null ? r.target.host : `${r.target.host}:${r.target.port}`;
      // The variables filled on the route's own lines (the file as written).
      const written = lines.slice(r.span.start - 1, r.span.end).join('\n');
      const filledFrom = [
        ...[...written.matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((m) => locals.get(m[1]!) ?? m[1]!),
        ...[...written.matchAll(/\.Env\.([A-Za-z_]\w*)/g)].map((m) => m[1]!),
        ...[...written.matchAll(/\{env\.([A-Za-z_]\w*)\}/g)].map((m) => m[1]!),
      ].filter((n) => used.has(n));
      // A template's default names the upstream only when it is a service the project declares.
      const byDefault = filledFrom.filter((n) => defaulted.has(n));
      if (byDefault.length > 0 && !named && !r.object) continue;
      // Cited in the file as written (filled values are not in the repository's text).
      evidenceOut.push(
        evidence(file, r.span, {
          source: 'cloud',
          provider: kind,
          kind: 'proxy-route',
          subject: owner.key,
          relationship: 'connects_to',
          object,
          summary:
            r.directive === 'dapr-invoke'
              ? `${kind} of ${owner.key} routes to Dapr app ${r.target.host} through the sidecar${r.upstream ? ` (cluster ${r.upstream})` : ''}`
              : `${kind} of ${owner.key} routes to ${label} (${r.directive})`,
          attributes: {
            proxy: kind,
            directive: r.directive,
            host: r.target.host,
            port: r.target.port,
            ...(r.upstream ? { upstream: r.upstream } : {}),
            owner: owner.how,
            ...(owner.link === 'image-name' || owner.link === 'env-template'
              ? { owner_link: owner.link }
              : {}),
            ...(filledFrom.length > 0 ? { filled_from: [...new Set(filledFrom)].sort() } : {}),
            ...(byDefault.length > 0 ? { template_default: [...new Set(byDefault)].sort() } : {}),
          },
        }),
      );
    }
  }
  for (const file of context.templates ?? [])
    evidenceOut.push(...templateDefaultEvidence(file, ownerOf(file.path, list), names));
  if ((context.consulTemplates ?? []).length > 0)
    evidenceOut.push(...consulCatalogEvidence(context, list));
  return { evidence: evidenceOut, gaps };
}

/**
 * The Consul Template files that proxy to every service of a Consul catalog, read for the
 * service that owns each file and runs `consul-template` on it (analysis/cloud/consul-template.ts).
 */
function consulCatalogEvidence(context: ProxyContext, list: Candidate[]): Evidence[] {
  const out: Evidence[] = [];
  // The invocations by the service running them (a map: no scan per template file).
  const byRunner = new Map<string, Invocation[]>();
  for (const i of consulTemplateInvocations(context.dockerfiles, context.compose)) {
    const runner = i.service ?? (i.dockerfile ? (ownerOf(i.dockerfile, list)?.key ?? null) : null);
    if (runner === null) continue;
    const held = byRunner.get(runner);
    if (held) held.push(i);
    else byRunner.set(runner, [i]);
  }
  for (const file of context.consulTemplates ?? []) {
    const ranges = catalogRanges(file.text);
    if (ranges.length === 0) continue;
    const owner = ownerOf(file.path, list);
    if (!owner) continue;
    const name = basename(file.path);
    const runs = (byRunner.get(owner.key) ?? []).filter((i) => i.sources.includes(name));
    if (runs.length === 0) continue;
    const hosts = new Set(runs.map((r) => r.host));
    let host = hosts.size === 1 ? [...hosts][0]! : null;
    if (hosts.size === 1 && host === null) {
      const addr = (owner.env.get('CONSUL_HTTP_ADDR') ?? '').replace(/^https?:\/\//i, '');
      const hp = addr ? parseHostPort(addr) : null;
      host = hp && hp.host !== '' ? hp.host.toLowerCase() : null;
    }
    if (host === null) continue;
    for (const r of ranges)
      out.push(
        evidence(
          file,
          { start: r.start, end: r.end },
          {
            source: 'cloud',
            provider: 'consul-template',
            kind: 'registry-catalog-route',
            subject: owner.key,
            summary: `consul-template in ${owner.key} renders a ${r.directive} for every service registered in the Consul at ${host}`,
            attributes: {
              registry: 'consul',
              registry_host: host,
              proxy: 'consul-template',
              directive: r.directive,
              owner: owner.how,
              ...(owner.link === 'image-name' || owner.link === 'env-template'
                ? { owner_link: owner.link }
                : {}),
            },
          },
        ),
      );
  }
  return out;
}

/** `{{ $X := .Env.NAME ... }}` -> X -> NAME. */
function templateLocals(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/\{\{-?\s*\$([A-Za-z_]\w*)\s*:?=[^}\n]*?\.Env\.([A-Za-z_]\w*)/g))
    out.set(m[1]!, m[2]!);
  return out;
}

/**
 * A configuration template the image renders at start (not a proxy file): each literal default
 * naming a service the project's compose files declare (by name, hostname or network alias) is
 * an address the running service uses when its environment does not set the variable; one the
 * environment sets is the compose analyzer's to read. The service is the one that mounts or
 * builds the file, or runs the image that copies it in (a Dockerfile's folder alone is no
 * running service). Weaker than a value set explicitly (`template_default`,
 * analysis/reconcile-confidence.ts).
 */
function templateDefaultEvidence(
  file: SourceFile,
  owner: Owner | null,
  names: Map<string, string>,
): Evidence[] {
  if (!owner || owner.how === 'dockerfile-folder') return [];
  const out: Evidence[] = [];
  const seen = new Set<string>();
  for (const d of templateDefaults(file.text)) {
    if (owner.env.has(d.variable)) continue;
    // A short word (`default "web"`) is an address only in a variable named for one.
    if (
      !/[.:/]/.test(d.value) &&
      !/(HOST|HOSTNAME|SERVER|URL|URI|ADDR|ADDRESS|ENDPOINT)S?$/i.test(d.variable)
    )
      continue;
    for (const hp of passHosts(d.value)) {
      const named = names.get(hp.host.toLowerCase());
      if (!named) continue;
      const object = entityKey('service', named);
      if (object === owner.key || seen.has(`${object}\u0000${d.variable}`)) continue;
      seen.add(`${object}\u0000${d.variable}`);
      out.push(
        evidence(
          file,
          { start: d.line, end: d.line },
          {
            source: 'cloud',
            provider: 'image-template',
            kind: 'template-default-reference',
            subject: owner.key,
            relationship: 'connects_to',
            object,
            summary: `${owner.key} renders ${file.path} with ${d.variable} defaulting to ${d.value} -> service ${named}`,
            attributes: {
              variable: d.variable,
              value: d.value,
              host: hp.host,
              port: hp.port,
              template_default: [d.variable],
              owner: owner.how,
              ...(owner.link === 'image-name' || owner.link === 'env-template'
                ? { owner_link: owner.link }
                : {}),
            },
          },
        ),
      );
    }
  }
  return out;
}
