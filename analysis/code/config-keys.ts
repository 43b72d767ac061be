/**
 * Addresses in a unit's JSON configuration file, reached through the keys code reads.
 *
 * A configuration file (`config.json`, `config.<env>.json`, classified as code) that is a flat
 * map of keys to values, some of them addresses of the system's own hosts
 * (`"GeoMongoAddress": "mongodb-geo:27017"`, `"consulAddress": "consul:8500"`,
 * `"cacheUrl": "redis://cache:6379"`). A program of the unit that names a key as an index or a
 * call argument (`result["GeoMongoAddress"]`, `cfg.Get("consulAddress")`) connects to the host of
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
import type { CodeModel } from './model';

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
  for (const file of model.files) {
    if (!CONFIG_FILE.test(basename(file.path)) || isTestPath(file.path)) continue;
    const unit = model.ownerOf(dirname(file.path));
    if (!unit) continue;
    const found = addresses(file);
    if (found.length === 0) continue;
    const byKey = new Map(found.map((a) => [a.key, a]));
    // A key named as an index or a call argument: `["key"]`, `("key")`, `("key", ...)`.
    const read = new RegExp(
      String.raw`[[(]\s*(["'\`])(${found.map((a) => escape(a.key)).join('|')})\1\s*[\]),]`,
      'g',
    );
    for (const code of model.filesByUnit.get(unit.key) ?? []) {
      const lang = languageOf(code.path);
      if (!lang || isTestPath(code.path) || !isWithin(code.path, unit.dir)) continue;
      if (!found.some((a) => code.text.includes(a.key))) continue;
      const { code: text } = lex(code.text, lexStyleOf(lang));
      const idx = new LineIndex(code.text);
      const seen = new Set<string>();
      read.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = read.exec(text)) !== null) {
        const a = byKey.get(m[2] ?? '');
        if (!a) continue;
        const line = idx.lineAt(m.index);
        if (seen.has(`${line}\u0000${a.key}`)) continue;
        seen.add(`${line}\u0000${a.key}`);
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
                in_test: false,
              },
            },
          ),
        );
      }
    }
  }
  return out;
}
