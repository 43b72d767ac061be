/** Helpers the per-ecosystem manifest readers share: gaps, URL credentials, TOML dependency tables. */
import type { AnalyzerGap, SourceFile } from '../evidence';
import { basename, dirname, joinPath } from '../shared/paths';
import type { DeclaredDependency, Ecosystem, ParsedManifest } from './model';
import { stringItems, tomlText, type TomlDocument, type TomlValue } from './toml';

/** Removes `user:password@` from URLs inside a string (VCS URLs in version specs). */
export function stripUrlCredentials(s: string): string {
  return s.replace(/(\/\/)[^/@\s]*@/g, '$1');
}

export function parseGap(path: string, message: string): AnalyzerGap {
  return { path, reason: 'manifest_parse_error', message };
}

export const DEV_GROUP =
  /^(dev|devel|develop|development|test|tests|testing|lint|linting|docs?|typing|types|ci|bench)$/i;

export function tomlErrors(file: SourceFile, doc: TomlDocument, m: ParsedManifest): void {
  if (doc.errors.length === 0) return;
  const first = doc.errors[0];
  m.gaps.push(
    parseGap(
      file.path,
      `${basename(file.path)} could not be read completely (${doc.errors.length} problem(s), first at line ${first?.line ?? 0}: ${first?.message ?? ''})`,
    ),
  );
}

export interface TableDepsOptions {
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
export function tableDependencies(
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
