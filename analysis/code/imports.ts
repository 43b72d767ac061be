/**
 * The internal import graph between units, for TypeScript/JavaScript, Go and Python.
 *
 * Imports are found with regular expressions over the lexed source (comments blanked; a match is
 * kept only when its keyword is code, not inside a string or docstring), then resolved to a unit:
 *
 * - TS/JS: relative specifiers by path (crossing unit directories counts), bare specifiers by the
 *   package.json name of another unit (monorepo siblings). tsconfig `paths` aliases are not read.
 * - Go: the longest go.mod module path that prefixes the import path gives a directory; the unit
 *   owning that directory is the target.
 * - Python: relative imports by path; absolute imports by top-level name: a name the importing
 *   unit provides itself, a standard-library name or a declared PyPI dependency is never a
 *   cross-unit import; otherwise the name must belong to exactly one other unit (one of its
 *   top-level packages, its directory name or its project name).
 *
 * Only imports that cross from one unit to another become evidence: one per (importing file,
 * target unit), citing the first such import statement.
 */
import type { Evidence, SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, joinPath, relativeTo } from '../shared/paths';
import { LineIndex, uniqueSorted } from '../shared/text';
import { pep503 } from './clients';
import { CODE, isTestPath, languageOf, lex, lexStyleOf, STRING, type Language } from './common';
import { goSelected } from './go-functions';
import type { CodeModel, Unit } from './model';

/** Local copies: imported bindings are getters in the CommonJS output, slow in hot loops. */
const IN_CODE = CODE;
const IN_STRING = STRING;

interface RawImport {
  spec: string;
  line: number;
  endLine: number;
  symbols: string[];
  /** Python: number of leading dots. */
  level?: number;
  /** Go: the exported names the file selects through the import's alias. */
  uses?: string[];
}

function keywordIsCode(code: string, mask: Uint8Array, index: number): boolean {
  if (mask[index] !== IN_CODE) return false;
  const prev = index > 0 ? code[index - 1] : '';
  return prev === undefined || prev === '' || !/[\w$.]/.test(prev);
}

function namedSymbols(braces: string): string[] {
  return braces
    .replace(/[{}]/g, '')
    .split(',')
    .map((s) => s.trim().replace(/^type\s+/, ''))
    .map((s) => /^([\w$]+)/.exec(s)?.[1] ?? '')
    .filter(Boolean);
}

function clauseSymbols(clause: string): string[] {
  const out: string[] = [];
  const c = clause.trim().replace(/^type\s+/, '');
  const braces = /\{[^}]*\}/.exec(c);
  if (braces) out.push(...namedSymbols(braces[0]));
  if (/\*\s*as\s+[\w$]+/.test(c)) out.push('*');
  const head = c.replace(/\{[^}]*\}/, '').replace(/\*\s*as\s+[\w$]+/, '');
  if (/^\s*[\w$]+/.test(head)) out.push('default');
  return out;
}

export function extractJsImports(text: string): RawImport[] {
  const { code, mask } = lex(text, 'js');
  const idx = new LineIndex(text);
  const out: RawImport[] = [];
  const push = (m: RegExpExecArray, spec: string, symbols: string[]): void => {
    if (!keywordIsCode(code, mask, m.index)) return;
    if (spec.includes('${')) return;
    out.push({
      spec,
      line: idx.lineAt(m.index),
      endLine: idx.lineAt(m.index + m[0].length - 1),
      symbols,
    });
  };
  const patterns: [RegExp, (m: RegExpExecArray) => [string, string[]]][] = [
    [
      /\bimport\s+(?:type\s+)?([\w$*{}\s,]{1,2000}?)\s*from\s*(['"])([^'"\n]+)\2/g,
      (m) => [m[3] ?? '', clauseSymbols(m[1] ?? '')],
    ],
    [
      /\bexport\s+(?:type\s+)?(\*(?:\s+as\s+[\w$]+)?|\{[^}]*\})\s*from\s*(['"])([^'"\n]+)\2/g,
      (m) => [m[3] ?? '', (m[1] ?? '').startsWith('*') ? ['*'] : namedSymbols(m[1] ?? '')],
    ],
    [/\bimport\s*(['"])([^'"\n]+)\1/g, (m) => [m[2] ?? '', []]],
    [/\brequire\s*\(\s*(['"`])([^'"`\n]+)\1\s*\)/g, (m) => [m[2] ?? '', []]],
    [/\bimport\s*\(\s*(['"`])([^'"`\n]+)\1\s*[,)]/g, (m) => [m[2] ?? '', []]],
  ];
  for (const [re, read] of patterns) {
    let m: RegExpExecArray | null;
    while ((m = re.exec(code)) !== null) {
      const [spec, symbols] = read(m);
      push(m, spec, symbols);
    }
  }
  return out;
}

export function extractGoImports(text: string): RawImport[] {
  const { code, mask } = lex(text, 'go');
  const idx = new LineIndex(text);
  const out: RawImport[] = [];
  const single = /\bimport\s+(?:([\w.]+)\s+)?"([^"\n]+)"/g;
  let m: RegExpExecArray | null;
  while ((m = single.exec(code)) !== null) {
    if (!keywordIsCode(code, mask, m.index)) continue;
    const spec = m[2] ?? '';
    const line = idx.lineAt(m.index);
    const alias = m[1] ?? basename(spec);
    out.push({
      spec,
      line,
      endLine: line,
      symbols: [alias],
      uses: goSelected(code, mask, alias, IN_CODE),
    });
  }
  const block = /\bimport\s*\(([^)]*)\)/g;
  while ((m = block.exec(code)) !== null) {
    if (!keywordIsCode(code, mask, m.index)) continue;
    const bodyStart = m.index + m[0].indexOf('(') + 1;
    const spec = /(?:([\w.]+)[ \t]+)?"([^"\n]+)"/g;
    let s: RegExpExecArray | null;
    while ((s = spec.exec(m[1] ?? '')) !== null) {
      const at = bodyStart + s.index;
      if (mask[at + s[0].indexOf('"')] !== IN_STRING) continue;
      const path = s[2] ?? '';
      const line = idx.lineAt(at);
      const alias = s[1] ?? basename(path);
      out.push({
        spec: path,
        line,
        endLine: line,
        symbols: [alias],
        uses: goSelected(code, mask, alias, IN_CODE),
      });
    }
  }
  return out;
}

export function extractPythonImports(text: string): RawImport[] {
  const { code, mask } = lex(text, 'python');
  const idx = new LineIndex(text);
  const out: RawImport[] = [];
  const fromRe =
    /^[ \t]*(from)[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*(?:\\\r?\n[^\n]*)*)/gm;
  let m: RegExpExecArray | null;
  while ((m = fromRe.exec(code)) !== null) {
    const kw = m.index + m[0].indexOf('from');
    if (mask[kw] !== IN_CODE) continue;
    const names = (m[4] ?? '')
      .replace(/[()\\]/g, ' ')
      .split(',')
      .map((s) => /^\s*([\w*]+)/.exec(s)?.[1] ?? '')
      .filter(Boolean);
    out.push({
      spec: m[3] ?? '',
      level: (m[2] ?? '').length,
      line: idx.lineAt(kw),
      endLine: idx.lineAt(m.index + m[0].trimEnd().length - 1),
      symbols: names,
    });
  }
  const importRe = /^[ \t]*(import)[ \t]+([^\n]*(?:\\\r?\n[^\n]*)*)/gm;
  while ((m = importRe.exec(code)) !== null) {
    const kw = m.index + m[0].indexOf('import');
    if (mask[kw] !== IN_CODE) continue;
    const line = idx.lineAt(kw);
    const endLine = idx.lineAt(m.index + m[0].trimEnd().length - 1);
    for (const part of (m[2] ?? '').replace(/\\/g, ' ').split(',')) {
      const mod = /^\s*([A-Za-z_][\w.]*)/.exec(part)?.[1];
      if (mod) out.push({ spec: mod, level: 0, line, endLine, symbols: [] });
    }
  }
  return out;
}

const PYTHON_STDLIB = new Set(
  (
    '__future__ abc argparse array ast asyncio atexit base64 binascii bisect builtins bz2 calendar cmd code codecs ' +
    'collections concurrent configparser contextlib contextvars copy cProfile csv ctypes curses dataclasses datetime ' +
    'decimal difflib dis doctest email encodings enum errno faulthandler fcntl filecmp fnmatch fractions ftplib ' +
    'functools gc getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http imaplib importlib ' +
    'inspect io ipaddress itertools json keyword linecache locale logging lzma mailbox math mimetypes mmap ' +
    'multiprocessing numbers operator os pathlib pdb pickle pkgutil platform plistlib poplib posixpath pprint ' +
    'profile pty pwd queue random re readline resource sched secrets select selectors shelve shlex shutil signal ' +
    'site smtplib socket socketserver sqlite3 ssl stat statistics string struct subprocess sys sysconfig tarfile ' +
    'tempfile termios test textwrap threading time timeit tkinter token tokenize tomllib trace traceback ' +
    'tracemalloc tty types typing unicodedata unittest urllib uuid venv warnings weakref wsgiref xml xmlrpc ' +
    'zipapp zipfile zipimport zlib zoneinfo typing_extensions'
  ).split(' '),
);

/** Top-level names never used to reach another unit (too generic). */
const GENERIC_PY_NAMES = new Set([
  'tests',
  'test',
  'docs',
  'scripts',
  'examples',
  'src',
  'lib',
  'main',
  'app',
]);

interface PythonInfo {
  /** Everything the unit's own files provide at top level (packages and modules). */
  provided: Set<string>;
  /** Names other units may reach it by. */
  exported: Set<string>;
}

function pythonInfo(unit: Unit, files: SourceFile[]): PythonInfo | null {
  const py = files.filter((f) => languageOf(f.path) === 'python');
  if (py.length === 0) return null;
  const provided = new Set<string>();
  const exported = new Set<string>(unit.pythonNames);
  for (const f of py) {
    let rel = relativeTo(f.path, unit.dir);
    if (rel.startsWith('src/')) rel = rel.slice(4);
    const segs = rel.split('/');
    const top = segs.length === 1 ? (segs[0] ?? '').replace(/\.py$/, '') : (segs[0] ?? '');
    if (!/^[A-Za-z_]\w*$/.test(top)) continue;
    provided.add(top);
    if (segs.length > 1) exported.add(top);
  }
  for (const g of GENERIC_PY_NAMES) exported.delete(g);
  return { provided, exported };
}

const PROVIDERS: Partial<Record<Language, string>> = {
  typescript: 'typescript-imports',
  javascript: 'javascript-imports',
  go: 'go-imports',
  python: 'python-imports',
};

interface Resolved {
  target: Unit;
  how: string;
  /** Go: the imported package's folder. */
  dir?: string;
}

/** `import` evidence for imports that cross unit boundaries. */
/**
 * `selectedWithin` collects the Go functions a unit's own non-test code selects from its other
 * packages (`dir.Name`, `dir.*` when the alias selects nothing): their reads are not one caller's.
 */
export function importEvidence(
  model: CodeModel,
  selectedWithin: Set<string> = new Set(),
): Evidence[] {
  const npmByName = new Map<string, Unit>();
  for (const u of model.units)
    if (u.npmName && !npmByName.has(u.npmName)) npmByName.set(u.npmName, u);
  const goModules: { module: string; dir: string }[] = [];
  for (const u of model.units) {
    for (const m of u.manifests) {
      if (m.kind === 'go.mod' && m.goModule)
        goModules.push({ module: m.goModule, dir: dirname(m.path) });
    }
  }
  goModules.sort((a, b) => b.module.length - a.module.length || (a.module < b.module ? -1 : 1));

  const pyInfo = new Map<string, PythonInfo>();
  const pyIndex = new Map<string, Unit[]>();
  for (const u of model.units) {
    const info = pythonInfo(u, model.filesByUnit.get(u.key) ?? []);
    if (!info) continue;
    pyInfo.set(u.key, info);
    for (const name of info.exported) pyIndex.set(name, [...(pyIndex.get(name) ?? []), u]);
  }
  const declaredPy = new Map<string, Set<string>>();
  for (const u of model.units) {
    const names = new Set<string>();
    for (const m of u.manifests) {
      for (const d of m.dependencies) {
        if (d.ecosystem === 'pypi' && d.attributes.local_path === undefined)
          names.add(pep503(d.name).replace(/-/g, '_'));
      }
    }
    declaredPy.set(u.key, names);
  }

  const resolveJs = (file: SourceFile, owner: Unit, spec: string): Resolved | null => {
    if (spec.startsWith('.')) {
      const target = joinPath(dirname(file.path), spec);
      if (target === null) return null;
      const u = model.ownerOf(target);
      return u ? { target: u, how: 'relative-path' } : null;
    }
    if (spec.startsWith('/') || spec.startsWith('node:') || /^[a-z]+:/.test(spec)) return null;
    const parts = spec.split('/');
    const pkg = spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
    const u = npmByName.get(pkg);
    return u && u !== owner ? { target: u, how: 'package-name' } : null;
  };

  const resolveGo = (spec: string): Resolved | null => {
    for (const g of goModules) {
      if (spec === g.module || spec.startsWith(`${g.module}/`)) {
        const rest = spec.slice(g.module.length + 1);
        const path = rest === '' ? g.dir : joinPath(g.dir, rest);
        if (path === null) return null;
        const u = model.ownerOf(path);
        return u ? { target: u, how: 'module-path', dir: path } : null;
      }
    }
    return null;
  };

  const resolvePython = (file: SourceFile, owner: Unit, imp: RawImport): Resolved | null => {
    const level = imp.level ?? 0;
    if (level > 0) {
      let base: string | null = dirname(file.path);
      for (let k = 1; k < level && base !== null; k++) base = base === '' ? null : dirname(base);
      if (base === null) return null;
      const path = imp.spec === '' ? base : joinPath(base, imp.spec.replace(/\./g, '/'));
      if (path === null) return null;
      const u = model.ownerOf(path);
      return u ? { target: u, how: 'relative-path' } : null;
    }
    const top = imp.spec.split('.')[0] ?? '';
    if (top === '' || PYTHON_STDLIB.has(top)) return null;
    if (pyInfo.get(owner.key)?.provided.has(top)) return null;
    if (declaredPy.get(owner.key)?.has(top.toLowerCase())) return null;
    const candidates = (pyIndex.get(top) ?? []).filter((u) => u !== owner);
    return candidates.length === 1 && candidates[0]
      ? { target: candidates[0], how: 'python-package' }
      : null;
  };

  const out: Evidence[] = [];
  for (const file of model.files) {
    const lang = languageOf(file.path);
    const provider = lang ? PROVIDERS[lang] : undefined;
    if (!lang || !provider || /\.d\.[cm]?ts$/.test(file.path)) continue;
    const owner = model.ownerOf(dirname(file.path));
    if (!owner) continue;
    const style = lexStyleOf(lang);
    const raw =
      style === 'js'
        ? extractJsImports(file.text)
        : style === 'go'
          ? extractGoImports(file.text)
          : extractPythonImports(file.text);
    const byTarget = new Map<
      string,
      { target: Unit; imports: RawImport[]; how: Set<string>; uses: Set<string> }
    >();
    for (const imp of raw) {
      const r: Resolved | null =
        style === 'js'
          ? resolveJs(file, owner, imp.spec)
          : style === 'go'
            ? resolveGo(imp.spec)
            : resolvePython(file, owner, imp);
      if (r && r.target === owner && r.dir !== undefined && !isTestPath(file.path))
        for (const u of imp.uses?.length ? imp.uses : ['*']) selectedWithin.add(`${r.dir}.${u}`);
      if (!r || r.target === owner) continue;
      const entry = byTarget.get(r.target.key) ?? {
        target: r.target,
        imports: [] as RawImport[],
        how: new Set<string>(),
        uses: new Set<string>(),
      };
      entry.imports.push(imp);
      entry.how.add(r.how);
      // Go: `internal/common/client.NewUsersClient`, the package's folder and the name used.
      // None selected (a package named otherwise than its folder, a blank import): `dir.*`, any.
      if (r.dir !== undefined)
        for (const u of imp.uses?.length ? imp.uses : ['*']) entry.uses.add(`${r.dir}.${u}`);
      byTarget.set(r.target.key, entry);
    }
    for (const { target, imports, how, uses } of byTarget.values()) {
      imports.sort((a, b) => a.line - b.line || a.endLine - b.endLine);
      const first = imports[0] as RawImport;
      const symbols = uniqueSorted(imports.flatMap((i) => i.symbols));
      const specifiers = uniqueSorted(
        imports.map((i) => (i.level ? '.'.repeat(i.level) : '') + i.spec),
      );
      out.push(
        evidence(
          file,
          { start: first.line, end: first.endLine },
          {
            source: 'code',
            provider,
            kind: 'import',
            subject: owner.key,
            relationship: 'imports',
            object: target.key,
            summary: `unit ${owner.name} imports unit ${target.name} (${relativeTo(file.path, owner.dir)})`,
            attributes: {
              language: lang,
              specifiers,
              ...(symbols.length > 0 ? { symbols } : {}),
              lines: [...new Set(imports.map((i) => i.line))].sort((a, b) => a - b),
              resolution: uniqueSorted(how),
              ...(style === 'go' ? { uses: uniqueSorted(uses) } : {}),
              in_test: isTestPath(file.path),
            },
          },
        ),
      );
    }
  }
  return out;
}
