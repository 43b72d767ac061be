/**
 * Addresses in a unit's JSON configuration file, reached through the keys code reads.
 *
 * A configuration file (`config.json`, `config.<env>.json`, classified as code) that is a flat
 * map of keys to values, some of them addresses of the system's own hosts
 * (`"OrdersDbAddress": "orders-db:27017"`, `"registryAddress": "consul:8500"`,
 * `"cacheUrl": "redis://cache:6379"`). A program of the unit that names a key as an index or a
 * call argument (`result["OrdersDbAddress"]`, `cfg.Get("registryAddress")`) connects to the host of
 * that key's value; a program that never names the key does not, though the file is mounted
 * into every container.
 *
 * Evidence `config-key-read` (relationship `connects_to`, object `service:<host>`) at the code
 * line, with the configuration file and line in its attributes. Reconcile keeps the connection
 * only when the host is declared by a deployment (analysis/reconcile-programs.ts): a key's value
 * names no dependency the system runs otherwise.
 */
import type { Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, isWithin } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { internalName, isLocalHost, parseHostPort, parseUrlValue } from '../shared/urls';
import { isTestPath, languageOf, lex, lexStyleOf } from './common';
import { parseJsonWithLines } from './json-lines';
import type { CodeModel, Unit } from './model';

/** Configuration files read as a map of settings (not manifests, not application*.json). */
const CONFIG_FILE = /^config([-.][\w-]+)?\.json$/i;

interface Address {
  key: string;
  host: string;
  port: number | null;
  file: SourceFile;
  line: number;
}

/** The host (and port) a configuration value names: `host:port` or `scheme://host[:port]`. */
function addressOf(value: string): { host: string; port: number | null } | null {
  const v = value.trim();
  let host: string | null = null;
  let port: number | null = null;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
    const hosts = parseUrlValue(v)?.hosts ?? [];
    if (hosts.length !== 1) return null;
    host = hosts[0]?.host ?? null;
    port = hosts[0]?.port ?? null;
  } else if (/^[a-z0-9][a-z0-9.-]*:\d{2,5}$/i.test(v)) {
    const hp = parseHostPort(v);
    host = hp?.host ?? null;
    port = hp?.port ?? null;
  }
  // A host name, not a number or a local address: something the system runs.
  if (!host || !/[a-z]/i.test(host) || isLocalHost(host)) return null;
  const name = internalName(host);
  return name ? { host: name, port } : null;
}

/** The addresses of a flat configuration file, by key. */
function addresses(file: SourceFile): Address[] {
  const parsed = parseJsonWithLines(file.text);
  if (!parsed.ok || parsed.node.type !== 'object') return [];
  const out: Address[] = [];
  for (const entry of parsed.node.entries) {
    if (entry.value.type !== 'string' || entry.key.length < 3) continue;
    const a = addressOf(entry.value.value);
    if (a) out.push({ key: entry.key, ...a, file, line: entry.line });
  }
  return out;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** config-key-read evidence of every unit holding a configuration file of addresses. */
export function configKeyEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  // Per unit, per key, the addresses of its shallowest configuration files: the unit's own
  // `config.json` over a copy kept for one deployment (`deploy/cluster/config.json`),
  // whose lines are listed as the read's copies.
  const perUnit = new Map<Unit, Map<string, Address[]>>();
  for (const file of model.files) {
    if (!CONFIG_FILE.test(basename(file.path)) || isTestPath(file.path)) continue;
    const unit = model.ownerOf(dirname(file.path));
    if (!unit) continue;
    const keys = perUnit.get(unit) ?? new Map<string, Address[]>();
    perUnit.set(unit, keys);
    for (const a of addresses(file)) keys.set(a.key, [...(keys.get(a.key) ?? []), a]);
  }
  for (const [unit, keys] of perUnit) {
    if (keys.size === 0) continue;
    const depth = (x: Address) => x.file.path.split('/').length;
    const byKey = new Map<string, { used: Address[]; copies: string[] }>();
    for (const [key, all] of keys) {
      const least = Math.min(...all.map(depth));
      byKey.set(key, {
        used: all.filter((a) => depth(a) === least),
        copies: all.filter((a) => depth(a) > least).map((a) => `${a.file.path}:${a.line}`),
      });
    }
    // A key named as an index or a call argument: `["key"]`, `("key")`, `("key", ...)`.
    const read = new RegExp(
      String.raw`[[(]\s*(["'\`])(${[...keys.keys()].map(escape).join('|')})\1\s*[\]),]`,
      'g',
    );
    for (const code of model.filesByUnit.get(unit.key) ?? []) {
      const lang = languageOf(code.path);
      if (!lang || isTestPath(code.path) || !isWithin(code.path, unit.dir)) continue;
      if (![...keys.keys()].some((k) => code.text.includes(k))) continue;
      const { code: text } = lex(code.text, lexStyleOf(lang));
      const idx = new LineIndex(code.text);
      const seen = new Set<string>();
      read.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = read.exec(text)) !== null) {
        const line = idx.lineAt(m.index);
        const { used, copies } = byKey.get(m[2] ?? '') ?? { used: [], copies: [] };
        for (const a of used) {
          const at = `${line}\u0000${a.key}\u0000${a.file.path}`;
          if (seen.has(at)) continue;
          seen.add(at);
          out.push(
            evidence(
              code,
              { start: line, end: line },
              {
                source: 'code',
                provider: `${lang}-source`,
                kind: 'config-key-read',
                subject: unit.key,
                relationship: 'connects_to',
                object: entityKey('service', a.host),
                summary: `${unit.name} reads ${a.key} from ${a.file.path}, the address ${a.host}${a.port === null ? '' : `:${a.port}`}`,
                attributes: {
                  key: a.key,
                  host: a.host,
                  port: a.port,
                  config_path: a.file.path,
                  config_line: a.line,
                  // Deeper copies of the key (one deployment's configmap): read the same way.
                  ...(copies.length > 0 ? { config_copies: copies } : {}),
                  in_test: false,
                },
              },
            ),
          );
        }
      }
    }
  }
  return out;
}
