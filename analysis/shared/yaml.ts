/**
 * YAML for every analyzer: parsing with line numbers, alias and `<<` merge-key resolution, and
 * the lines a node is cited at. Two views of one parse: the node tree of a single mapping
 * document (the CI readers walk it), and plain values per document with the span of any path
 * (the cloud readers). Never throws: a file that does not parse comes back as a message.
 */
import {
  LineCounter,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  parseAllDocuments,
  visit,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import type { AnalyzerGap, SourceFile } from '../evidence';
import type { Span } from './evidence';
import { errorMessage } from './text';

// ---------------------------------------------------------------------------------------------
// One parse

interface Stream {
  docs: Document.Parsed[];
  lc: LineCounter;
}

function readStream(file: SourceFile): Stream | string {
  const lc = new LineCounter();
  try {
    const parsed = parseAllDocuments(file.text, {
      lineCounter: lc,
      merge: true,
      prettyErrors: false,
      // The parser's own duplicate-key check scans a map's keys for each key (quadratic: 1.4 s
      // of a 6,000-service compose file); duplicateKey below does it with a set.
      uniqueKeys: false,
    });
    return { docs: Array.from(parsed), lc };
  } catch (err) {
    return `YAML does not parse: ${errorMessage(err)}`;
  }
}

/** The parser's first complaint about a document, with its line; null when it parsed. */
function documentError(doc: Document.Parsed, lc: LineCounter): string | null {
  const err = doc.errors[0] ?? duplicateKey(doc);
  if (!err) return null;
  const line = lc.linePos(err.pos[0]).line;
  // Only the first line of the message: later lines quote the source, which may hold a secret.
  const first = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
  return `YAML does not parse at line ${line}: ${first}`;
}

/** The parser's DUPLICATE_KEY error (same rule: equal scalar values), found in linear time. */
function duplicateKey(doc: Document.Parsed): { pos: [number, number]; message: string } | null {
  let found: { pos: [number, number]; message: string } | null = null;
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value)) {
          const at = pair.key.range?.[0] ?? 0;
          found = { pos: [at, at], message: 'Map keys must be unique' };
          return visit.BREAK;
        }
        seen.add(pair.key.value);
      }
      return undefined;
    },
  });
  return found;
}

function resolve(doc: Document, node: unknown): Node | null {
  if (isAlias(node)) return (node.resolve(doc) as Node | undefined) ?? null;
  return (node as Node | null | undefined) ?? null;
}

/** A scalar's value as a string (numbers and booleans included); undefined for anything else. */
function scalarText(doc: Document, node: unknown): string | undefined {
  const n = resolve(doc, node);
  if (!isScalar(n)) return undefined;
  const v = n.value;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return undefined;
}

function isMergeKey(key: unknown): boolean {
  return (
    isScalar(key) && (typeof key.value === 'symbol' || key.source === '<<' || key.value === '<<')
  );
}

export interface Entry {
  key: string;
  pair: Pair;
  value: Node | null;
}

/**
 * The bound on alias expansion (the `yaml` package's count: uses of an anchor times the aliases
 * inside it). Its default (100) and the 1,000 used before refused real compose files built from
 * shared anchors (a 57-service file needs ~2,000); 20,000 still stops an entity-expansion bomb
 * (ten levels of ten aliases) within milliseconds.
 */
const MAX_ALIAS_COUNT = 20_000;

/** Merges deeper than this are a loop (`&a { <<: *a }`), not configuration. */
const MAX_MERGE_DEPTH = 10;

/**
 * A map's entries with `<<` merge keys expanded: keys written in the map win over merged ones,
 * and of several merged maps the first that has a key gives it.
 */
function mapEntries(doc: Document, map: YAMLMap | null, depth = 0): Entry[] {
  if (!map) return [];
  const out = new Map<string, Entry>();
  const explicit: Entry[] = [];
  for (const pair of map.items) {
    if (isMergeKey(pair.key)) {
      if (depth >= MAX_MERGE_DEPTH) continue;
      const value = resolve(doc, pair.value);
      const sources = isSeq(value) ? value.items : [value];
      for (const src of sources) {
        const m = resolve(doc, src);
        if (!isMap(m)) continue;
        for (const e of mapEntries(doc, m, depth + 1)) if (!out.has(e.key)) out.set(e.key, e);
      }
      continue;
    }
    const key = scalarText(doc, pair.key);
    if (key === undefined) continue;
    explicit.push({ key, pair, value: resolve(doc, pair.value) });
  }
  for (const e of explicit) out.set(e.key, e);
  return [...out.values()];
}

// ---------------------------------------------------------------------------------------------
// Lines

/**
 * Where a node's written content ends. A block collection's range runs on over trailing
 * comments and the next key's indentation, so it ends where its last item's value does; a
 * flow collection ends at its closing bracket; a scalar at its range (a block scalar's lines
 * that start with `#` are its content, not comments).
 */
function contentEnd(node: unknown): number | null {
  if ((isMap(node) || isSeq(node)) && !node.flow) {
    const items = node.items as unknown[];
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i];
      const end = isPair(item)
        ? (contentEnd(item.value) ?? contentEnd(item.key))
        : contentEnd(item);
      if (end !== null) return end;
    }
  }
  return (node as Node | null | undefined)?.range?.[1] ?? null;
}

/** Lines from offset `start` to the last line before offset `end` that holds a character. */
function linesBetween(text: string, lc: LineCounter, start: number, end: number): Span {
  let i = end - 1;
  while (i > start && /\s/.test(text[i] ?? '')) i--;
  return {
    start: lc.linePos(Math.max(0, start)).line,
    end: lc.linePos(Math.max(0, start, i)).line,
  };
}

function nodeSpan(text: string, lc: LineCounter, node: unknown): Span | null {
  const start = (node as Node | null | undefined)?.range?.[0];
  if (start === undefined) return null;
  return linesBetween(text, lc, start, contentEnd(node) ?? start);
}

/** From a pair's key through the end of its value. */
function pairSpan(text: string, lc: LineCounter, pair: Pair): Span {
  const start = (pair.key as Node | null)?.range?.[0] ?? (pair.value as Node | null)?.range?.[0];
  const end = contentEnd(pair.value) ?? contentEnd(pair.key) ?? start ?? 0;
  return linesBetween(text, lc, start ?? 0, end);
}

// ---------------------------------------------------------------------------------------------
// The node tree of one mapping document

export type ParsedYaml = { ok: true; y: YamlFile; root: YAMLMap } | { ok: false; gap: AnalyzerGap };

/**
 * A file holding one mapping document. With `allowHeaderDocument`, a first document holding a
 * `spec:` header (GitLab CI inputs) is skipped.
 */
export function parseYamlMapping(
  file: SourceFile,
  opts: { allowHeaderDocument?: boolean } = {},
): ParsedYaml {
  const gap = (reason: string, message: string): ParsedYaml => ({
    ok: false,
    gap: { path: file.path, reason, message },
  });
  const stream = readStream(file);
  if (typeof stream === 'string') return gap('yaml_parse_error', stream);
  const { docs, lc } = stream;
  for (const d of docs) {
    const error = documentError(d, lc);
    if (error) return gap('yaml_parse_error', error);
  }
  let doc = docs[0];
  if (docs.length === 2 && opts.allowHeaderDocument && isMap(docs[0]?.contents)) {
    if (docs[0].contents.has('spec')) doc = docs[1];
  } else if (docs.length > 1) {
    return gap('yaml_parse_error', `expected one YAML document, found ${docs.length}`);
  }
  if (!doc || !isMap(doc.contents)) {
    return gap('yaml_not_a_mapping', 'the document root is not a mapping, nothing to analyze');
  }
  return { ok: true, y: new YamlFile(file, doc, lc), root: doc.contents };
}

/**
 * One parsed mapping document and its file: reads its nodes (aliases and `<<` merge keys
 * resolved) and says at which lines they are written.
 */
export class YamlFile {
  readonly lines: string[];

  constructor(
    readonly file: SourceFile,
    readonly doc: Document,
    readonly lc: LineCounter,
  ) {
    this.lines = file.text.split('\n');
  }

  deref(node: unknown): Node | null {
    return resolve(this.doc, node);
  }

  asMap(node: unknown): YAMLMap | null {
    const n = this.deref(node);
    return isMap(n) ? n : null;
  }

  asSeq(node: unknown): YAMLSeq | null {
    const n = this.deref(node);
    return isSeq(n) ? n : null;
  }

  /** The entries of a map, `<<` merge keys expanded (explicit keys win over merged ones). */
  entries(map: YAMLMap | null): Entry[] {
    return mapEntries(this.doc, map);
  }

  entry(map: YAMLMap | null, key: string): Entry | undefined {
    return map ? entryIndex(this.doc, map).get(key) : undefined;
  }

  get(map: YAMLMap | null, key: string): Node | null {
    return this.entry(map, key)?.value ?? null;
  }

  /** A scalar's value as a string (numbers and booleans included); undefined for collections. */
  scalarString(node: unknown): string | undefined {
    return scalarText(this.doc, node);
  }

  getString(map: YAMLMap | null, key: string): string | undefined {
    return this.scalarString(this.get(map, key));
  }

  /** A scalar or a list of scalars as a list of strings. */
  stringList(node: unknown): string[] {
    const seq = this.asSeq(node);
    if (seq) return seq.items.flatMap((i) => this.stringList(i));
    const s = this.scalarString(node);
    return s === undefined ? [] : [s];
  }

  toJs(node: unknown): unknown {
    const n = this.deref(node);
    if (!n) return null;
    try {
      return n.toJS(this.doc, { maxAliasCount: MAX_ALIAS_COUNT }) as unknown;
    } catch {
      return null;
    }
  }

  nodeLines(node: unknown): Span | null {
    return nodeSpan(this.file.text, this.lc, node);
  }

  /** From a pair's key through the end of its value. */
  pairLines(pair: Pair): Span {
    return pairSpan(this.file.text, this.lc, pair);
  }

  entryLines(e: Entry): Span {
    return this.pairLines(e.pair);
  }

  /** The raw source text of a pair, key included. */
  pairSource(pair: Pair): string {
    const keyRange = (pair.key as Node | null)?.range;
    const valRange = (pair.value as Node | null)?.range;
    const start = keyRange?.[0] ?? valRange?.[0];
    const end = valRange?.[1] ?? keyRange?.[1];
    return start === undefined || end === undefined ? '' : this.file.text.slice(start, end);
  }

  /**
   * Where a script line sits in the file: the first line inside `within` (at or after `from`)
   * containing the trimmed script line; literal blocks keep lines intact, so this is exact there.
   */
  locateScriptLine(within: Span, scriptLine: string, from: number): number | null {
    const needle = scriptLine.trim().slice(0, 60);
    if (!needle) return null;
    for (let l = Math.max(from, within.start); l <= within.end; l++) {
      if ((this.lines[l - 1] ?? '').includes(needle)) return l;
    }
    return null;
  }
}

export type PathItem = string | number;

export interface YamlDoc {
  /** 0-based position of the document in the stream. */
  index: number;
  value: unknown;
  /** Lines of the node at `path`, or of the deepest ancestor that exists. */
  span(path: readonly PathItem[]): Span;
}

export interface YamlDocuments {
  docs: YamlDoc[];
  /** Why documents could not be read (first line of the parser's message, no source text). */
  errors: string[];
}

/** Every document of a stream; one that does not parse is an error and the others are read. */
export function parseYamlDocuments(file: SourceFile): YamlDocuments {
  const stream = readStream(file);
  if (typeof stream === 'string') return { docs: [], errors: [stream] };
  const { lc } = stream;
  const docs: YamlDoc[] = [];
  const errors: string[] = [];
  stream.docs.forEach((doc, index) => {
    const error = documentError(doc, lc);
    if (error) {
      errors.push(`document ${index + 1}: ${error}`);
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      errors.push(`document ${index + 1}: ${errorMessage(err)}`);
      return;
    }
    docs.push({ index, value, span: (path) => spanAt(file.text, lc, doc, path) });
  });
  return { docs, errors };
}

/**
 * A map's entries by key, built once per map node: a span lookup in a map of n keys is then
 * O(1), not O(n), so citing every service of a 10,000-service file stays linear (issue 24).
 */
const entryIndexes = new WeakMap<YAMLMap, Map<string, Entry>>();
function entryIndex(doc: Document, map: YAMLMap): Map<string, Entry> {
  let index = entryIndexes.get(map);
  if (!index) {
    index = new Map(mapEntries(doc, map).map((e) => [e.key, e]));
    entryIndexes.set(map, index);
  }
  return index;
}

function spanAt(text: string, lc: LineCounter, doc: Document, path: readonly PathItem[]): Span {
  let best: Span | null = nodeSpan(text, lc, doc.contents);
  let cur: Node | null = resolve(doc, doc.contents);
  for (const key of path) {
    if (isMap(cur)) {
      // Through `<<` merges: the key is cited where the anchor writes it.
      const e = entryIndex(doc, cur).get(String(key));
      if (!e) break;
      best = pairSpan(text, lc, e.pair);
      cur = e.value;
    } else if (isSeq(cur) && typeof key === 'number') {
      const item = resolve(doc, cur.items[key]);
      const span = nodeSpan(text, lc, cur.items[key]);
      if (!item || !span) break;
      best = span;
      cur = item;
    } else break;
  }
  return best ?? { start: 1, end: 1 };
}
