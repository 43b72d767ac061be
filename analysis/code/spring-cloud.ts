/**
 * Spring Cloud identity and configuration (docs/decisions.md, "Spring Cloud"):
 *
 * - A Spring unit's identity is its `spring.application.name` (Micronaut's
 *   `micronaut.application.name` likewise; in `bootstrap*` first, then
 *   `application*`): the name Eureka registers it under, Feign clients and `lb://` routes call
 *   it by, and the config server serves its files by. When it differs from the unit's name it is
 *   declared an alias (`service-id-declared`).
 * - A Spring Cloud Config server (a unit depending on `spring-cloud-config-server`) with a
 *   native or classpath backend serves the files of its search locations
 *   (`spring.cloud.config.server.native.search-locations`, `classpath:/shared`, `file:./repo`,
 *   `{application}` folders; by default its resources' sub-folders) to its clients:
 *   `{app}.yml` and `{app}-{profile}.yml` to the application named `app`, `application*.yml`
 *   to every client. Those settings are the clients' connections, never the server's own: the
 *   model is rewritten so each served file belongs to the units it configures, and every reader
 *   (connections, gateway routes, service ids) sees it there.
 * - A config client (`spring-cloud-starter-config`) connects to the repository's one config
 *   server unit (`config-client`).
 */
import type { Evidence, SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, isWithin, joinPath } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { isRecord } from '../shared/values';
import { parseYamlDocuments } from '../shared/yaml';
import { clientOfServer, declaredDependencies } from './discovery';
import type { CodeModel, Unit } from './model';

const CONFIG_SERVER = /(^|:)spring-cloud-config-server$/;
const CONFIG_CLIENT = /(^|:)spring-cloud-(starter-config|config-client)$/;
const SPRING_FILE = /^(application|bootstrap)([-.][\w.-]+)?\.(ya?ml|properties)$/i;
const CONFIG_FILE = /\.(ya?ml|properties)$/i;

interface Setting {
  /** The dotted key read. */
  key: string;
  value: string;
  file: SourceFile;
  line: number;
}

/** A dotted key's value in a YAML or properties file (nested or flat YAML keys both read). */
export function springSetting(file: SourceFile, key: string): Setting | null {
  if (/\.properties$/i.test(file.path)) {
    const re = new RegExp(
      `^[ \\t]*${key.replace(/[.-]/g, (c) => `\\${c}`)}[ \\t]*[=:][ \\t]*(.+?)[ \\t]*$`,
      'm',
    );
    const m = re.exec(file.text);
    if (!m) return null;
    return { key, value: m[1] ?? '', file, line: new LineIndex(file.text).lineAt(m.index) };
  }
  const parts = key.split('.');
  for (const doc of parseYamlDocuments(file).docs) {
    // Nested (`spring: application: name:`), flat (`spring.application.name:`) or mixed.
    const walk = (node: unknown, i: number, path: string[]): Setting | null => {
      if (i === parts.length) {
        if (typeof node !== 'string' && typeof node !== 'number') return null;
        return { key, value: String(node), file, line: doc.span(path).start };
      }
      if (!isRecord(node)) return null;
      for (let j = parts.length; j > i; j--) {
        const k = parts.slice(i, j).join('.');
        if (k in node) {
          const hit = walk(node[k], j, [...path, k]);
          if (hit) return hit;
        }
      }
      return null;
    };
    const hit = walk(doc.value, 0, []);
    if (hit) return hit;
  }
  return null;
}

/** `${APP_NAME:orders}` -> `orders`; a plain name as is; anything unresolvable -> null. */
export function plainName(value: string): string | null {
  const v = value.trim().replace(/^(['"])(.*)\1$/, '$2');
  const placeholder = /^\$\{[A-Za-z_][\w.-]*:([^}]*)\}$/.exec(v);
  const name = (placeholder ? (placeholder[1] ?? '') : v).trim().toLowerCase();
  return /^[a-z0-9][a-z0-9._-]{0,62}$/.test(name) ? name : null;
}

/** The unit's own Spring files, `bootstrap*` before `application*`, default profile first. */
export function ownSpringFiles(files: SourceFile[]): SourceFile[] {
  const rank = (f: SourceFile) => {
    const b = basename(f.path).toLowerCase();
    return (b.startsWith('bootstrap') ? 0 : 2) + (/^(application|bootstrap)\./.test(b) ? 0 : 1);
  };
  return files
    .filter((f) => SPRING_FILE.test(basename(f.path)) && !/\/test\//.test(f.path))
    .sort((a, b) => rank(a) - rank(b) || (a.path < b.path ? -1 : 1));
}

/** Each Spring unit's `spring.application.name`, with where it is written. */
function springApplicationNames(model: CodeModel): Map<string, Setting & { name: string }> {
  const out = new Map<string, Setting & { name: string }>();
  for (const unit of model.units) {
    if (!unit.ecosystems.includes('maven')) continue;
    for (const file of ownSpringFiles(model.filesByUnit.get(unit.key) ?? [])) {
      // Micronaut names the application the same way (`micronaut.application.name`): the id
      // it registers under in Consul/Eureka and `@Client(id = ...)` calls it by.
      const s =
        springSetting(file, 'spring.application.name') ??
        springSetting(file, 'micronaut.application.name');
      const name = s ? plainName(s.value) : null;
      if (s && name) {
        out.set(unit.key, { ...s, name, key: s.key });
        break;
      }
    }
  }
  return out;
}

/** Folders (repository paths, maybe with an `{application}` segment) a config server serves. */
function searchFolders(model: CodeModel, server: Unit): string[] {
  const files = model.filesByUnit.get(server.key) ?? [];
  const resources = joinPath(server.dir, 'src/main/resources') ?? 'src/main/resources';
  const raw = ownSpringFiles(files)
    .filter((f) => dirname(f.path) === resources || !isWithin(f.path, resources))
    .map((f) => springSetting(f, 'spring.cloud.config.server.native.search-locations'))
    .find((s) => s !== null);
  if (!raw) {
    // Spring's defaults for the native profile: the classpath root and `config/`; in practice
    // the served files sit in a sub-folder of the server's resources.
    const folders = new Set<string>();
    for (const f of files) {
      if (isWithin(f.path, resources) && dirname(f.path) !== resources && CONFIG_FILE.test(f.path))
        folders.add(dirname(f.path));
    }
    return [...folders];
  }
  const out: string[] = [];
  for (const loc of raw.value.split(',').map((l) => l.trim().replace(/^(['"])(.*)\1$/, '$2'))) {
    const cp = /^classpath\*?:\/*(.*)$/.exec(loc);
    const file = /^file:(?:\/\/)?\.?\/*(.*)$/.exec(loc);
    const rest = (cp?.[1] ?? file?.[1] ?? '').replace(/\/+$/, '');
    if (cp) {
      const dir = rest === '' ? resources : joinPath(resources, rest);
      if (dir !== null) out.push(dir);
    } else if (file && rest !== '') {
      // A path on the server's disk: the repository folder it is mounted from, matched by its
      // trailing segments (`file:/config-repo` -> `config-repo`, `deploy/config-repo`).
      const tail = rest.split('/').slice(-2).join('/');
      const dirs = new Set(model.files.map((f) => dirname(f.path)));
      for (const d of dirs) if (d === tail || d.endsWith(`/${tail}`)) out.push(d);
    }
  }
  return out;
}

interface ServedConfig {
  /** The model with each served file moved to the units it configures (`servedConfig` set). */
  model: CodeModel;
  evidence: Evidence[];
}

/** Rewrites the model for Spring Cloud Config and declares Spring identities (module comment). */
export function serveSpringConfig(model: CodeModel): ServedConfig {
  const names = springApplicationNames(model);
  const out: Evidence[] = [];
  for (const unit of model.units) {
    const n = names.get(unit.key);
    if (!n || unit.aliases.includes(n.name)) continue;
    out.push(
      evidence(
        n.file,
        { start: n.line, end: n.line },
        {
          source: 'code',
          provider: n.key.startsWith('micronaut.') ? 'micronaut' : 'spring-boot',
          kind: 'service-id-declared',
          subject: unit.key,
          summary: `${unit.name} is the ${n.key.startsWith('micronaut.') ? 'Micronaut' : 'Spring'} application ${n.name} (${n.key})`,
          attributes: { service_id: n.name, aliases: [n.name] },
        },
      ),
    );
  }
  const servers = model.units.filter((u) => declaredDependencies(u, CONFIG_SERVER).length > 0);
  const served = new Set<string>();
  if (servers.length === 0) return { model, evidence: out };
  const byName = new Map<string, Unit>();
  for (const unit of model.units) {
    const n = names.get(unit.key);
    if (n) byName.set(n.name, unit);
  }
  const isServer = (u: Unit) => servers.some((s) => s.key === u.key);
  const declaredClients = model.units.filter(
    (u) => !isServer(u) && declaredDependencies(u, CONFIG_CLIENT).length,
  );
  const clients = declaredClients.length
    ? declaredClients
    : model.units.filter((u) => !isServer(u) && names.has(u.key));
  const targets = new Map<string, Unit[]>();
  for (const server of servers) {
    const folders = searchFolders(model, server);
    for (const f of model.files) {
      if (!CONFIG_FILE.test(f.path)) continue;
      const dir = dirname(f.path);
      const folder = folders.find(
        (d) => dir === d || (d.includes('{application}') && isWithin(dir, dirname(d))),
      );
      if (folder === undefined) continue;
      const stem = basename(f.path).replace(CONFIG_FILE, '').toLowerCase();
      // `{application}` folders name the application; else the file's stem does.
      const app = folder.includes('{application}') ? basename(dir).toLowerCase() : stem;
      let to: Unit[];
      if (/^application([-_].+)?$/.test(app)) to = clients;
      else {
        const match = [...byName.keys()]
          .filter((n) => app === n || app.startsWith(`${n}-`))
          .sort((a, b) => b.length - a.length)[0];
        to = match ? [byName.get(match)!] : [];
      }
      served.add(f.path);
      targets.set(f.path, to);
    }
    if (servers.length !== 1) continue;
    for (const client of clients) {
      const found = clientOfServer(model, client, server, CONFIG_CLIENT, {
        kind: 'config-client',
        summary: `${client.name} fetches its configuration from the config server ${server.name}`,
        attributes: {},
      });
      if (found) out.push(found);
    }
  }
  if (served.size === 0) return { model, evidence: out };
  const filesByUnit = new Map<string, SourceFile[]>();
  for (const [key, files] of model.filesByUnit)
    filesByUnit.set(
      key,
      files.filter((f) => !served.has(f.path)),
    );
  for (const [path, units] of targets) {
    const file = model.fileByPath.get(path);
    if (!file) continue;
    for (const u of units) filesByUnit.get(u.key)?.push(file);
  }
  for (const files of filesByUnit.values()) files.sort((a, b) => (a.path < b.path ? -1 : 1));
  return { model: { ...model, filesByUnit, servedConfig: served }, evidence: out };
}
