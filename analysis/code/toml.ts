/**
 * The assignments and table headers of a TOML package manifest (pyproject.toml, Cargo.toml,
 * Pipfile), read with toml-eslint-parser (a maintained TOML 1.0/1.1 parser that gives every node
 * its lines; docs/decisions.md says why it and not a smaller parser). Every value carries its
 * line numbers so evidence can cite it. Numbers, booleans and dates are kept as their raw text.
 *
 * It is tolerant, as a manifest reader must be: the parser stops at the first error, so the
 * statement holding it is blanked (lines kept, so positions stay true), the error recorded in
 * `errors` and the rest read again, at most MAX_RECOVERIES times. It never throws.
 */
import { parseTOML, ParseError, type AST } from 'toml-eslint-parser';

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

/** How many broken statements one file may have before the reader gives up on the rest. */
const MAX_RECOVERIES = 32;

const KEY_PART = String.raw`(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')`;
/** A line that starts a statement: a table header or `key =` (used only to recover). */
const STATEMENT_START = new RegExp(String.raw`^\s*(?:\[|${KEY_PART}(?:\s*\.\s*${KEY_PART})*\s*=)`);

function keyOf(key: AST.TOMLKey): string[] {
  return key.keys.map((k) => (k.type === 'TOMLBare' ? k.name : k.value));
}

function valueOf(node: AST.TOMLContentNode, source: string): TomlValue {
  const line = node.loc.start.line;
  const endLine = node.loc.end.line;
  switch (node.type) {
    case 'TOMLArray':
      return { kind: 'array', items: node.elements.map((e) => valueOf(e, source)), line, endLine };
    case 'TOMLInlineTable':
      return { kind: 'table', entries: node.body.map((kv) => entryOf(kv, source)), line, endLine };
    default:
      if (node.kind === 'string') return { kind: 'string', value: node.value, line, endLine };
      return {
        kind: 'other',
        raw: source.slice(node.range[0], node.range[1]),
        line,
        endLine: line,
      };
  }
}

function entryOf(kv: AST.TOMLKeyValue, source: string): TomlEntry {
  return {
    key: keyOf(kv.key),
    value: valueOf(kv.value, source),
    line: kv.loc.start.line,
    endLine: kv.loc.end.line,
  };
}

function documentOf(program: AST.TOMLProgram, source: string): TomlDocument {
  const doc: TomlDocument = { assignments: [], headers: [], errors: [] };
  const assign = (table: string[], kv: AST.TOMLKeyValue): void => {
    const { key, value, line, endLine } = entryOf(kv, source);
    doc.assignments.push({ table, key, path: [...table, ...key], value, line, endLine });
  };
  for (const node of program.body[0].body) {
    if (node.type === 'TOMLKeyValue') {
      assign([], node);
      continue;
    }
    const path = keyOf(node.key);
    doc.headers.push({ path, line: node.loc.start.line, arrayTable: node.kind === 'array' });
    for (const kv of node.body) assign(path, kv);
  }
  return doc;
}

export function readToml(text: string): TomlDocument {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  const errors: TomlDocument['errors'] = [];
  let lastBlanked = 0;
  for (let attempt = 0; attempt <= MAX_RECOVERIES; attempt++) {
    const source = lines.join('\n');
    try {
      return { ...documentOf(parseTOML(source, { tomlVersion: '1.1' }), source), errors };
    } catch (err) {
      if (!(err instanceof ParseError)) {
        // Not a syntax error (a document nested too deep for the parser): nothing is read.
        errors.push({ line: 0, message: err instanceof Error ? err.message : String(err) });
        break;
      }
      const line = err.lineNumber;
      let from = line;
      if (line > lastBlanked) {
        errors.push({ line, message: err.message });
      } else {
        // Blanking the error's line did not help: a value opened on an earlier line (an array,
        // an inline table, a multi-line string) is unterminated. Blank back to its statement.
        while (from > 1 && !STATEMENT_START.test(lines[from - 1] ?? '')) from--;
      }
      for (let l = from; l <= line; l++) lines[l - 1] = '';
      lastBlanked = Math.max(lastBlanked, line);
    }
  }
  return { assignments: [], headers: [], errors };
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
