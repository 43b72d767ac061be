/** Python manifests: PEP 508 strings, requirements.txt, pyproject.toml, Pipfile and setup.py. */
import type { SourceFile } from '../evidence';
import { basename, dirname, joinPath } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { lex, STRING } from './common';
import { DEV_GROUP, stripUrlCredentials, tableDependencies, tomlErrors } from './manifest-common';
import type { DeclaredDependency, ParsedManifest } from './model';
import { readToml, stringItems, tomlText, type TomlValue } from './toml';

/** Local copy: imported bindings are getters in the CommonJS output, slow in hot loops. */
const IN_STRING = STRING;

interface Pep508 {
  name: string;
  extras: string[];
  version: string | null;
  marker: string | null;
  url: string | null;
}

export function parsePep508(spec: string): Pep508 | null {
  const m =
    /^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*([\s\S]*)$/.exec(spec);
  if (!m) return null;
  let rest = m[3] ?? '';
  let marker: string | null = null;
  let url: string | null = null;
  if (rest.trimStart().startsWith('@')) {
    // `name @ url ; marker` — the marker needs a space before ';' after a URL.
    const body = rest.trimStart().slice(1).trim();
    const semi = body.search(/\s;/);
    url = stripUrlCredentials(semi < 0 ? body : body.slice(0, semi)).trim();
    marker = semi < 0 ? null : body.slice(semi + 2).trim() || null;
    rest = '';
  } else {
    const semi = rest.indexOf(';');
    if (semi >= 0) {
      marker = rest.slice(semi + 1).trim() || null;
      rest = rest.slice(0, semi);
    }
  }
  const version = rest
    .trim()
    .replace(/^\((.*)\)$/, '$1')
    .trim();
  if (version !== '' && !/^[<>=!~]/.test(version)) return null;
  const extras = (m[2] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return { name: m[1] ?? '', extras, version: version || null, marker, url };
}

function pep508Attributes(p: Pep508): Record<string, unknown> {
  const a: Record<string, unknown> = {};
  if (p.extras.length > 0) a.extras = p.extras;
  if (p.marker) a.marker = p.marker;
  if (p.url) a.url = p.url;
  return a;
}

// ---------------------------------------------------------------------------------------------
// requirements.txt

export function parseRequirements(file: SourceFile, m: ParsedManifest): void {
  const dev = /(^|[-_.])(dev|test|tests|testing|lint|docs?|ci)([-_.]|$)/i.test(
    basename(file.path).replace(/\.txt$/i, ''),
  );
  const lines = file.text.split('\n');
  let idx = 0;
  while (idx < lines.length) {
    const start = idx + 1;
    let logical = '';
    // Join backslash continuations.
    for (;;) {
      const raw = (lines[idx] ?? '').replace(/\r$/, '');
      idx++;
      if (raw.endsWith('\\') && idx < lines.length) {
        logical += `${raw.slice(0, -1)} `;
        continue;
      }
      logical += raw;
      break;
    }
    const end = idx;
    const text = logical.replace(/(^|\s)#.*$/, '').trim();
    if (text === '') continue;
    const inc = /^(?:-r|--requirement)(?:\s*=\s*|\s+)(\S+)/.exec(text) ?? /^-r(\S+)/.exec(text);
    if (inc) {
      const target = joinPath(dirname(file.path), inc[1] ?? '');
      if (target) m.includes.push(target);
      continue;
    }
    const editable = /^(?:-e|--editable)(?:\s*=\s*|\s+)(\S+)/.exec(text);
    let spec = editable ? (editable[1] ?? '') : text;
    if (!editable && spec.startsWith('-')) continue; // index URLs and other options: never reported
    spec = spec.split(/\s+--?[a-z]/i)[0] ?? spec; // per-requirement options (--hash=...)
    const attributes: Record<string, unknown> = {};
    if (editable) attributes.editable = true;
    let name: string | null = null;
    let version: string | null = null;
    if (
      /^(git\+|hg\+|svn\+|bzr\+|https?:|file:)/i.test(spec) ||
      /^(\.{1,2}\/|\/)/.test(spec) ||
      spec === '.'
    ) {
      const egg = /[#&]egg=([A-Za-z0-9._-]+)/.exec(spec);
      if (/^(\.{1,2}\/|\/|file:)/i.test(spec) || spec === '.') {
        const local = joinPath(
          dirname(file.path),
          spec.replace(/^file:(\/\/)?/i, '').replace(/[#?].*$/, ''),
        );
        if (local !== null) attributes.local_path = local === '' ? '.' : local;
        name = egg?.[1] ?? (local !== null ? basename(local) || null : null);
      } else {
        attributes.url = stripUrlCredentials(spec.replace(/[#?].*$/, ''));
        name = egg?.[1] ?? null;
      }
      if (!name) continue;
    } else {
      const p = parsePep508(spec);
      if (!p) continue;
      name = p.name;
      version = p.version;
      Object.assign(attributes, pep508Attributes(p));
    }
    m.dependencies.push({
      ecosystem: 'pypi',
      name,
      version,
      dev,
      path: file.path,
      line: start,
      endLine: end,
      attributes,
    });
  }
}

function pep508Items(
  file: SourceFile,
  value: TomlValue | undefined,
  dev: boolean,
  extra: Record<string, unknown>,
): DeclaredDependency[] {
  const out: DeclaredDependency[] = [];
  for (const item of stringItems(value)) {
    const p = parsePep508(item.value);
    if (!p) continue;
    out.push({
      ecosystem: 'pypi',
      name: p.name,
      version: p.version,
      dev,
      path: file.path,
      line: item.line,
      endLine: item.endLine,
      attributes: { ...extra, ...pep508Attributes(p) },
    });
  }
  return out;
}

export function parsePyproject(file: SourceFile, m: ParsedManifest): void {
  const doc = readToml(file.text);
  tomlErrors(file, doc, m);
  for (const namePath of [
    ['project', 'name'],
    ['tool', 'poetry', 'name'],
  ]) {
    const a = doc.assignments.find((x) => x.path.join('\u0000') === namePath.join('\u0000'));
    const v = tomlText(a?.value);
    if (a && v) {
      m.name = v;
      m.nameLine = a.line;
      break;
    }
  }
  for (const a of doc.assignments) {
    const p = a.path;
    if (p.length === 2 && p[0] === 'project' && p[1] === 'dependencies') {
      m.dependencies.push(
        ...pep508Items(file, a.value, false, { section: 'project.dependencies' }),
      );
    } else if (p.length === 3 && p[0] === 'project' && p[1] === 'optional-dependencies') {
      const group = p[2] as string;
      m.dependencies.push(
        ...pep508Items(file, a.value, DEV_GROUP.test(group), {
          section: 'project.optional-dependencies',
          group,
        }),
      );
    } else if (p.length === 2 && p[0] === 'dependency-groups') {
      const group = p[1] as string;
      m.dependencies.push(
        ...pep508Items(file, a.value, DEV_GROUP.test(group), {
          section: 'dependency-groups',
          group,
        }),
      );
    }
  }
  const skip = new Set(['python']);
  m.dependencies.push(
    ...tableDependencies(file, doc, ['tool', 'poetry', 'dependencies'], {
      ecosystem: 'pypi',
      dev: false,
      attributes: { section: 'tool.poetry.dependencies' },
      skip,
    }),
    ...tableDependencies(file, doc, ['tool', 'poetry', 'dev-dependencies'], {
      ecosystem: 'pypi',
      dev: true,
      attributes: { section: 'tool.poetry.dev-dependencies' },
      skip,
    }),
  );
  const groups = new Set<string>();
  for (const p of [...doc.assignments, ...doc.headers].map((x) => x.path)) {
    if (
      p.length >= 5 &&
      p[0] === 'tool' &&
      p[1] === 'poetry' &&
      p[2] === 'group' &&
      p[4] === 'dependencies'
    ) {
      groups.add(p[3] as string);
    }
  }
  for (const group of [...groups].sort()) {
    m.dependencies.push(
      ...tableDependencies(file, doc, ['tool', 'poetry', 'group', group, 'dependencies'], {
        ecosystem: 'pypi',
        dev: group !== 'main',
        attributes: { section: 'tool.poetry.group.dependencies', group },
        skip,
      }),
    );
  }
}

export function parsePipfile(file: SourceFile, m: ParsedManifest): void {
  const doc = readToml(file.text);
  tomlErrors(file, doc, m);
  m.dependencies.push(
    ...tableDependencies(file, doc, ['packages'], {
      ecosystem: 'pypi',
      dev: false,
      attributes: { section: 'packages' },
    }),
    ...tableDependencies(file, doc, ['dev-packages'], {
      ecosystem: 'pypi',
      dev: true,
      attributes: { section: 'dev-packages' },
    }),
  );
}

/** String literals inside the `[...]` after `key =` in Python source (setup.py). */
function pythonListStrings(
  text: string,
  key: string,
): { value: string; line: number; endLine: number }[] {
  const { code, mask } = lex(text, 'python');
  const idx = new LineIndex(text);
  const re = new RegExp(`\\b${key}\\s*=\\s*\\[`, 'g');
  const out: { value: string; line: number; endLine: number }[] = [];
  let m: RegExpExecArray | null;
  while ((m = re.exec(code)) !== null) {
    if (mask[m.index] !== 0) continue;
    let depth = 0;
    let i = m.index + m[0].length - 1;
    for (; i < code.length; i++) {
      if (mask[i] === IN_STRING) {
        const start = i;
        while (i < code.length && mask[i] === IN_STRING) i++;
        const lit = text.slice(start, i);
        const body = /^[rRbBuU]{0,2}(['"]{3}|['"])([\s\S]*)\1$/.exec(lit);
        if (body)
          out.push({ value: body[2] ?? '', line: idx.lineAt(start), endLine: idx.lineAt(i - 1) });
        i--;
        continue;
      }
      const c = code[i];
      if (c === '[') depth++;
      else if (c === ']') {
        depth--;
        if (depth === 0) break;
      }
    }
  }
  return out;
}

export function parseSetupPy(file: SourceFile, m: ParsedManifest): void {
  const { code, mask } = lex(file.text, 'python');
  const idx = new LineIndex(file.text);
  const name = /\bname\s*=\s*(['"])([A-Za-z0-9._-]+)\1/.exec(code);
  if (name && mask[name.index] === 0) {
    m.name = name[2] ?? null;
    m.nameLine = idx.lineAt(name.index);
  }
  for (const [key, dev] of [
    ['install_requires', false],
    ['tests_require', true],
  ] as const) {
    for (const s of pythonListStrings(file.text, key)) {
      const p = parsePep508(s.value);
      if (!p) continue;
      m.dependencies.push({
        ecosystem: 'pypi',
        name: p.name,
        version: p.version,
        dev,
        path: file.path,
        line: s.line,
        endLine: s.endLine,
        attributes: { section: key, ...pep508Attributes(p) },
      });
    }
  }
}
