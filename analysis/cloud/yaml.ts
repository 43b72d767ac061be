/**
 * YAML reading for the cloud analyzers: plain values for the logic, and line spans of nodes (via
 * the parser's LineCounter) for citations. Never throws: parse errors come back as messages.
 */
import {
  LineCounter,
  isAlias,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  parseAllDocuments,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
} from 'yaml';
import type { SourceFile } from '../evidence';
import { errorMessage, type Span } from './common';

export type PathItem = string | number;

export interface YamlDoc {
  /** 0-based position of the document in the stream. */
  index: number;
  value: unknown;
  /** Lines of the node at `path`, or of the deepest ancestor that exists. */
  span(path: readonly PathItem[]): Span;
}

export interface YamlFile {
  docs: YamlDoc[];
  /** Parser messages of documents that could not be read (first line only, no source text). */
  errors: string[];
}

/** First line of a parser message: the rest quotes the source, which may hold a secret. */
function firstLine(message: string): string {
  return (message.split('\n')[0] ?? '').replace(/:\s*$/, '');
}

export function parseYaml(file: SourceFile): YamlFile {
  const lineCounter = new LineCounter();
  let parsed: Document.Parsed[];
  try {
    parsed = Array.from(parseAllDocuments(file.text, { lineCounter, merge: true }));
  } catch (err) {
    return { docs: [], errors: [firstLine(errorMessage(err))] };
  }
  const lines = file.text.split('\n');
  const docs: YamlDoc[] = [];
  const errors: string[] = [];
  parsed.forEach((doc, index) => {
    const first = doc.errors[0];
    if (first) {
      errors.push(`document ${index + 1}: ${firstLine(first.message)}`);
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (err) {
      errors.push(`document ${index + 1}: ${firstLine(errorMessage(err))}`);
      return;
    }
    docs.push({ index, value, span: (path) => spanOf(doc, lines, lineCounter, path) });
  });
  return { docs, errors };
}

type Located = Node | Pair;

function deref(doc: Document.Parsed, v: unknown): unknown {
  return isAlias(v) ? v.resolve(doc) : v;
}

function keyOf(pair: Pair): string | null {
  const k = pair.key;
  // With `merge: true` the parser gives `<<` keys a symbol value.
  if (isScalar(k))
    return typeof k.value === 'symbol' ? (k.value.description ?? null) : String(k.value);
  return typeof k === 'string' || typeof k === 'number' ? String(k) : null;
}

function findPair(doc: Document.Parsed, map: YAMLMap, key: string, depth = 0): Pair | null {
  for (const item of map.items) if (keyOf(item) === key) return item;
  if (depth > 10) return null;
  // `<<: *anchor` merges: the key is written where the anchor is.
  for (const item of map.items) {
    if (keyOf(item) !== '<<') continue;
    const sources = isSeq(item.value) ? item.value.items : [item.value];
    for (const src of sources) {
      const target = deref(doc, src);
      if (isMap(target)) {
        const found = findPair(doc, target, key, depth + 1);
        if (found) return found;
      }
    }
  }
  return null;
}

function spanOf(
  doc: Document.Parsed,
  lines: string[],
  lc: LineCounter,
  path: readonly PathItem[],
): Span {
  let best: Located | null = isNode(doc.contents) ? doc.contents : null;
  let cur: unknown = doc.contents;
  for (const key of path) {
    cur = deref(doc, cur);
    if (isMap(cur)) {
      const pair = findPair(doc, cur, String(key));
      if (!pair) break;
      best = pair;
      cur = pair.value;
    } else if (isSeq(cur) && typeof key === 'number') {
      const item = cur.items[key];
      if (!isNode(item)) break;
      best = item;
      cur = item;
    } else break;
  }
  return best ? toSpan(best, lines, lc) : { start: 1, end: 1 };
}

function rangeOf(n: Located): [number, number] | null {
  if (isPair(n)) {
    const k = isNode(n.key) ? n.key.range : null;
    const v = isNode(n.value) ? n.value.range : null;
    const start = k?.[0] ?? v?.[0];
    const end = v?.[1] ?? k?.[1];
    return start === undefined || end === undefined ? null : [start, end];
  }
  return n.range ? [n.range[0], n.range[1]] : null;
}

function toSpan(n: Located, lines: string[], lc: LineCounter): Span {
  const r = rangeOf(n);
  if (!r) return { start: 1, end: 1 };
  const start = lc.linePos(r[0]).line;
  // Block nodes end after their last newline (and blank lines); cite the last written line.
  let end = Math.max(start, lc.linePos(Math.max(r[0], r[1] - 1)).line);
  while (end > start && /^\s*(#.*)?$/.test(lines[end - 1] ?? '')) end--;
  return { start, end };
}
