/**
 * Reverse proxies that discover their upstreams from the Docker engine (docs/decisions.md,
 * "Label-routed proxies"): the proxy container watches the docker socket and routes to every
 * container of the project that carries its labels or environment.
 *
 * - virtual-host proxies (caddy-gen, docker-gen, nginx-proxy): a service with a `virtual.host`
 *   label or a `VIRTUAL_HOST` environment variable (`virtual.port` / `VIRTUAL_PORT` its port);
 * - caddy-docker-proxy: a service with a `caddy` / `caddy_N` label whose `reverse_proxy` is
 *   `{{upstreams PORT}}` (the labelled container itself), or names another service of the project.
 *
 * The proxy is the compose service running such an image; without one, the one service of the
 * project that mounts the docker socket and whose image or name says it proxies (`caddy`,
 * `nginx`, `proxy`). Several candidates: which one routes is unknown, nothing is drawn. The
 * project is the compose files layered onto each other: a file writing a service with neither
 * `image` nor `build` adds to the service another file declares (`docker compose -f a -f b`), so
 * the labels an overlay adds to a service of the main file count.
 */
import type { Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence, type Span } from '../shared/evidence';
import { parseImageRef } from '../shared/images';
import { asArray, asString, isRecord } from '../shared/values';
import { parseYamlDocuments, type PathItem, type YamlDoc } from '../shared/yaml';

type Family = 'virtual-host' | 'caddy-docker-proxy';

/** Images of label/env-discovery proxies, by the last segment of the repository. */
const PROXY_IMAGES: [RegExp, Family][] = [
  [/^(caddy-gen|docker-gen|nginx-proxy)$/, 'virtual-host'],
  [/^caddy-docker-proxy$/, 'caddy-docker-proxy'],
];
/** A socket-mounting service whose image or name says it proxies. */
const PROXY_HINT = /caddy|nginx|proxy/;
const DOCKER_SOCKET = /(^|\/)docker\.sock$/;

/** Compose `labels` as a map (the mapping form, or `key=value` list items). */
export function composeLabels(value: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (isRecord(value)) for (const [k, v] of Object.entries(value)) out.set(k, String(v));
  else
    for (const item of asArray(value)) {
      const s = asString(item);
      if (!s) continue;
      const eq = s.indexOf('=');
      out.set(eq < 0 ? s : s.slice(0, eq), eq < 0 ? '' : s.slice(eq + 1));
    }
  return out;
}

/** Compose `environment` as name -> [value, path below the service]. */
function environment(value: unknown): Map<string, [string, PathItem[]]> {
  const out = new Map<string, [string, PathItem[]]>();
  if (isRecord(value)) {
    for (const [k, v] of Object.entries(value))
      out.set(k, [v === null || v === undefined ? '' : String(v), ['environment', k]]);
  } else
    asArray(value).forEach((item, i) => {
      const s = asString(item);
      if (!s) return;
      const eq = s.indexOf('=');
      out.set(eq < 0 ? s : s.slice(0, eq), [eq < 0 ? '' : s.slice(eq + 1), ['environment', i]]);
    });
  return out;
}

/** One service as one compose file writes it. */
interface Written {
  file: SourceFile;
  doc: YamlDoc;
  name: string;
  svc: Record<string, unknown>;
}

const declares = (w: Written) => w.svc.image !== undefined || w.svc.build !== undefined;

/** Compose files grouped into projects: a file adding to a service another file declares joins it. */
function projects(compose: SourceFile[]): Written[][] {
  const byFile: Written[][] = [];
  for (const file of compose)
    for (const doc of parseYamlDocuments(file).docs) {
      const services = isRecord(doc.value) ? doc.value.services : null;
      if (!isRecord(services)) continue;
      const list: Written[] = [];
      for (const [name, svc] of Object.entries(services))
        if (isRecord(svc)) list.push({ file, doc, name, svc });
      byFile.push(list);
    }
  const parent = byFile.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  byFile.forEach((a, i) =>
    byFile.forEach((b, j) => {
      if (i === j) return;
      // `a` writes a fragment of a service `b` declares.
      if (a.some((w) => !declares(w) && b.some((x) => x.name === w.name && declares(x))))
        parent[find(i)] = find(j);
    }),
  );
  const groups = new Map<number, Written[]>();
  byFile.forEach((list, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), ...list]));
  return [...groups.values()];
}

function imageLast(svc: Record<string, unknown>): string {
  const image = asString(svc.image);
  const repo = image ? parseImageRef(image)?.repo : null;
  return (repo?.split('/').pop() ?? '').toLowerCase();
}

function mountsDockerSocket(svc: Record<string, unknown>): boolean {
  return asArray(svc.volumes).some((v) => {
    const source = isRecord(v) ? asString(v.source) : (asString(v)?.split(':')[0] ?? null);
    return source !== null && DOCKER_SOCKET.test(source);
  });
}

/** The project's proxy of each family: the one service running its image, else the one hinted socket mounter. */
function proxiesOf(project: Written[]): Map<Family, string> {
  const out = new Map<Family, string>();
  const byImage = new Map<Family, Set<string>>();
  for (const w of project) {
    const last = imageLast(w.svc);
    for (const [re, family] of PROXY_IMAGES)
      if (re.test(last)) byImage.set(family, (byImage.get(family) ?? new Set()).add(w.name));
  }
  const socket = new Set(
    project
      .filter(
        (w) =>
          mountsDockerSocket(w.svc) &&
          PROXY_HINT.test(`${imageLast(w.svc)} ${w.name}`.toLowerCase()),
      )
      .map((w) => w.name),
  );
  for (const family of ['virtual-host', 'caddy-docker-proxy'] as const) {
    const names = byImage.get(family) ?? (byImage.size === 0 ? socket : new Set<string>());
    if (names.size === 1) out.set(family, [...names][0]!);
  }
  return out;
}

interface LabelRoute {
  written: Written;
  path: PathItem[];
  target: string;
  attributes: Record<string, unknown>;
}

function virtualHostRoutes(w: Written): LabelRoute[] {
  const l = composeLabels(w.svc.labels);
  const env = environment(w.svc.environment);
  const host = l.get('virtual.host');
  if (host !== undefined && host.trim() !== '')
    return [
      {
        written: w,
        path: ['labels'],
        target: w.name,
        attributes: { host, port: Number(l.get('virtual.port')) || null, form: 'labels' },
      },
    ];
  const v = env.get('VIRTUAL_HOST');
  if (v && v[0].trim() !== '')
    return [
      {
        written: w,
        path: v[1],
        target: w.name,
        attributes: {
          host: v[0],
          port: Number(env.get('VIRTUAL_PORT')?.[0]) || null,
          form: 'environment',
        },
      },
    ];
  return [];
}

function caddyRoutes(w: Written, names: Set<string>): LabelRoute[] {
  const l = composeLabels(w.svc.labels);
  const out: LabelRoute[] = [];
  for (const [k, v] of l) {
    const m = /^caddy(_\d+)?\.reverse_proxy$/.exec(k);
    if (!m || !l.has(`caddy${m[1] ?? ''}`)) continue;
    const site = l.get(`caddy${m[1] ?? ''}`) ?? null;
    if (/\{\{\s*upstreams\b/.test(v)) {
      const port = /\{\{\s*upstreams\s+(?:\w+\s+)?(\d+)\s*\}\}/.exec(v)?.[1];
      out.push({
        written: w,
        path: ['labels'],
        target: w.name,
        attributes: { host: site, port: port ? Number(port) : null, form: 'labels' },
      });
      continue;
    }
    // `caddy.reverse_proxy: api:8080 web:80`: other services of the project, by name.
    for (const word of v.split(/\s+/)) {
      const hp = /^(?:[a-z]+:\/\/)?([\w.-]+)(?::(\d+))?$/i.exec(word);
      const host = hp?.[1] ?? '';
      if (!names.has(host)) continue;
      out.push({
        written: w,
        path: ['labels'],
        target: host,
        attributes: { host: site, port: hp?.[2] ? Number(hp[2]) : null, form: 'labels' },
      });
    }
  }
  return out;
}

/** Routes of label/env-discovery proxies in every compose project. */
export function labelProxyEvidence(compose: SourceFile[]): Evidence[] {
  const out: Evidence[] = [];
  const seen = new Set<string>();
  for (const project of projects(compose)) {
    const proxies = proxiesOf(project);
    if (proxies.size === 0) continue;
    const names = new Set(project.filter(declares).map((w) => w.name));
    for (const [family, proxy] of proxies) {
      for (const w of project) {
        const routes = family === 'virtual-host' ? virtualHostRoutes(w) : caddyRoutes(w, names);
        for (const r of routes) {
          if (r.target === proxy) continue;
          const span: Span = r.written.doc.span(['services', r.written.name, ...r.path]);
          const id = `${proxy}\u0000${r.target}\u0000${r.written.file.path}\u0000${span.start}`;
          if (seen.has(id)) continue;
          seen.add(id);
          out.push(
            evidence(r.written.file, span, {
              source: 'cloud',
              provider: family,
              kind: 'proxy-route',
              subject: entityKey('service', proxy),
              relationship: 'connects_to',
              object: entityKey('service', r.target),
              summary: `${family} proxy ${proxy} routes to ${r.target} (${String(r.attributes.form)} of ${r.written.name})`,
              attributes: { proxy: family, ...r.attributes },
            }),
          );
        }
      }
    }
  }
  return out;
}
