/**
 * Thin helpers over the `yaml` node tree: parsing with line numbers, alias and merge-key
 * resolution, and turning a node's offsets into the 1-based inclusive line range we cite.
 */
import {
  LineCounter,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseAllDocuments,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import type { AnalyzerGap, SourceFile } from '../evidence';

export interface YamlFile {
  file: SourceFile;
  doc: Document;
  lc: LineCounter;
  lines: string[];
}

export interface Lines {
  start: number;
  end: number;
}

export interface Entry {
  key: string;
  pair: Pair;
  value: Node | null;
}

export type ParsedYaml = { ok: true; y: YamlFile; root: YAMLMap } | { ok: false; gap: AnalyzerGap };

/** Parses one YAML file; a `spec:` header document (GitLab inputs) before `---` is skipped. */
export function parseYaml(
  file: SourceFile,
  opts: { allowHeaderDocument?: boolean } = {},
): ParsedYaml {
  const lc = new LineCounter();
  const parsed = parseAllDocuments(file.text, {
    lineCounter: lc,
    merge: true,
    prettyErrors: false,
  });
  const docs = Array.isArray(parsed) ? parsed : [];
  const gap = (reason: string, message: string): ParsedYaml => ({
    ok: false,
    gap: { path: file.path, reason, message },
  });
  for (const d of docs) {
    const err = d.errors[0];
    if (err) {
      // Only the first line of the parser message: later lines quote the source, which may hold a secret.
      const line = lc.linePos(err.pos[0]).line;
      const first = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
      return gap('yaml_parse_error', `YAML does not parse at line ${line}: ${first}`);
    }
  }
  let doc = docs[0];
  if (docs.length === 2 && opts.allowHeaderDocument && isMap(docs[0]?.contents)) {
    const header = docs[0].contents;
    if (header.has('spec')) doc = docs[1];
  } else if (docs.length > 1) {
    return gap('yaml_parse_error', `expected one YAML document, found ${docs.length}`);
  }
  if (!doc || !isMap(doc.contents)) {
    return gap('yaml_not_a_mapping', 'the document root is not a mapping, nothing to analyze');
  }
  return { ok: true, y: { file, doc, lc, lines: file.text.split('\n') }, root: doc.contents };
}

export function deref(y: YamlFile, node: unknown): Node | null {
  if (isAlias(node)) return node.resolve(y.doc) ?? null;
  return (node as Node | null | undefined) ?? null;
}

export function asMap(y: YamlFile, node: unknown): YAMLMap | null {
  const n = deref(y, node);
  return isMap(n) ? n : null;
}

export function asSeq(y: YamlFile, node: unknown): YAMLSeq | null {
  const n = deref(y, node);
  return isSeq(n) ? n : null;
}

function isMergeKey(key: unknown): boolean {
  return (
    isScalar(key) && (typeof key.value === 'symbol' || key.source === '<<' || key.value === '<<')
  );
}

/** The entries of a map with `<<` merge keys expanded; explicit keys win over merged ones. */
export function entries(y: YamlFile, map: YAMLMap | null): Entry[] {
  if (!map) return [];
  const out = new Map<string, Entry>();
  const explicit: Entry[] = [];
  for (const pair of map.items) {
    if (isMergeKey(pair.key)) {
      const sources = asSeq(y, pair.value)?.items ?? [pair.value];
      for (const src of sources) {
        for (const e of entries(y, asMap(y, src))) if (!out.has(e.key)) out.set(e.key, e);
      }
      continue;
    }
    const key = scalarString(y, pair.key);
    if (key === undefined) continue;
    explicit.push({ key, pair, value: deref(y, pair.value) });
  }
  for (const e of explicit) out.set(e.key, e);
  return [...out.values()];
}

export function entry(y: YamlFile, map: YAMLMap | null, key: string): Entry | undefined {
  return entries(y, map).find((e) => e.key === key);
}

export function get(y: YamlFile, map: YAMLMap | null, key: string): Node | null {
  return entry(y, map, key)?.value ?? null;
}

/** A scalar's value as a string (numbers and booleans included); undefined for collections. */
export function scalarString(y: YamlFile, node: unknown): string | undefined {
  const n = deref(y, node);
  if (!isScalar(n)) return undefined;
  const v = n.value;
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return undefined;
}

export function getString(y: YamlFile, map: YAMLMap | null, key: string): string | undefined {
  return scalarString(y, get(y, map, key));
}

/** A scalar or a list of scalars as a list of strings. */
export function stringList(y: YamlFile, node: unknown): string[] {
  const seq = asSeq(y, node);
  if (seq) return seq.items.flatMap((i) => stringList(y, i));
  const s = scalarString(y, node);
  return s === undefined ? [] : [s];
}

export function toJs(y: YamlFile, node: unknown): unknown {
  const n = deref(y, node);
  if (!n) return null;
  try {
    return n.toJS(y.doc, { maxAliasCount: 1000 }) as unknown;
  } catch {
    return null;
  }
}

function lineAt(y: YamlFile, offset: number): number {
  return y.lc.linePos(Math.max(0, offset)).line;
}

/** Last line holding a non-space character before `end` (block values end at the next line). */
function endLineBefore(y: YamlFile, start: number, end: number): number {
  let i = end - 1;
  while (i > start && /\s/.test(y.file.text[i] ?? '')) i--;
  return lineAt(y, Math.max(start, i));
}

export function nodeLines(y: YamlFile, node: unknown): Lines | null {
  const n = node as Node | null;
  const range = n?.range;
  if (!range) return null;
  return { start: lineAt(y, range[0]), end: endLineBefore(y, range[0], range[1]) };
}

/** From a pair's key through the end of its value. */
export function pairLines(y: YamlFile, pair: Pair): Lines {
  const keyRange = (pair.key as Node | null)?.range;
  const valRange = (pair.value as Node | null)?.range;
  const start = keyRange?.[0] ?? valRange?.[0] ?? 0;
  const end = valRange?.[1] ?? keyRange?.[1] ?? start;
  return { start: lineAt(y, start), end: endLineBefore(y, start, end) };
}

export function entryLines(y: YamlFile, e: Entry): Lines {
  return pairLines(y, e.pair);
}

/** The raw source text of a node (for scanning `${{ secrets.X }}` and the like). */
export function nodeSource(y: YamlFile, node: unknown): string {
  const range = (node as Node | null)?.range;
  return range ? y.file.text.slice(range[0], range[1]) : '';
}

/** The raw source text of a pair, key included. */
export function pairSource(y: YamlFile, pair: Pair): string {
  const keyRange = (pair.key as Node | null)?.range;
  const valRange = (pair.value as Node | null)?.range;
  const start = keyRange?.[0] ?? valRange?.[0];
  const end = valRange?.[1] ?? keyRange?.[1];
  return start === undefined || end === undefined ? '' : y.file.text.slice(start, end);
}

/**
 * Where a script line sits in the file: the first line inside `within` (at or after `from`)
 * containing the trimmed script line; literal blocks keep lines intact, so this is exact there.
 */
export function locateScriptLine(
  y: YamlFile,
  within: Lines,
  scriptLine: string,
  from: number,
): number | null {
  const needle = scriptLine.trim().slice(0, 60);
  if (!needle) return null;
  for (let l = Math.max(from, within.start); l <= within.end; l++) {
    if ((y.lines[l - 1] ?? '').includes(needle)) return l;
  }
  return null;
}
