/**
 * Which Eureka a Spring Cloud Netflix application registers in, and the Zuul proxies that route
 * to every service of that Eureka (issue 23, session 15; docs/decisions.md).
 *
 * - A unit that declares the Eureka client starter (`spring-cloud-starter-netflix-eureka-client`,
 *   or the older `spring-cloud-starter-eureka`) registers itself in the Eureka server of its
 *   `eureka.client.serviceUrl.defaultZone` (Spring Cloud Netflix's default:
 *   `http://localhost:8761/eureka/`), unless its own Spring files switch it off
 *   (`eureka.client.enabled` or `eureka.client.register-with-eureka` false). Evidence
 *   `registry-register`, attributes `registry: 'eureka'`, `registry_host` (each host of the
 *   comma-separated URL list, lower case, a `${VAR:default}` placeholder read as its default).
 * - A Zuul proxy unit (the Zuul starter `spring-cloud-starter-netflix-zuul` /
 *   `spring-cloud-starter-zuul`, and `@EnableZuulProxy` in its code) that is a Eureka client
 *   (`eureka.client.enabled` and `eureka.client.fetch-registry` not false) routes
 *   `/<serviceId>/**` to every service of its Eureka, unless `zuul.ignored-services` is `'*'`
 *   (Spring Cloud Netflix, "Router and Filter: Zuul"). Evidence `registry-catalog-route` (no
 *   object), cited at the annotation; analysis/reconcile-registry-catalog.ts joins it with the
 *   `registry-register` records of the same Eureka host. Explicit `zuul.routes` are read as
 *   before (analysis/code/gateways.ts).
 */
import type { Evidence, SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { isTestPath, languageOf, lex, lexStyleOf } from './common';
import { declaredDependencies } from './discovery';
import type { CodeModel, Unit } from './model';
import { ownSpringFiles, plainName, springSetting } from './spring-cloud';

const EUREKA_CLIENT = /(^|:)spring-cloud-starter-(netflix-)?eureka(-client)?$/;
const ZUUL = /(^|:)spring-cloud-starter-(netflix-)?zuul$/;
const DEFAULT_ZONE = [
  'eureka.client.serviceUrl.defaultZone',
  'eureka.client.service-url.defaultZone',
  'eureka.client.serviceurl.defaultZone',
];
const CLIENT_OFF = ['eureka.client.enabled'];
const REGISTER_OFF = [
  'eureka.client.register-with-eureka',
  'eureka.client.registerWithEureka',
  'eureka.client.register_with_eureka',
];
const FETCH_OFF = [
  'eureka.client.fetch-registry',
  'eureka.client.fetchRegistry',
  'eureka.client.fetch_registry',
];
const IGNORED = ['zuul.ignored-services', 'zuul.ignoredServices', 'zuul.ignored_services'];
/** Eureka server URLs read from one defaultZone (a list of peers is a handful). */
const MAX_ZONE_URLS = 8;

/**
 * The default profile's Spring files of the unit (a profile's file may be unused): the files a
 * config server serves it first (`{name}.yml`, then the shared `application.yml`; remote
 * properties override local ones), then its own `bootstrap.*` and `application.*`.
 */
function defaultSpringFiles(model: CodeModel, unit: Unit, name: string | null): SourceFile[] {
  const files = model.filesByUnit.get(unit.key) ?? [];
  const stem = (f: SourceFile) =>
    basename(f.path)
      .replace(/\.(ya?ml|properties)$/i, '')
      .toLowerCase();
  const served = files.filter((f) => model.servedConfig?.has(f.path));
  const own = ownSpringFiles(files).filter(
    (f) =>
      !model.servedConfig?.has(f.path) && /^(application|bootstrap)\.\w+$/i.test(basename(f.path)),
  );
  return [
    ...served.filter((f) => name !== null && stem(f) === name),
    ...served.filter((f) => stem(f) === 'application'),
    ...own,
  ];
}

function firstSetting(files: SourceFile[], keys: string[]) {
  for (const f of files)
    for (const k of keys) {
      const s = springSetting(f, k);
      if (s) return s;
    }
  return null;
}

const isFalse = (files: SourceFile[], keys: string[]) =>
  firstSetting(files, keys)
    ?.value.trim()
    .replace(/^(['"])(.*)\1$/, '$2')
    .toLowerCase() === 'false';

/**
 * The Eureka hosts of a defaultZone value: `http://eureka:8761/eureka/,http://peer:8762/eureka/`
 * -> `eureka`, `peer`; a whole-value `${VAR:default}` read as its default.
 */
export function eurekaHosts(value: string): string[] {
  let v = value.trim().replace(/^(['"])(.*)\1$/, '$2');
  const placeholder = /^\$\{[A-Za-z_][\w.-]{0,200}:(.*)\}$/.exec(v);
  if (placeholder) v = placeholder[1] ?? '';
  const out: string[] = [];
  for (const url of v.split(',').slice(0, MAX_ZONE_URLS)) {
    const m =
      /^\s*https?:\/\/(?:[^@/\s]{0,200}@)?([A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))(?::\d+)?(?:\/|\s*$)/i.exec(
        url,
      );
    const host = m?.[1]?.toLowerCase();
    if (host && !out.includes(host)) out.push(host);
  }
  return out;
}

/** `zuul.ignored-services: customer, cat*` -> `customer`, `cat*` (lower case, at most 64). */
function ignoredPatterns(value: string): string[] {
  return value
    .replace(/^(['"])(.*)\1$/, '$2')
    .split(',')
    .slice(0, 64)
    .map((p) =>
      p
        .trim()
        .replace(/^(['"])(.*)\1$/, '$2')
        .toLowerCase(),
    )
    .filter((p) => p !== '');
}

/** The unit's Eureka hosts with where they are written (the default host at its dependency). */
function zone(
  model: CodeModel,
  unit: Unit,
  files: SourceFile[],
  dep: { path: string; line: number; endLine: number },
) {
  const s = firstSetting(files, DEFAULT_ZONE);
  if (s)
    return {
      hosts: eurekaHosts(s.value),
      file: s.file,
      start: s.line,
      end: s.line,
      how: 'eureka.client.serviceUrl.defaultZone',
    };
  const file = model.fileByPath.get(dep.path);
  return file
    ? { hosts: ['localhost'], file, start: dep.line, end: dep.endLine, how: 'default zone' }
    : null;
}

/** The `@EnableZuulProxy` annotation of the unit's code, or null. */
function zuulProxyAnnotation(
  model: CodeModel,
  unit: Unit,
): { file: SourceFile; line: number } | null {
  for (const file of model.filesByUnit.get(unit.key) ?? []) {
    if (isTestPath(file.path) || !file.text.includes('@EnableZuulProxy')) continue;
    const lang = languageOf(file.path);
    if (!lang) continue;
    const { code } = lex(file.text, lexStyleOf(lang));
    const m = /@EnableZuulProxy\b/.exec(code);
    if (m) return { file, line: new LineIndex(file.text).lineAt(m.index) };
  }
  return null;
}

/** registry-register records of the Eureka clients and registry-catalog-route of Zuul proxies. */
export function eurekaRegistrationEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  for (const unit of model.units) {
    const dep = declaredDependencies(unit, EUREKA_CLIENT).find((d) => !d.dev);
    if (!dep) continue;
    const own = firstSetting(ownSpringFiles(model.filesByUnit.get(unit.key) ?? []), [
      'spring.application.name',
    ]);
    const name = own ? plainName(own.value) : null;
    const files = defaultSpringFiles(model, unit, name);
    if (isFalse(files, CLIENT_OFF)) continue;
    const at = zone(model, unit, files, dep);
    if (!at) continue;
    if (!isFalse(files, REGISTER_OFF))
      for (const host of at.hosts)
        out.push(
          evidence(
            at.file,
            { start: at.start, end: at.end },
            {
              source: 'code',
              provider: 'spring-cloud-netflix',
              kind: 'registry-register',
              subject: unit.key,
              summary: `${unit.name} registers itself in the Eureka server at ${host} (${dep.name.split(':').pop()}, ${at.how})`,
              attributes: {
                registry: 'eureka',
                registry_host: host,
                package: dep.name,
                ...(name ? { service_id: name } : {}),
              },
            },
          ),
        );
    const zuul = declaredDependencies(unit, ZUUL).find((d) => !d.dev);
    if (!zuul || isFalse(files, FETCH_OFF)) continue;
    const ignored = firstSetting(files, IGNORED);
    if (ignored && /^\s*(['"]?)\*\1\s*$/.test(ignored.value)) continue;
    const proxy = zuulProxyAnnotation(model, unit);
    if (!proxy) continue;
    for (const host of at.hosts)
      out.push(
        evidence(
          proxy.file,
          { start: proxy.line, end: proxy.line },
          {
            source: 'code',
            provider: 'spring-cloud-netflix',
            kind: 'registry-catalog-route',
            subject: unit.key,
            summary: `the Zuul proxy of ${unit.name} (@EnableZuulProxy) routes /<serviceId>/** to every service registered in the Eureka server at ${host}`,
            attributes: {
              registry: 'eureka',
              registry_host: host,
              proxy: 'zuul',
              package: zuul.name,
              ...(ignored ? { ignored_services: ignoredPatterns(ignored.value) } : {}),
            },
          },
        ),
      );
  }
  return out;
}
