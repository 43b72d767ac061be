/**
 * Per-unit address entries of one shared JSON settings file, read by the programs that name them.
 *
 * A settings file holding one entry per unit of the system, keyed by the unit's name, each with
 * its address (`"user-service": {"addr": "user-service", "port": 9090}`), is mounted whole into
 * every container; a program reaches the units whose entries its own code indexes
 * (`config_json["user-service"]["addr"]`), not every entry of the file. Also through a helper of
 * the repository that builds the key from its parameter (`config_json[service_name + "-mongodb"]`
 * inside `init_mongodb_client_pool(config_json, service_name)`): a call of that helper with a
 * literal (`init_mongodb_client_pool(config_json, "post-storage")`) reads `post-storage-mongodb`.
 *
 * The program is a CMake executable (`add_executable(<Name> ...)`): its code is the C/C++ files
 * of the folder of that CMakeLists.txt. Evidence `setting-entry-read`, subject `program:<name>`
 * (no entity: reconcile gives it to the deployment whose entrypoint or command runs the binary,
 * analysis/reconcile-run-code.ts, or drops the relationship when none does), object
 * `service:<address>`, cited at the code line with the settings file and line in attributes.
 */
import type { Evidence, SourceFile } from '../evidence';
import { entityKey, normalizeName } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, isWithin } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { internalName, isLocalHost } from '../shared/urls';
import { isTestPath, lex } from './common';
import { parseJsonWithLines } from './json-lines';
import type { CodeModel } from './model';

/** The sub-keys of an entry that hold its address. */
const ADDRESS_KEY = /^(addr|address|host|hostname|url|uri)$/i;
const C_SOURCE = /\.(c|cc|cpp|cxx|h|hh|hpp|hxx)$/i;
const ADD_EXECUTABLE = /\badd_executable\s*\(\s*([A-Za-z_][\w.-]*)/g;

interface Entry {
  host: string;
  file: SourceFile;
  line: number;
}

/** Top-level entries of a settings file whose value is an object holding a host name. */
export function addressEntries(file: SourceFile): Map<string, Entry> {
  const out = new Map<string, Entry>();
  if (!/\.json$/i.test(file.path)) return out;
  const parsed = parseJsonWithLines(file.text);
  if (!parsed.ok || parsed.node.type !== 'object') return out;
  for (const entry of parsed.node.entries) {
    if (entry.value.type !== 'object') continue;
    for (const sub of entry.value.entries) {
      if (!ADDRESS_KEY.test(sub.key) || sub.value.type !== 'string') continue;
      const raw = sub.value.value.trim();
      const host = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw)
        ? (/^[^:]+:\/\/(?:[^@/]*@)?([^:/?#]+)/.exec(raw)?.[1] ?? '')
        : raw;
      if (!/^[a-z][a-z0-9.-]*$/i.test(host) || isLocalHost(host)) continue;
      const name = internalName(host);
      if (name) out.set(entry.key, { host: name, file, line: sub.value.line });
      break;
    }
  }
  // One entry per unit: a file of several units' entries, not one program's own settings.
  return out.size >= 2 ? out : new Map();
}

/** Helpers that index settings by a parameter plus a literal suffix: name -> [index, suffix][]. */
function keyHelpers(files: SourceFile[]): Map<string, Array<[number, string]>> {
  const out = new Map<string, Array<[number, string]>>();
  const header = /\b([A-Za-z_]\w*)\s*\(([^()]*)\)\s*(?:const\s*)?\{/g;
  for (const f of files) {
    if (!f.text.includes('+')) continue;
    const { code } = lex(f.text, 'c');
    const heads = [...code.matchAll(header)];
    for (const m of code.matchAll(/\[\s*([A-Za-z_]\w*)\s*\+\s*"([^"]+)"\s*\]/g)) {
      const h = heads.filter((x) => (x.index ?? 0) < (m.index ?? 0)).pop();
      if (!h) continue;
      const params = (h[2] ?? '').split(',').map((p) => /([A-Za-z_]\w*)\s*$/.exec(p.trim())?.[1]);
      const i = params.indexOf(m[1]);
      if (i < 0) continue;
      const list = out.get(h[1] ?? '') ?? [];
      if (!list.some(([j, s]) => j === i && s === m[2])) list.push([i, m[2] ?? '']);
      out.set(h[1] ?? '', list);
    }
  }
  return out;
}

/** The literal arguments of each call of a helper: [offset, key][]. */
function helperReads(code: string, helpers: Map<string, Array<[number, string]>>) {
  const out: Array<[number, string]> = [];
  for (const [name, uses] of helpers) {
    for (const m of code.matchAll(new RegExp(String.raw`\b${name}\s*\(([^;]*?)\)\s*;`, 'g'))) {
      const args = (m[1] ?? '').split(',').map((a) => a.trim());
      for (const [i, suffix] of uses) {
        const lit = /^"([^"]+)"$/.exec(args[i] ?? '');
        if (lit) out.push([m.index ?? 0, `${lit[1]}${suffix}`]);
      }
    }
  }
  return out;
}

/** setting-entry-read evidence of the CMake executables reading a shared settings file. */
export function entrySettingsEvidence(model: CodeModel): Evidence[] {
  const entries = new Map<string, Entry>();
  for (const f of model.files)
    if (!isTestPath(f.path))
      for (const [k, e] of addressEntries(f)) if (!entries.has(k)) entries.set(k, e);
  if (entries.size === 0) return [];
  const sources = model.files.filter((f) => C_SOURCE.test(f.path) && !isTestPath(f.path));
  const helpers = keyHelpers(sources);
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const direct = new RegExp(
    String.raw`\[\s*"(${[...entries.keys()].map(escape).join('|')})"\s*\]`,
    'g',
  );
  const out: Evidence[] = [];
  for (const cmake of model.files) {
    if (basename(cmake.path) !== 'CMakeLists.txt' || isTestPath(cmake.path)) continue;
    const dir = dirname(cmake.path);
    const { code: cm } = lex(cmake.text, 'python');
    for (const exe of cm.matchAll(ADD_EXECUTABLE)) {
      const program = exe[1] ?? '';
      if (!program || program.includes('$')) continue;
      const seen = new Set<string>();
      for (const f of sources) {
        if (!isWithin(f.path, dir)) continue;
        const { code } = lex(f.text, 'c');
        const idx = new LineIndex(f.text);
        const reads: Array<[number, string]> = [
          ...[...code.matchAll(direct)].map((m): [number, string] => [m.index ?? 0, m[1] ?? '']),
          ...helperReads(code, helpers),
        ];
        for (const [at, key] of reads) {
          const entry = entries.get(key);
          if (!entry) continue;
          const line = idx.lineAt(at);
          if (seen.has(`${f.path}:${line}:${key}`)) continue;
          seen.add(`${f.path}:${line}:${key}`);
          out.push(
            evidence(
              f,
              { start: line, end: line },
              {
                source: 'code',
                provider: 'cpp-source',
                kind: 'setting-entry-read',
                subject: `program:${normalizeName(program)}`,
                relationship: 'connects_to',
                object: entityKey('service', entry.host),
                summary: `${program} reads the entry ${key} of ${entry.file.path}, the address ${entry.host}`,
                attributes: {
                  program,
                  program_build: cmake.path,
                  key,
                  host: entry.host,
                  config_path: entry.file.path,
                  config_line: entry.line,
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
