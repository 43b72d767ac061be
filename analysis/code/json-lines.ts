/**
 * A strict JSON reader that keeps line numbers (JSON.parse loses them), so package.json
 * evidence can cite the exact line of a dependency. Hand-written recursive descent; on bad input
 * it reports the line of the error and never quotes the source (which may hold a secret).
 */

export type JsonNode =
  | { type: 'object'; entries: JsonEntry[]; line: number; endLine: number }
  | { type: 'array'; items: JsonNode[]; line: number; endLine: number }
  | { type: 'string'; value: string; line: number; endLine: number }
  | { type: 'other'; value: number | boolean | null; line: number; endLine: number };

export interface JsonEntry {
  key: string;
  /** Line of the key. */
  line: number;
  value: JsonNode;
}

export type JsonResult =
  { ok: true; node: JsonNode } | { ok: false; line: number; message: string };

class JsonError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

export function parseJsonWithLines(input: string): JsonResult {
  const text = input.replace(/^\uFEFF/, '');
  let i = 0;
  let line = 1;

  const ws = (): void => {
    for (;;) {
      const c = text[i];
      if (c === '\n') line++;
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
      else return;
    }
  };

  const str = (): string => {
    const start = i;
    i++; // opening quote
    let out = '';
    for (;;) {
      const c = text[i];
      if (c === undefined || c === '\n') throw new JsonError('unterminated string', start);
      if (c === '"') {
        i++;
        return out;
      }
      if (c === '\\') {
        const e = text[i + 1];
        const simple: Record<string, string> = {
          '"': '"',
          '\\': '\\',
          '/': '/',
          b: '\b',
          f: '\f',
          n: '\n',
          r: '\r',
          t: '\t',
        };
        if (e !== undefined && simple[e] !== undefined) {
          out += simple[e];
          i += 2;
        } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else throw new JsonError('bad escape', i);
        continue;
      }
      if (c.charCodeAt(0) < 0x20) throw new JsonError('control character in string', i);
      out += c;
      i++;
    }
  };

  const value = (depth: number): JsonNode => {
    if (depth > 200) throw new JsonError('nesting too deep', i);
    ws();
    const startLine = line;
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: JsonEntry[] = [];
      ws();
      if (text[i] === '}') {
        i++;
        return { type: 'object', entries, line: startLine, endLine: line };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') throw new JsonError('expected a key', i);
        const keyLine = line;
        const key = str();
        ws();
        if (text[i] !== ':') throw new JsonError('expected :', i);
        i++;
        const v = value(depth + 1);
        entries.push({ key, line: keyLine, value: v });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { type: 'object', entries, line: startLine, endLine: line };
        }
        throw new JsonError('expected , or }', i);
      }
    }
    if (c === '[') {
      i++;
      const items: JsonNode[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { type: 'array', items, line: startLine, endLine: line };
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return { type: 'array', items, line: startLine, endLine: line };
        }
        throw new JsonError('expected , or ]', i);
      }
    }
    if (c === '"') return { type: 'string', value: str(), line: startLine, endLine: line };
    const lit = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(
      text.slice(i, i + 64),
    );
    if (!lit) throw new JsonError('unexpected character', i);
    i += lit[0].length;
    const raw = lit[0];
    const v = raw === 'true' ? true : raw === 'false' ? false : raw === 'null' ? null : Number(raw);
    return { type: 'other', value: v, line: startLine, endLine: startLine };
  };

  try {
    const node = value(0);
    ws();
    if (i < text.length) throw new JsonError('unexpected text after the document', i);
    return { ok: true, node };
  } catch (err) {
    if (!(err instanceof JsonError)) throw err;
    const errLine = text.slice(0, Math.min(err.offset, text.length)).split('\n').length;
    return { ok: false, line: errLine, message: `${err.message} at line ${errLine}` };
  }
}

export function member(node: JsonNode | undefined, key: string): JsonEntry | undefined {
  if (!node || node.type !== 'object') return undefined;
  // JSON.parse semantics: the last duplicate key wins.
  for (let k = node.entries.length - 1; k >= 0; k--) {
    const e = node.entries[k];
    if (e && e.key === key) return e;
  }
  return undefined;
}

export function stringValue(node: JsonNode | undefined): string | null {
  return node && node.type === 'string' ? node.value : null;
}
