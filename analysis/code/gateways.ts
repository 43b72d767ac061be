/**
 * Gateways configured in a unit's application settings route to their upstreams, so the unit
 * connects to each: YARP (`ReverseProxy:Clusters:*:Destinations:*:Address` in `appsettings*.json`)
 * and Spring Cloud Gateway (`spring.cloud.gateway[.server.webflux|.mvc|.server.webmvc].routes[].uri`
 * in `application*|bootstrap*` YAML or properties; `lb://name` is the service registered as
 * `name`). Targets read through analysis/shared/urls.ts, so service-discovery forms
 * (`https+http://catalog`) name the service.
 */
import type { Evidence, SourceFile } from '../evidence';
import { evidence, type Span } from '../shared/evidence';
import { basename } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { isRecord } from '../shared/values';
import { parseYamlDocuments, type PathItem } from '../shared/yaml';
import { parseUrl, targetKeyOf, type HostPort } from '../shared/urls';
import { isTestPath } from './common';
import type { CodeModel, Unit } from './model';

interface Target {
  span: Span;
  route: string;
  value: string;
  /** The settings key a `${key}` placeholder URI was read from. */
  setting?: string;
}

/**
 * A route URI that is one placeholder (`uri: ${orders.url}`, `${ORDERS_URL:http://orders}`)
 * resolved from the same file's settings (`orders: { url: http://orders:8080 }`), else its
 * default; anything else is returned as written.
 */
function resolvePlaceholder(
  value: string,
  lookup: (key: string) => unknown,
): { value: string; setting?: string } {
  const m = /^\$\{([\w.-]+)(?::([^}]*))?\}$/.exec(value.trim());
  if (!m) return { value };
  const key = m[1] ?? '';
  const found = lookup(key);
  if (typeof found === 'string') return { value: found, setting: key };
  return m[2] !== undefined ? { value: m[2], setting: key } : { value };
}

/** A gateway target URI: `lb://orders`, `http://orders:8080/x`, `https+http://orders`. */
function targetHost(value: string): HostPort | null {
  const m = /^(?:lb:)?([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(value.trim());
  if (!m) return null;
  const scheme = (m[1] ?? '').toLowerCase() === 'lb' ? 'http' : (m[1] ?? '');
  const p = parseUrl(scheme, m[2] ?? '');
  return p.unresolved ? null : (p.hosts[0] ?? null);
}

/** `a.b.c` through nested maps, allowing keys written dotted at any level (`spring.cloud: ...`). */
function dig(value: unknown, parts: string[], path: PathItem[] = []): [unknown, PathItem[]] | null {
  if (parts.length === 0) return [value, path];
  if (!isRecord(value)) return null;
  for (let i = parts.length; i >= 1; i--) {
    const key = parts.slice(0, i).join('.');
    if (key in value) {
      const found = dig(value[key], parts.slice(i), [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

const SPRING_ROUTES = [
  'spring.cloud.gateway.routes',
  'spring.cloud.gateway.server.webflux.routes',
  'spring.cloud.gateway.mvc.routes',
  'spring.cloud.gateway.server.webmvc.routes',
];

function springYaml(file: SourceFile): Target[] {
  const out: Target[] = [];
  for (const doc of parseYamlDocuments(file).docs) {
    for (const name of SPRING_ROUTES) {
      const found = dig(doc.value, name.split('.'));
      if (!found || !Array.isArray(found[0])) continue;
      found[0].forEach((route, i) => {
        if (!isRecord(route) || typeof route.uri !== 'string') return;
        const resolved = resolvePlaceholder(
          route.uri,
          (key) => dig(doc.value, key.split('.'))?.[0],
        );
        out.push({
          span: doc.span([...found[1], i, 'uri']),
          route: typeof route.id === 'string' ? route.id : String(i),
          ...resolved,
        });
      });
    }
    // Netflix Zuul: `zuul.routes.<name>.serviceId` (a registry id) or `.url`.
    const zuul = dig(doc.value, ['zuul', 'routes']);
    if (zuul && isRecord(zuul[0])) {
      for (const [name, route] of Object.entries(zuul[0])) {
        if (!isRecord(route)) continue;
        const id = typeof route.serviceId === 'string' ? route.serviceId : null;
        const url = typeof route.url === 'string' ? route.url : null;
        const value = id !== null ? `lb://${id}` : url;
        if (value === null) continue;
        out.push({
          span: doc.span([...zuul[1], name, id !== null ? 'serviceId' : 'url']),
          route: name,
          value,
        });
      }
    }
  }
  return out;
}

function springProperties(file: SourceFile): Target[] {
  const out: Target[] = [];
  file.text.split('\n').forEach((line, i) => {
    const m =
      /^\s*spring\.cloud\.gateway(?:\.server\.webflux|\.mvc|\.server\.webmvc)?\.routes\[(\d+)\]\.uri\s*[=:]\s*(\S+)\s*$/.exec(
        line,
      );
    if (m) out.push({ span: { start: i + 1, end: i + 1 }, route: m[1] ?? '', value: m[2] ?? '' });
    const zuul = /^\s*zuul\.routes\.([\w-]+)\.(serviceId|url)\s*[=:]\s*(\S+)\s*$/.exec(line);
    if (zuul) {
      const value = zuul[2] === 'serviceId' ? `lb://${zuul[3] ?? ''}` : (zuul[3] ?? '');
      out.push({ span: { start: i + 1, end: i + 1 }, route: zuul[1] ?? '', value });
    }
  });
  return out;
}

function yarp(file: SourceFile): Target[] {
  let root: unknown;
  try {
    // appsettings files allow `//` comments on their own lines.
    root = JSON.parse(file.text.replace(/^\s*\/\/.*$/gm, ''));
  } catch {
    return [];
  }
  const clusters = dig(root, ['ReverseProxy', 'Clusters'])?.[0];
  if (!isRecord(clusters)) return [];
  const idx = new LineIndex(file.text);
  const out: Target[] = [];
  for (const [cluster, spec] of Object.entries(clusters)) {
    const destinations = isRecord(spec) ? spec.Destinations : null;
    if (!isRecord(destinations)) continue;
    for (const dest of Object.values(destinations)) {
      const address = isRecord(dest) ? dest.Address : null;
      if (typeof address !== 'string') continue;
      const at = file.text.search(
        new RegExp(
          `"Address"\\s*:\\s*${JSON.stringify(address).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
        ),
      );
      const line = at < 0 ? 1 : idx.lineAt(at);
      out.push({ span: { start: line, end: line }, route: cluster, value: address });
    }
  }
  return out;
}

function gatewayOf(
  path: string,
  served: boolean,
): { provider: string; read: (f: SourceFile) => Target[] } | null {
  // A file a config server serves (`shared/gateway.yml`) is the unit's application settings.
  const base = served ? basename(path).replace(/^[^.]*/, 'application') : basename(path);
  if (/^appsettings([-.][\w.-]+)?\.json$/i.test(base)) return { provider: 'yarp', read: yarp };
  if (/^(application|bootstrap)([-.][\w.-]+)?\.ya?ml$/i.test(base))
    return { provider: 'spring-cloud-gateway', read: springYaml };
  if (/^(application|bootstrap)([-.][\w.-]+)?\.properties$/i.test(base))
    return { provider: 'spring-cloud-gateway', read: springProperties };
  return null;
}

function unitRoutes(unit: Unit, files: SourceFile[], served?: ReadonlySet<string>): Evidence[] {
  const out: Evidence[] = [];
  for (const file of files) {
    const gateway = gatewayOf(file.path, served?.has(file.path) ?? false);
    if (!gateway || !/ReverseProxy|spring\.cloud\.gateway|gateway|zuul/.test(file.text)) continue;
    for (const t of gateway.read(file)) {
      const hp = targetHost(t.value);
      const object = hp ? targetKeyOf(hp.host) : null;
      if (!hp || object === null || object === unit.key) continue;
      const label = hp.port === null ? hp.host : `${hp.host}:${hp.port}`;
      out.push(
        evidence(file, t.span, {
          source: 'code',
          provider: gateway.provider,
          kind: 'proxy-route',
          subject: unit.key,
          relationship: 'connects_to',
          object,
          summary: `${gateway.provider} of ${unit.name} routes ${t.route} to ${label}`,
          attributes: {
            proxy: gateway.provider,
            route: t.route,
            host: hp.host,
            port: hp.port,
            ...(t.setting !== undefined ? { setting: t.setting } : {}),
            in_test: isTestPath(file.path),
          },
        }),
      );
    }
  }
  return out;
}

/** proxy-route evidence of every unit whose settings configure a gateway. */
export function gatewayEvidence(model: CodeModel): Evidence[] {
  return model.units.flatMap((u) =>
    unitRoutes(u, model.filesByUnit.get(u.key) ?? [], model.servedConfig),
  );
}
