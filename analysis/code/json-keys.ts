/**
 * The full key of each line of a JSON settings file (`appsettings.json`): nested objects are
 * read with their parents (`"Redis": { "Configuration": "redis" }` is `Redis.Configuration`,
 * `"RabbitMQ": { "Connections": { "Default": { "HostName": ... } } }` is
 * `RabbitMQ.Connections.Default.HostName`), as .NET configuration reads them
 * (`Redis:Configuration`), so a nested key names its engine or its role as a flat one does.
 * Tolerant of what settings files hold (comments already blanked by the lexer, trailing commas):
 * a character scan, not a parser.
 */

export interface JsonKeys {
  /** The dotted key path of the first key on a line (1-based), or of the list an item is in. */
  line: Map<number, string>;
  /** The key path a value at this offset is given under (the last key or list before it). */
  at(offset: number): string | null;
}

/** The dotted key paths of a JSON text's keys, by line and by offset. */
export function jsonKeyPaths(code: string): JsonKeys {
  const out = new Map<number, string>();
  const offsets: number[] = [];
  const paths: string[] = [];
  const mark = (offset: number, p: string) => {
    offsets.push(offset);
    paths.push(p);
  };
  // Open containers: the key each was opened under ('' for the root or a list item).
  const stack: string[] = [];
  let line = 1;
  let pending: string | null = null;
  let lastString: string | null = null;
  let lineHasKey = false;
  const path = (own: string | null) => [...stack, ...(own ? [own] : [])].filter(Boolean).join('.');
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (c === '\n') {
      line++;
      lineHasKey = false;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let s = '';
      while (j < code.length && code[j] !== '"' && code[j] !== '\n') {
        if (code[j] === '\\') j++;
        s += code[j] ?? '';
        j++;
      }
      lastString = s;
      // An item of a list: the line belongs to the list's key.
      if (!lineHasKey && !out.has(line) && stack.length > 0) out.set(line, path(null));
      if (pending === null && stack.length > 0) mark(i, path(null));
      i = j;
      continue;
    }
    if (c === ':' && lastString !== null) {
      pending = lastString;
      lastString = null;
      if (!lineHasKey) out.set(line, path(pending));
      mark(i, path(pending));
      lineHasKey = true;
      continue;
    }
    if (c === '{' || c === '[') {
      stack.push(pending ?? '');
      pending = null;
      lastString = null;
      continue;
    }
    if (c === '}' || c === ']') {
      stack.pop();
      pending = null;
      lastString = null;
      continue;
    }
    if (c === ',') {
      pending = null;
      lastString = null;
    }
  }
  const at = (offset: number): string | null => {
    let lo = 0;
    let hi = offsets.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((offsets[mid] ?? 0) <= offset) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? null : (paths[found] ?? null);
  };
  return { line: out, at };
}
