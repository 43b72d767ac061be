/** go.mod: the module path, `require` and `replace` (local replacements become local paths). */
import type { SourceFile } from '../evidence';
import { dirname, joinPath } from '../shared/paths';
import type { ParsedManifest } from './model';

function unquote(s: string): string {
  return s.replace(/^"(.*)"$/, '$1').replace(/^`(.*)`$/, '$1');
}

export function parseGoMod(file: SourceFile, m: ParsedManifest): void {
  const lines = file.text.split('\n');
  let block: string | null = null;
  const replaces: {
    from: string;
    fromVersion: string | null;
    to: string;
    toVersion: string | null;
  }[] = [];
  const readReplace = (spec: string): void => {
    const r = /^(\S+)(?:\s+(\S+))?\s*=>\s*(\S+)(?:\s+(\S+))?\s*$/.exec(spec);
    if (!r) return;
    replaces.push({
      from: unquote(r[1] ?? ''),
      fromVersion: r[2] ?? null,
      to: unquote(r[3] ?? ''),
      toVersion: r[4] ?? null,
    });
  };
  const readRequire = (spec: string, comment: string, line: number): void => {
    const r = /^(\S+)\s+(\S+)/.exec(spec);
    if (!r) return;
    const attributes: Record<string, unknown> = {};
    if (/\bindirect\b/.test(comment)) attributes.indirect = true;
    m.dependencies.push({
      ecosystem: 'go',
      name: unquote(r[1] ?? ''),
      version: r[2] ?? null,
      dev: false,
      path: file.path,
      line,
      endLine: line,
      attributes,
    });
  };
  lines.forEach((raw, idx) => {
    const line = idx + 1;
    const cut = raw.indexOf('//');
    const code = (cut < 0 ? raw : raw.slice(0, cut)).trim();
    const comment = cut < 0 ? '' : raw.slice(cut + 2);
    if (code === '') return;
    if (block) {
      if (code === ')') {
        block = null;
        return;
      }
      if (block === 'require') readRequire(code, comment, line);
      else if (block === 'replace') readReplace(code);
      return;
    }
    const open = /^(require|replace|exclude|retract|tool|ignore|godebug)\s*\(\s*$/.exec(code);
    if (open) {
      block = open[1] ?? null;
      return;
    }
    const mod = /^module\s+(\S+)/.exec(code);
    if (mod) {
      m.goModule = unquote(mod[1] ?? '');
      m.name = m.goModule;
      m.nameLine = line;
      return;
    }
    const req = /^require\s+(.+)$/.exec(code);
    if (req) readRequire((req[1] ?? '').trim(), comment, line);
    const rep = /^replace\s+(.+)$/.exec(code);
    if (rep) readReplace((rep[1] ?? '').trim());
  });
  for (const dep of m.dependencies) {
    const r = replaces.find(
      (x) => x.from === dep.name && (x.fromVersion === null || x.fromVersion === dep.version),
    );
    if (!r) continue;
    dep.attributes.replaced_by = r.toVersion ? `${r.to} ${r.toVersion}` : r.to;
    if (/^(\.\.?\/|\/)/.test(r.to)) {
      const local = joinPath(dirname(file.path), r.to);
      if (local !== null) dep.attributes.local_path = local === '' ? '.' : local;
    }
  }
}
