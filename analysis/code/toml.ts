/**
 * A minimal TOML reader, hand-written because no TOML library is a runtime dependency. It reads
 * what package manifests use (pyproject.toml, Cargo.toml, Pipfile): table headers `[a.b]` and
 * `[[a]]`, dotted/quoted keys, basic and literal strings (single- and multi-line), arrays (also
 * multi-line, with comments), inline tables, and keeps any other scalar (numbers, booleans,
 * dates) as raw text. Every value carries its line numbers so evidence can cite it.
 *
 * It is tolerant: a line it cannot read is recorded in `errors` and skipped. It never throws.
 */

export interface TomlString {
  kind: 'string';
  value: string;
  line: number;
  endLine: number;
}

export interface TomlArray {
  kind: 'array';
  items: TomlValue[];
  line: number;
  endLine: number;
}

export interface TomlInlineTable {
  kind: 'table';
  entries: TomlEntry[];
  line: number;
  endLine: number;
}

export interface TomlOther {
  kind: 'other';
  raw: string;
  line: number;
  endLine: number;
}

export type TomlValue = TomlString | TomlArray | TomlInlineTable | TomlOther;

export interface TomlEntry {
  key: string[];
  value: TomlValue;
  line: number;
  endLine: number;
}

export interface TomlAssignment extends TomlEntry {
  /** Header of the table the assignment is in ([] for the top level). */
  table: string[];
  /** table + key. */
  path: string[];
}

export interface TomlHeader {
  path: string[];
  line: number;
  arrayTable: boolean;
}

export interface TomlDocument {
  assignments: TomlAssignment[];
  headers: TomlHeader[];
  errors: { line: number; message: string }[];
}

class TomlError extends Error {}

class Reader {
  i = 0;
  line = 1;

  constructor(readonly text: string) {}

  peek(offset = 0): string {
    return this.text[this.i + offset] ?? '';
  }

  startsWith(s: string): boolean {
    return this.text.startsWith(s, this.i);
  }

  advance(count = 1): void {
    for (let k = 0; k < count && this.i < this.text.length; k++) {
      if (this.text[this.i] === '\n') this.line++;
      this.i++;
    }
  }

  eof(): boolean {
    return this.i >= this.text.length;
  }

  /** Spaces and tabs only. */
  skipInline(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.advance();
  }

  skipComment(): void {
    if (this.peek() === '#') while (!this.eof() && this.peek() !== '\n') this.advance();
  }

  /** Whitespace, newlines and comments (inside arrays and between statements). */
  skipAll(): void {
    for (;;) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') this.advance();
      else if (c === '#') this.skipComment();
      else return;
    }
  }

  skipToLineEnd(): void {
    while (!this.eof() && this.peek() !== '\n') this.advance();
  }
}

function readBasicString(r: Reader, multiline: boolean): string {
  const quoteLen = multiline ? 3 : 1;
  r.advance(quoteLen);
  if (multiline && r.peek() === '\r') r.advance();
  if (multiline && r.peek() === '\n') r.advance();
  let out = '';
  for (;;) {
    if (r.eof()) throw new TomlError('unterminated string');
    if (multiline ? r.startsWith('"""') : r.peek() === '"') {
      // A multi-line string may end with up to two extra quotes.
      if (multiline) {
        while (r.startsWith('""""')) {
          out += '"';
          r.advance();
        }
      }
      r.advance(quoteLen);
      return out;
    }
    const c = r.peek();
    if (c === '\n' && !multiline) throw new TomlError('newline in string');
    if (c === '\\') {
      const e = r.peek(1);
      const simple: Record<string, string> = {
        b: '\b',
        t: '\t',
        n: '\n',
        f: '\f',
        r: '\r',
        '"': '"',
        '\\': '\\',
      };
      if (simple[e] !== undefined) {
        out += simple[e];
        r.advance(2);
      } else if (e === 'u' || e === 'U') {
        const len = e === 'u' ? 4 : 8;
        const hex = r.text.slice(r.i + 2, r.i + 2 + len);
        const code = /^[0-9a-fA-F]+$/.test(hex) ? parseInt(hex, 16) : NaN;
        out += Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : '';
        r.advance(2 + len);
      } else if (multiline && /[ \t\r\n]/.test(e)) {
        // Line-ending backslash: trim the following whitespace.
        r.advance();
        while (/[ \t\r\n]/.test(r.peek())) r.advance();
      } else {
        out += e;
        r.advance(2);
      }
      continue;
    }
    out += c;
    r.advance();
  }
}

function readLiteralString(r: Reader, multiline: boolean): string {
  const quoteLen = multiline ? 3 : 1;
  r.advance(quoteLen);
  if (multiline && r.peek() === '\r') r.advance();
  if (multiline && r.peek() === '\n') r.advance();
  let out = '';
  for (;;) {
    if (r.eof()) throw new TomlError('unterminated string');
    if (multiline ? r.startsWith("'''") : r.peek() === "'") {
      if (multiline) {
        while (r.startsWith("''''")) {
          out += "'";
          r.advance();
        }
      }
      r.advance(quoteLen);
      return out;
    }
    if (r.peek() === '\n' && !multiline) throw new TomlError('newline in string');
    out += r.peek();
    r.advance();
  }
}

function readKeyPart(r: Reader): string {
  const c = r.peek();
  if (c === '"') return readBasicString(r, false);
  if (c === "'") return readLiteralString(r, false);
  let out = '';
  while (/[A-Za-z0-9_-]/.test(r.peek())) {
    out += r.peek();
    r.advance();
  }
  if (out === '') throw new TomlError('expected a key');
  return out;
}

function readKey(r: Reader): string[] {
  const parts: string[] = [];
  for (;;) {
    r.skipInline();
    parts.push(readKeyPart(r));
    r.skipInline();
    if (r.peek() !== '.') return parts;
    r.advance();
  }
}

function readValue(r: Reader, depth: number): TomlValue {
  if (depth > 64) throw new TomlError('nesting too deep');
  const line = r.line;
  const c = r.peek();
  if (c === '"') {
    const value = readBasicString(r, r.startsWith('"""'));
    return { kind: 'string', value, line, endLine: r.line };
  }
  if (c === "'") {
    const value = readLiteralString(r, r.startsWith("'''"));
    return { kind: 'string', value, line, endLine: r.line };
  }
  if (c === '[') {
    r.advance();
    const items: TomlValue[] = [];
    for (;;) {
      r.skipAll();
      if (r.eof()) throw new TomlError('unterminated array');
      if (r.peek() === ']') {
        r.advance();
        return { kind: 'array', items, line, endLine: r.line };
      }
      items.push(readValue(r, depth + 1));
      r.skipAll();
      if (r.peek() === ',') r.advance();
      else if (r.peek() !== ']') throw new TomlError('expected , or ] in array');
    }
  }
  if (c === '{') {
    r.advance();
    const entries: TomlEntry[] = [];
    for (;;) {
      r.skipAll();
      if (r.eof()) throw new TomlError('unterminated inline table');
      if (r.peek() === '}') {
        r.advance();
        return { kind: 'table', entries, line, endLine: r.line };
      }
      const entryLine = r.line;
      const key = readKey(r);
      r.skipInline();
      if (r.peek() !== '=') throw new TomlError('expected = in inline table');
      r.advance();
      r.skipInline();
      const value = readValue(r, depth + 1);
      entries.push({ key, value, line: entryLine, endLine: r.line });
      r.skipAll();
      if (r.peek() === ',') r.advance();
      else if (r.peek() !== '}') throw new TomlError('expected , or } in inline table');
    }
  }
  let raw = '';
  while (!r.eof() && !/[,\]}#\n\r]/.test(r.peek())) {
    raw += r.peek();
    r.advance();
  }
  raw = raw.trim();
  if (raw === '') throw new TomlError('expected a value');
  return { kind: 'other', raw, line, endLine: line };
}

export function readToml(text: string): TomlDocument {
  const doc: TomlDocument = { assignments: [], headers: [], errors: [] };
  const r = new Reader(text.replace(/^\uFEFF/, ''));
  let table: string[] = [];
  while (!r.eof()) {
    r.skipAll();
    if (r.eof()) break;
    const line = r.line;
    try {
      if (r.peek() === '[') {
        const arrayTable = r.startsWith('[[');
        r.advance(arrayTable ? 2 : 1);
        const path = readKey(r);
        r.skipInline();
        if (!r.startsWith(arrayTable ? ']]' : ']'))
          throw new TomlError('expected ] after table name');
        r.advance(arrayTable ? 2 : 1);
        table = path;
        doc.headers.push({ path, line, arrayTable });
      } else {
        const key = readKey(r);
        r.skipInline();
        if (r.peek() !== '=') throw new TomlError('expected =');
        r.advance();
        r.skipInline();
        const value = readValue(r, 0);
        doc.assignments.push({
          table,
          key,
          path: [...table, ...key],
          value,
          line,
          endLine: r.line,
        });
      }
      r.skipInline();
      r.skipComment();
      if (r.peek() === '\r') r.advance();
      if (!r.eof() && r.peek() !== '\n') throw new TomlError('unexpected text after value');
    } catch (err) {
      if (!(err instanceof TomlError)) throw err;
      doc.errors.push({ line: r.line, message: err.message });
      // Resume on the line after the error.
      r.skipToLineEnd();
    }
  }
  return doc;
}

/** The string items of an array value (other items are ignored). */
export function stringItems(v: TomlValue | undefined): TomlString[] {
  if (!v || v.kind !== 'array') return [];
  return v.items.filter((x): x is TomlString => x.kind === 'string');
}

export function tomlText(v: TomlValue | undefined): string | null {
  if (!v) return null;
  if (v.kind === 'string') return v.value;
  if (v.kind === 'other') return v.raw;
  return null;
}
