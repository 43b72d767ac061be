/**
 * Compose's own composition, applied before services are read: top-level `include`, service
 * `extends` (same file or another), and the check that a compose file read to something. A
 * compose file that does not parse, names no services, or composes from what cannot be found is
 * a gap saying why: a silent empty read would pass for a system with nothing in it.
 */
import type { AnalyzerGap, SourceFile } from '../evidence';
import { dirname, joinPath } from '../shared/paths';
import { asArray, asString, isRecord } from '../shared/values';
import { parseYamlDocuments, type PathItem, type YamlDoc } from '../shared/yaml';

export interface ComposeFile {
  file: SourceFile;
  doc: YamlDoc;
  /** Services as Compose runs them: `extends` applied. */
  services: Record<string, unknown>;
  /** Services as this file writes them, for citing the lines a value is written on. */
  written: Record<string, unknown>;
  /** Per extending service, the services it inherits from, nearest first. */
  bases: Map<string, ServiceRef[]>;
  /** The compose file whose top-level `include` brought this one in, if any. */
  included_by?: string;
}

export interface ServiceRef {
  cf: ComposeFile;
  name: string;
}

/** Longer `extends` chains than this are a loop (`a` extends `b` extends `a`). */
const MAX_EXTENDS_DEPTH = 10;

/**
 * Reads compose files, follows their `include`s into `files` (every file of the repository by
 * path), and applies `extends`. Gaps: parse errors, no services, an include or an `extends`
 * base that is not among the files read.
 */
export function readComposeFiles(
  files: SourceFile[],
  byPath: Map<string, SourceFile>,
): { parsed: ComposeFile[]; gaps: AnalyzerGap[] } {
  const gaps: AnalyzerGap[] = [];
  const parsed: ComposeFile[] = [];
  const seen = new Set<string>();
  const includedBy = new Map<string, string>();
  const queue = [...files];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file.path)) continue;
    seen.add(file.path);
    const y = parseYamlDocuments(file);
    for (const message of y.errors)
      gaps.push({ path: file.path, reason: 'yaml_parse_error', message });
    let read = y.errors.length > 0;
    for (const doc of y.docs) {
      if (!isRecord(doc.value)) continue;
      for (const target of includes(file, doc.value.include)) {
        read = true;
        const included = byPath.get(target);
        if (included) {
          if (!includedBy.has(target)) includedBy.set(target, file.path);
          queue.push(included);
        } else
          gaps.push({
            path: file.path,
            reason: 'compose_include_not_read',
            message: `include names ${target}, which is not among the files analyzed; its services are missing`,
          });
      }
      const services = doc.value.services;
      if (services === undefined || services === null) continue;
      read = true;
      if (!isRecord(services)) {
        gaps.push({
          path: file.path,
          reason: 'compose_invalid',
          message: `services is ${Array.isArray(services) ? 'a list' : `a ${typeof services}`}, not a mapping of service names; nothing was read`,
        });
        continue;
      }
      const by = includedBy.get(file.path);
      parsed.push({
        file,
        doc,
        services,
        written: services,
        bases: new Map(),
        ...(by !== undefined ? { included_by: by } : {}),
      });
    }
    // A file of comments only (a layer left empty on purpose) is said but hides nothing; a
    // file with content and no services read to nothing, which may hide a whole system.
    const blank = y.docs.every((d) => d.value === null || d.value === undefined);
    if (!read)
      gaps.push(
        blank
          ? {
              path: file.path,
              reason: 'compose_empty',
              message: 'the compose file holds no content (comments only); nothing to read',
            }
          : {
              path: file.path,
              reason: 'compose_no_services',
              message: 'the compose file declares no services and includes no other file',
            },
      );
  }
  gaps.push(...applyExtends(parsed, byPath));
  return { parsed, gaps };
}

/** `include: [a.yml, {path: b.yml}, {path: [c.yml, d.yml]}]`, as repository paths. */
function includes(file: SourceFile, include: unknown): string[] {
  const out: string[] = [];
  for (const item of asArray(include)) {
    const written = isRecord(item) ? asArray(item.path).map(asString) : [asString(item)];
    for (const w of written) {
      const p = w ? joinPath(dirname(file.path), w) : null;
      if (p) out.push(p);
    }
  }
  return out;
}

/**
 * Replaces each extending service's record by its merge onto its base(s). A base file that is
 * not itself read as a compose file (`extends: {file: common.yml}`) is parsed for its bases
 * only: Compose does not run its services.
 */
function applyExtends(parsed: ComposeFile[], files: Map<string, SourceFile>): AnalyzerGap[] {
  const gaps: AnalyzerGap[] = [];
  const byPath = new Map(parsed.map((cf) => [cf.file.path, cf]));
  const baseFile = (path: string): ComposeFile | undefined => {
    const known = byPath.get(path);
    const file = files.get(path);
    if (known || !file) return known;
    const doc = parseYamlDocuments(file).docs[0];
    const services = isRecord(doc?.value) ? doc.value.services : undefined;
    if (!doc || !isRecord(services)) return undefined;
    const cf = { file, doc, services, written: services, bases: new Map() };
    byPath.set(path, cf);
    return cf;
  };
  const merged = new Map<string, unknown>();
  const resolve = (ref: ServiceRef, depth: number): unknown => {
    const id = `${ref.cf.file.path}\u0000${ref.name}`;
    if (merged.has(id)) return merged.get(id);
    const own = ref.cf.written[ref.name];
    if (!isRecord(own) || own.extends === undefined) return own;
    const spec = isRecord(own.extends) ? own.extends : { service: own.extends };
    const baseName = asString(spec.service);
    const fileWritten = asString(spec.file);
    const basePath = fileWritten ? joinPath(dirname(ref.cf.file.path), fileWritten) : null;
    const baseCf = fileWritten ? (basePath ? baseFile(basePath) : undefined) : ref.cf;
    const why =
      depth >= MAX_EXTENDS_DEPTH
        ? 'the extends chain loops or is deeper than 10'
        : !baseName
          ? 'extends names no service'
          : !baseCf
            ? `extends names ${fileWritten}, which is not among the compose files read`
            : !isRecord(baseCf.written[baseName])
              ? `extends names service ${baseName}, which ${fileWritten ?? 'this file'} does not declare`
              : null;
    if (why || !baseCf || !baseName) {
      gaps.push({
        path: ref.cf.file.path,
        reason: 'compose_extends_not_resolved',
        message: `service ${ref.name}: ${why}; it is read without what it inherits`,
      });
      merged.set(id, own);
      return own;
    }
    const baseRef = { cf: baseCf, name: baseName };
    const base = resolve(baseRef, depth + 1);
    const rebased = rebase(isRecord(base) ? base : {}, dirname(baseCf.file.path), ref.cf);
    const result = mergeService(rebased, own);
    merged.set(id, result);
    ref.cf.bases.set(ref.name, [baseRef, ...(baseCf.bases.get(baseName) ?? [])]);
    return result;
  };
  for (const cf of parsed) {
    const services: Record<string, unknown> = {};
    for (const name of Object.keys(cf.written)) services[name] = resolve({ cf, name }, 0);
    cf.services = services;
  }
  return gaps;
}

/** A build context written relative to the base's file, re-expressed relative to `to`'s. */
function rebase(
  svc: Record<string, unknown>,
  fromDir: string,
  to: ComposeFile,
): Record<string, unknown> {
  const toDir = dirname(to.file.path);
  if (fromDir === toDir || svc.build === undefined) return svc;
  const up =
    toDir === ''
      ? ''
      : toDir
          .split('/')
          .map(() => '..')
          .join('/');
  const fix = (context: string) => {
    const abs = joinPath(fromDir, context);
    return abs === null ? context : [up, abs].filter(Boolean).join('/') || '.';
  };
  const build = svc.build;
  if (typeof build === 'string') return { ...svc, build: fix(build) };
  if (isRecord(build))
    return { ...svc, build: { ...build, context: fix(asString(build.context) ?? '.') } };
  return svc;
}

/** Keys whose value replaces the base's rather than adding to it (Compose's merge rules). */
const REPLACED = new Set(['command', 'entrypoint', 'image', 'healthcheck', 'user', 'working_dir']);
/** Lists of `KEY=VALUE` (or maps) merged key by key. */
const KEYED = new Set(['environment', 'labels', 'annotations', 'extra_hosts', 'sysctls']);

/** Compose's merge of a service onto the one it extends. */
export function mergeService(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  delete out.extends;
  for (const [k, v] of Object.entries(over)) {
    if (k === 'extends') continue;
    const b = out[k];
    if (KEYED.has(k) && b !== undefined) out[k] = { ...keyed(b), ...keyed(v) };
    else if (REPLACED.has(k) || b === undefined) out[k] = v;
    else if (isRecord(b) && isRecord(v)) out[k] = deepMerge(b, v);
    else if (Array.isArray(b) && Array.isArray(v))
      out[k] = [...b, ...v.filter((x) => !b.some((y) => JSON.stringify(y) === JSON.stringify(x)))];
    else if (k === 'depends_on') out[k] = { ...keyedDeps(b), ...keyedDeps(v) };
    else out[k] = v;
  }
  return out;
}

function deepMerge(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const x = out[k];
    out[k] = isRecord(x) && isRecord(v) ? deepMerge(x, v) : v;
  }
  return out;
}

/** `[A=1, B]` or `{A: 1}` as a map (a bare `B` keeps a null value: taken from the shell). */
function keyed(v: unknown): Record<string, unknown> {
  if (isRecord(v)) return v;
  const out: Record<string, unknown> = {};
  for (const item of asArray(v)) {
    const s = asString(item);
    if (!s) continue;
    const eq = s.indexOf('=');
    if (eq < 0) out[s] = null;
    else out[s.slice(0, eq)] = s.slice(eq + 1);
  }
  return out;
}

function keyedDeps(v: unknown): Record<string, unknown> {
  if (isRecord(v)) return v;
  return Object.fromEntries(asArray(v).map((d) => [String(d), {}]));
}

/**
 * Where a service's value at `path` is written: in the service itself, else in the nearest base
 * it inherits it from. Environment entries are looked up by variable name in either form.
 */
export function locate(
  cf: ComposeFile,
  name: string,
  path: PathItem[],
): ServiceRef & { path: PathItem[] } {
  const refs: ServiceRef[] = [{ cf, name }, ...(cf.bases.get(name) ?? [])];
  for (const ref of refs) {
    const found = writtenPath(ref.cf.written[ref.name], path);
    if (found) return { ...ref, path: found };
  }
  return { cf, name, path };
}

function writtenPath(svc: unknown, path: PathItem[]): PathItem[] | null {
  if (path.length === 0) return isRecord(svc) ? [] : null;
  let cur: unknown = svc;
  const out: PathItem[] = [];
  for (const [i, key] of path.entries()) {
    if (i === 1 && path[0] === 'environment' && Array.isArray(cur) && typeof key === 'string') {
      const idx = cur.findIndex((e) => String(e).split('=')[0] === String(key));
      if (idx < 0) return null;
      out.push(idx);
      cur = cur[idx];
      continue;
    }
    if (isRecord(cur) && typeof key === 'string' && key in cur) cur = cur[key];
    else if (Array.isArray(cur) && typeof key === 'number' && key < cur.length) cur = cur[key];
    else return null;
    out.push(key);
  }
  return out;
}
