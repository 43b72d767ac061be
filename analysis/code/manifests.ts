/**
 * Package manifests: what each one declares (name, dependencies, workspace members, go module)
 * and the `dependency-declared` / `client-library` evidence of a unit.
 *
 * Readers are small and purpose-built (no manifest libraries are runtime dependencies):
 * package.json via a line-keeping JSON reader, go.mod / requirements.txt / build.gradle line by
 * line, pyproject.toml / Cargo.toml / Pipfile via the minimal TOML reader, pom.xml / *.csproj via
 * the small XML element reader, setup.py via the lexer (string literals of install_requires).
 *
 * Package keys are `package:<ecosystem>/<name>` with the name lowercased (PEP 503 for PyPI,
 * `groupId:artifactId` for Maven), not passed through normalizeName, so scopes and paths stay
 * readable: `package:npm/@aws-sdk/client-s3`, `package:go/github.com/jackc/pgx/v5`.
 */
import type { AnalyzerGap, Evidence, SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, joinPath } from '../shared/paths';
import { LineIndex } from '../shared/text';
import {
  AWS_SERVICES,
  classifyClient,
  isGenericCloudSdk,
  pep503,
  type ClientClass,
} from './clients';
import { lex, STRING } from './common';
import { member, parseJsonWithLines, stringValue, type JsonNode } from './json-lines';
import type { DeclaredDependency, Ecosystem, ManifestKind, ParsedManifest, Unit } from './model';
import { readToml, stringItems, tomlText, type TomlDocument, type TomlValue } from './toml';
import { child, childText, children, readXml, type XmlElement } from './xml';

/** Local copy: imported bindings are getters in the CommonJS output, slow in hot loops. */
const IN_STRING = STRING;

// ---------------------------------------------------------------------------------------------
// Recognition

export function manifestKindOf(path: string): ManifestKind | null {
  const base = basename(path);
  switch (base) {
    case 'package.json':
    case 'go.mod':
    case 'pyproject.toml':
    case 'setup.py':
    case 'Pipfile':
    case 'pom.xml':
    case 'Cargo.toml':
    case 'composer.json':
      return base;
    case 'build.gradle':
    case 'build.gradle.kts':
      return 'build.gradle';
  }
  if (/^(requirements([-_.][\w.-]*)?|[\w-]+[-_]requirements)\.txt$/i.test(base))
    return 'requirements.txt';
  if (/\.csproj$/i.test(base)) return 'csproj';
  return null;
}

const ECOSYSTEM: Record<ManifestKind, Ecosystem> = {
  'package.json': 'npm',
  'go.mod': 'go',
  'requirements.txt': 'pypi',
  'pyproject.toml': 'pypi',
  'setup.py': 'pypi',
  Pipfile: 'pypi',
  'pom.xml': 'maven',
  'build.gradle': 'maven',
  'Cargo.toml': 'cargo',
  csproj: 'nuget',
  'composer.json': 'composer',
};

const PROVIDER: Record<ManifestKind, string> = {
  'package.json': 'npm',
  'go.mod': 'go-modules',
  'requirements.txt': 'pip',
  'pyproject.toml': 'pyproject',
  'setup.py': 'setuptools',
  Pipfile: 'pipenv',
  'pom.xml': 'maven',
  'build.gradle': 'gradle',
  'Cargo.toml': 'cargo',
  csproj: 'nuget',
  'composer.json': 'composer',
};

const LOCKFILES = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lock',
  'bun.lockb',
  'go.sum',
  'poetry.lock',
  'Pipfile.lock',
  'pdm.lock',
  'uv.lock',
  'Cargo.lock',
  'packages.lock.json',
  'gradle.lockfile',
  'go.work.sum',
  // A Gradle version catalog pins every version a build uses (issue 30 counts it).
  'libs.versions.toml',
  'composer.lock',
  'Gemfile.lock',
]);

export function isLockfile(path: string): boolean {
  return LOCKFILES.has(basename(path)) || basename(path).endsWith('.lockfile');
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Removes `user:password@` from URLs inside a string (VCS URLs in version specs). */
export function stripUrlCredentials(s: string): string {
  return s.replace(/(\/\/)[^/@\s]*@/g, '$1');
}

export function packageKey(ecosystem: Ecosystem, name: string): string {
  const n = name.trim().toLowerCase();
  return `package:${ecosystem}/${ecosystem === 'pypi' ? pep503(n) : n}`;
}

function emptyManifest(file: SourceFile, kind: ManifestKind): ParsedManifest {
  return {
    path: file.path,
    kind,
    ecosystem: ECOSYSTEM[kind],
    provider: PROVIDER[kind],
    name: null,
    nameLine: null,
    dependencies: [],
    workspaceRoot: false,
    workspaceMembers: [],
    goModule: null,
    includes: [],
    gaps: [],
  };
}

function parseGap(path: string, message: string): AnalyzerGap {
  return { path, reason: 'manifest_parse_error', message };
}

const DEV_GROUP =
  /^(dev|devel|develop|development|test|tests|testing|lint|linting|docs?|typing|types|ci|bench)$/i;

// ---------------------------------------------------------------------------------------------
// package.json

const NPM_SECTIONS: [string, Record<string, unknown>, boolean][] = [
  ['dependencies', {}, false],
  ['devDependencies', {}, true],
  ['peerDependencies', { peer: true }, false],
  ['optionalDependencies', { optional: true }, false],
];

/**
 * PHP's composer.json: the package name and `require` / `require-dev` (platform requirements
 * such as `php` and `ext-*` are no packages). Its directory is a unit, so a PHP service's code and
 * settings are read for connections.
 */
function parseComposer(file: SourceFile, m: ParsedManifest): void {
  const parsed = parseJsonWithLines(file.text);
  if (!parsed.ok || parsed.node.type !== 'object') {
    m.gaps.push(parseGap(file.path, 'composer.json is not a JSON object'));
    return;
  }
  const root = parsed.node;
  const name = member(root, 'name');
  const nameText = stringValue(name?.value);
  if (name && nameText && nameText.trim() !== '') {
    // `vendor/package`: the unit is known by the package part.
    m.name = nameText.trim().split('/').pop() ?? nameText.trim();
    m.nameLine = name.line;
  }
  for (const [section, dev] of [
    ['require', false],
    ['require-dev', true],
  ] as const) {
    const deps = member(root, section)?.value;
    if (!deps || deps.type !== 'object') continue;
    for (const entry of deps.entries) {
      if (entry.key === 'php' || /^(ext|lib)-/.test(entry.key)) continue;
      m.dependencies.push({
        ecosystem: 'composer',
        name: entry.key,
        version: stringValue(entry.value),
        dev,
        path: file.path,
        line: entry.line,
        endLine: entry.value.endLine,
        attributes: { section },
      });
    }
  }
}

function parsePackageJson(file: SourceFile, m: ParsedManifest): void {
  const parsed = parseJsonWithLines(file.text);
  if (!parsed.ok) {
    m.gaps.push(parseGap(file.path, `package.json is not valid JSON: ${parsed.message}`));
    return;
  }
  const root = parsed.node;
  if (root.type !== 'object') {
    m.gaps.push(parseGap(file.path, 'package.json is not a JSON object'));
    return;
  }
  const name = member(root, 'name');
  const nameText = stringValue(name?.value);
  if (name && nameText && nameText.trim() !== '') {
    m.name = nameText.trim();
    m.nameLine = name.line;
  }
  const ws = member(root, 'workspaces')?.value;
  const globs: JsonNode | undefined = ws?.type === 'object' ? member(ws, 'packages')?.value : ws;
  if (globs?.type === 'array') {
    m.workspaceRoot = true;
    for (const g of globs.items) if (g.type === 'string') m.workspaceMembers.push(g.value);
  }
  for (const [section, extra, dev] of NPM_SECTIONS) {
    const deps = member(root, section)?.value;
    if (!deps || deps.type !== 'object') continue;
    for (const entry of deps.entries) {
      const spec = stringValue(entry.value);
      const version = spec === null ? null : stripUrlCredentials(spec);
      const attributes: Record<string, unknown> = { section, ...extra };
      if (version && /^(file|link|portal):/.test(version)) {
        const local = joinPath(dirname(file.path), version.replace(/^[a-z]+:/, ''));
        if (local !== null) attributes.local_path = local === '' ? '.' : local;
      }
      if (version?.startsWith('workspace:')) attributes.workspace_protocol = true;
      m.dependencies.push({
        ecosystem: 'npm',
        name: entry.key,
        version,
        dev,
        path: file.path,
        line: entry.line,
        endLine: entry.value.endLine,
        attributes,
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// go.mod

function unquote(s: string): string {
  return s.replace(/^"(.*)"$/, '$1').replace(/^`(.*)`$/, '$1');
}

function parseGoMod(file: SourceFile, m: ParsedManifest): void {
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

// ---------------------------------------------------------------------------------------------
// PEP 508 requirement strings (requirements.txt, pyproject, setup.py)

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

function parseRequirements(file: SourceFile, m: ParsedManifest): void {
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

// ---------------------------------------------------------------------------------------------
// TOML-based manifests

function tomlErrors(file: SourceFile, doc: TomlDocument, m: ParsedManifest): void {
  if (doc.errors.length === 0) return;
  const first = doc.errors[0];
  m.gaps.push(
    parseGap(
      file.path,
      `${basename(file.path)} could not be read completely (${doc.errors.length} problem(s), first at line ${first?.line ?? 0}: ${first?.message ?? ''})`,
    ),
  );
}

interface TableDepsOptions {
  ecosystem: Ecosystem;
  dev: boolean;
  attributes: Record<string, unknown>;
  /** Keys that are not dependencies (poetry's `python`). */
  skip?: Set<string>;
}

/**
 * Dependencies of a TOML dependency table at `prefix`: `name = "spec"`, `name = { ... }` and the
 * sub-table form `[prefix.name]` with `version = ...`.
 */
function tableDependencies(
  file: SourceFile,
  doc: TomlDocument,
  prefix: string[],
  opts: TableDepsOptions,
): DeclaredDependency[] {
  const out: DeclaredDependency[] = [];
  const isUnder = (path: string[]): boolean =>
    path.length > prefix.length && prefix.every((p, i) => path[i] === p);
  const subTables = new Map<
    string,
    { line: number; endLine: number; values: Map<string, TomlValue> }
  >();
  for (const h of doc.headers) {
    if (h.path.length === prefix.length + 1 && isUnder(h.path)) {
      const name = h.path[prefix.length] as string;
      subTables.set(name, { line: h.line, endLine: h.line, values: new Map() });
    }
  }
  for (const a of doc.assignments) {
    if (!isUnder(a.path)) continue;
    const name = a.path[prefix.length] as string;
    if (opts.skip?.has(name.toLowerCase())) continue;
    if (a.path.length === prefix.length + 1) {
      out.push(tomlDependency(file, name, a.value, a.line, a.endLine, opts));
    } else if (a.path.length === prefix.length + 2) {
      const sub = subTables.get(name) ?? { line: a.line, endLine: a.endLine, values: new Map() };
      sub.values.set(a.path[prefix.length + 1] as string, a.value);
      sub.endLine = Math.max(sub.endLine, a.endLine);
      subTables.set(name, sub);
    }
  }
  for (const [name, sub] of subTables) {
    if (opts.skip?.has(name.toLowerCase())) continue;
    const entries = [...sub.values].map(([k, value]) => ({
      key: [k],
      value,
      line: sub.line,
      endLine: sub.endLine,
    }));
    const table: TomlValue = { kind: 'table', entries, line: sub.line, endLine: sub.endLine };
    out.push(tomlDependency(file, name, table, sub.line, sub.endLine, opts));
  }
  return out;
}

function tomlDependency(
  file: SourceFile,
  name: string,
  value: TomlValue,
  line: number,
  endLine: number,
  opts: TableDepsOptions,
): DeclaredDependency {
  const attributes: Record<string, unknown> = { ...opts.attributes };
  let version: string | null = null;
  let depName = name;
  if (value.kind === 'string' || value.kind === 'other') version = tomlText(value);
  else if (value.kind === 'table') {
    const get = (k: string): TomlValue | undefined =>
      value.entries.find((e) => e.key[0] === k)?.value;
    version = tomlText(get('version'));
    const pkg = tomlText(get('package'));
    if (pkg) {
      attributes.renamed_from = name;
      depName = pkg;
    }
    const path = tomlText(get('path'));
    if (path) {
      const local = joinPath(dirname(file.path), path);
      if (local !== null) attributes.local_path = local === '' ? '.' : local;
    }
    const git = tomlText(get('git'));
    if (git) attributes.git = stripUrlCredentials(git);
    const features = stringItems(get('features')).map((s) => s.value);
    if (features.length > 0) attributes.features = features;
    const extras = stringItems(get('extras')).map((s) => s.value);
    if (extras.length > 0) attributes.extras = extras;
    if (tomlText(get('optional')) === 'true') attributes.optional = true;
    if (tomlText(get('workspace')) === 'true') attributes.workspace_inherited = true;
    const markers = tomlText(get('markers'));
    if (markers) attributes.marker = markers;
  }
  if (version !== null) version = stripUrlCredentials(version);
  return {
    ecosystem: opts.ecosystem,
    name: depName,
    version,
    dev: opts.dev,
    path: file.path,
    line,
    endLine,
    attributes,
  };
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

function parsePyproject(file: SourceFile, m: ParsedManifest): void {
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
  for (const a of doc.assignments) {
    const p = a.path;
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
  for (const h of doc.headers) {
    const p = h.path;
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

function parsePipfile(file: SourceFile, m: ParsedManifest): void {
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

function parseCargo(file: SourceFile, m: ParsedManifest): void {
  const doc = readToml(file.text);
  tomlErrors(file, doc, m);
  const name = doc.assignments.find(
    (a) => a.path.length === 2 && a.path[0] === 'package' && a.path[1] === 'name',
  );
  const nameText = tomlText(name?.value);
  if (name && nameText) {
    m.name = nameText;
    m.nameLine = name.line;
  }
  const hasPackage =
    doc.headers.some((h) => h.path[0] === 'package') ||
    doc.assignments.some((a) => a.path[0] === 'package');
  const hasWorkspace =
    doc.headers.some((h) => h.path[0] === 'workspace') ||
    doc.assignments.some((a) => a.path[0] === 'workspace');
  if (hasWorkspace) {
    const members = doc.assignments.find(
      (a) => a.path.length === 2 && a.path[0] === 'workspace' && a.path[1] === 'members',
    );
    m.workspaceMembers = stringItems(members?.value).map((s) => s.value);
    // A virtual manifest (workspace without a package) only aggregates its members.
    m.workspaceRoot = !hasPackage;
  }
  const prefixes: [string[], boolean, Record<string, unknown>][] = [
    [['dependencies'], false, { section: 'dependencies' }],
    [['dev-dependencies'], true, { section: 'dev-dependencies' }],
    [['build-dependencies'], false, { section: 'build-dependencies', build: true }],
    [['workspace', 'dependencies'], false, { section: 'workspace.dependencies' }],
  ];
  const targets = new Set<string>();
  for (const p of [...doc.headers.map((h) => h.path), ...doc.assignments.map((a) => a.path)]) {
    if (p[0] === 'target' && p.length >= 3) targets.add(p[1] as string);
  }
  for (const t of [...targets].sort()) {
    prefixes.push([
      ['target', t, 'dependencies'],
      false,
      { section: 'target.dependencies', target: t },
    ]);
    prefixes.push([
      ['target', t, 'dev-dependencies'],
      true,
      { section: 'target.dev-dependencies', target: t },
    ]);
    prefixes.push([
      ['target', t, 'build-dependencies'],
      false,
      { section: 'target.build-dependencies', target: t },
    ]);
  }
  for (const [prefix, dev, attributes] of prefixes) {
    m.dependencies.push(
      ...tableDependencies(file, doc, prefix, { ecosystem: 'cargo', dev, attributes }),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// XML-based manifests

function parsePom(file: SourceFile, m: ParsedManifest): void {
  const { root, errors } = readXml(file.text);
  if (errors.length > 0)
    m.gaps.push(parseGap(file.path, `pom.xml could not be read cleanly: ${errors[0] ?? ''}`));
  if (!root || root.name !== 'project') return;
  const artifact = child(root, 'artifactId');
  if (artifact && artifact.text.trim()) {
    m.name = artifact.text.trim();
    m.nameLine = artifact.line;
  }
  const props = new Map<string, string>();
  for (const p of child(root, 'properties')?.children ?? []) props.set(p.name, p.text.trim());
  const parent = child(root, 'parent');
  const version = childText(root, 'version') ?? childText(parent, 'version');
  const groupId = childText(root, 'groupId') ?? childText(parent, 'groupId');
  if (version) props.set('project.version', version);
  if (groupId) props.set('project.groupId', groupId);
  const resolve = (v: string | null): string | null =>
    v === null ? null : v.replace(/\$\{([^}]+)\}/g, (whole, k: string) => props.get(k) ?? whole);

  const modules = children(child(root, 'modules'), 'module')
    .map((x) => x.text.trim())
    .filter(Boolean);
  if (childText(root, 'packaging') === 'pom' && modules.length > 0) {
    m.workspaceRoot = true;
    m.workspaceMembers = modules;
  }
  const add = (dep: XmlElement, managed: boolean): void => {
    const g = resolve(childText(dep, 'groupId'));
    const a = resolve(childText(dep, 'artifactId'));
    if (!g || !a) return;
    const scope = childText(dep, 'scope');
    const attributes: Record<string, unknown> = { group_id: g, artifact_id: a };
    if (scope) attributes.scope = scope;
    if (managed) attributes.managed = true;
    if (childText(dep, 'optional') === 'true') attributes.optional = true;
    m.dependencies.push({
      ecosystem: 'maven',
      name: `${g}:${a}`,
      version: resolve(childText(dep, 'version')),
      dev: scope === 'test',
      path: file.path,
      line: dep.line,
      endLine: dep.endLine,
      attributes,
    });
  };
  for (const d of children(child(root, 'dependencies'), 'dependency')) add(d, false);
  for (const d of children(
    child(child(root, 'dependencyManagement'), 'dependencies'),
    'dependency',
  ))
    add(d, true);
}

function walk(el: XmlElement, visit: (e: XmlElement) => void): void {
  visit(el);
  for (const c of el.children) walk(c, visit);
}

function parseCsproj(file: SourceFile, m: ParsedManifest): void {
  m.name = basename(file.path).replace(/\.csproj$/i, '');
  const { root, errors } = readXml(file.text);
  if (errors.length > 0)
    m.gaps.push(
      parseGap(file.path, `${basename(file.path)} could not be read cleanly: ${errors[0] ?? ''}`),
    );
  m.nameLine = root?.line ?? 1;
  if (!root) return;
  walk(root, (el) => {
    if (el.name === 'PackageReference') {
      const name = el.attrs.Include ?? el.attrs.Update;
      if (!name) return;
      const version = el.attrs.Version ?? el.attrs.VersionOverride ?? childText(el, 'Version');
      const privateAssets = el.attrs.PrivateAssets ?? childText(el, 'PrivateAssets');
      const attributes: Record<string, unknown> = {};
      if (privateAssets) attributes.private_assets = privateAssets;
      m.dependencies.push({
        ecosystem: 'nuget',
        name,
        version: version ?? null,
        dev: privateAssets?.toLowerCase() === 'all',
        path: file.path,
        line: el.line,
        endLine: el.endLine,
        attributes,
      });
    } else if (el.name === 'ProjectReference' && el.attrs.Include) {
      const local = joinPath(dirname(file.path), el.attrs.Include);
      m.dependencies.push({
        ecosystem: 'nuget',
        name: basename(el.attrs.Include.replace(/\\/g, '/')).replace(/\.[a-z]+proj$/i, ''),
        version: null,
        dev: false,
        path: file.path,
        line: el.line,
        endLine: el.endLine,
        attributes: { project_reference: true, ...(local ? { local_path: local } : {}) },
      });
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Gradle and setup.py (line / lexer based)

const GRADLE_CONFIG =
  /^\s*(implementation|api|compile|compileOnly|runtimeOnly|runtime|testImplementation|testCompile|testCompileOnly|testRuntimeOnly|androidTestImplementation|annotationProcessor|kapt|ksp|developmentOnly|debugImplementation)\b\s*\(?\s*(?:(?:platform|enforcedPlatform)\s*\(\s*)?/;

function parseGradle(file: SourceFile, m: ParsedManifest): void {
  const { code } = lex(file.text, 'c');
  code.split('\n').forEach((text, idx) => {
    const cfg = GRADLE_CONFIG.exec(text);
    if (!cfg) return;
    const config = cfg[1] ?? '';
    const rest = text.slice(cfg[0].length);
    let group: string | null = null;
    let artifact: string | null = null;
    let version: string | null = null;
    const coord = /^['"]([^'"\s]+)['"]/.exec(rest);
    const map =
      /group\s*[:=]\s*['"]([^'"]+)['"]\s*,\s*name\s*[:=]\s*['"]([^'"]+)['"](?:\s*,\s*version\s*[:=]\s*['"]([^'"]+)['"])?/.exec(
        rest,
      );
    if (coord) {
      const parts = (coord[1] ?? '').split(':');
      if (parts.length < 2) return;
      [group, artifact] = [parts[0] ?? null, parts[1] ?? null];
      version = parts[2] ?? null;
    } else if (map) {
      [group, artifact, version] = [map[1] ?? null, map[2] ?? null, map[3] ?? null];
    }
    if (!group || !artifact) return;
    m.dependencies.push({
      ecosystem: 'maven',
      name: `${group}:${artifact}`,
      version,
      dev: /^(test|androidTest)/.test(config),
      path: file.path,
      line: idx + 1,
      endLine: idx + 1,
      attributes: { configuration: config, group_id: group, artifact_id: artifact },
    });
  });
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

function parseSetupPy(file: SourceFile, m: ParsedManifest): void {
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

// ---------------------------------------------------------------------------------------------
// Entry points

/** Reads one manifest. Never throws: problems become `manifest_parse_error` gaps. */
export function parseManifest(file: SourceFile, kind: ManifestKind): ParsedManifest {
  const m = emptyManifest(file, kind);
  try {
    switch (kind) {
      case 'package.json':
        parsePackageJson(file, m);
        break;
      case 'go.mod':
        parseGoMod(file, m);
        break;
      case 'requirements.txt':
        parseRequirements(file, m);
        break;
      case 'pyproject.toml':
        parsePyproject(file, m);
        break;
      case 'Pipfile':
        parsePipfile(file, m);
        break;
      case 'setup.py':
        parseSetupPy(file, m);
        break;
      case 'Cargo.toml':
        parseCargo(file, m);
        break;
      case 'pom.xml':
        parsePom(file, m);
        break;
      case 'csproj':
        parseCsproj(file, m);
        break;
      case 'build.gradle':
        parseGradle(file, m);
        break;
      case 'composer.json':
        parseComposer(file, m);
        break;
    }
  } catch (err) {
    m.gaps.push(
      parseGap(
        file.path,
        `${basename(file.path)} could not be read: ${err instanceof Error ? err.name : 'error'}`,
      ),
    );
  }
  return m;
}

/** Service hints for generic AWS SDKs in a unit's source. */
function awsServicesUsed(files: SourceFile[]): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [
    /\b(?:client|resource)\(\s*['"](s3|sqs|sns|kinesis|dynamodb)['"]/g, // boto3
    /new\s+(?:AWS\.)?(S3|SQS|SNS|Kinesis|DynamoDB)(?:\.DocumentClient)?\s*\(/g, // aws-sdk v2
    /"github\.com\/aws\/aws-sdk-go\/service\/(s3|sqs|sns|kinesis|dynamodb)"/g, // aws-sdk-go v1
    /\bAmazon(S3|SQS|SNS|Kinesis|DynamoDB)(?:Client)?Builder\b/g, // Java SDK v1
  ];
  for (const f of files) {
    for (const re of patterns) {
      for (const m of f.text.matchAll(re)) {
        const svc = (m[1] ?? '').toLowerCase();
        if (AWS_SERVICES[svc] && !found.has(svc)) found.set(svc, f.path);
      }
    }
  }
  return found;
}

/** `dependency-declared` and `client-library` evidence for one unit. */
export function manifestEvidence(
  unit: Unit,
  unitFiles: SourceFile[],
  fileByPath: Map<string, SourceFile>,
): Evidence[] {
  const out: Evidence[] = [];
  let aws: Map<string, string> | null = null;
  for (const manifest of unit.manifests) {
    const file = fileByPath.get(manifest.path);
    if (!file) continue;
    for (const dep of manifest.dependencies) {
      const object = packageKey(dep.ecosystem, dep.name);
      const version = dep.version ? ` ${dep.version}` : '';
      out.push(
        evidence(
          file,
          { start: dep.line, end: dep.endLine },
          {
            source: 'code',
            provider: manifest.provider,
            kind: 'dependency-declared',
            subject: unit.key,
            relationship: 'depends_on_package',
            object,
            summary: `${unit.name} depends on ${dep.ecosystem} package ${dep.name}${version}${dep.dev ? ' (dev)' : ''}`,
            attributes: {
              ecosystem: dep.ecosystem,
              package: dep.name,
              version: dep.version,
              dev: dep.dev,
              manifest: manifest.path,
              ...dep.attributes,
            },
          },
        ),
      );
      const hints = [
        ...((dep.attributes.extras as string[] | undefined) ?? []),
        ...((dep.attributes.features as string[] | undefined) ?? []),
      ];
      const classes: { cls: ClientClass; via?: string }[] = [];
      const cls = classifyClient(dep.ecosystem, dep.name, hints);
      if (cls) classes.push({ cls });
      if (isGenericCloudSdk(dep.ecosystem, dep.name)) {
        aws ??= awsServicesUsed(unitFiles);
        for (const [svc, where] of [...aws].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
          const c = AWS_SERVICES[svc];
          if (c) classes.push({ cls: c, via: where });
        }
      }
      for (const { cls: c, via } of classes) {
        out.push(
          evidence(
            file,
            { start: dep.line, end: dep.endLine },
            {
              source: 'code',
              provider: manifest.provider,
              kind: 'client-library',
              subject: unit.key,
              relationship: 'uses_client_library',
              object,
              summary: `${unit.name} uses ${c.engine} client library ${dep.name}`,
              attributes: {
                engine: c.engine,
                category: c.category,
                ecosystem: dep.ecosystem,
                package: dep.name,
                dev: dep.dev,
                ...(via ? { detected_via: via } : {}),
              },
            },
          ),
        );
      }
    }
  }
  return out;
}
