/**
 * Line positions in HCL text. The HCL parser gives no positions, so blocks are found by their
 * headers (`resource "TYPE" "NAME" {`) and matching braces, skipping strings, interpolations,
 * comments and heredocs.
 */
import type { Span } from '../shared/evidence';

export interface HclBlock extends Span {
  type: string;
  labels: string[];
}

type Mode = { kind: 'string' } | { kind: 'interp'; depth: number };

/** Top-level blocks with the lines of their header and closing brace. */
export function topLevelBlocks(text: string): HclBlock[] {
  const out: HclBlock[] = [];
  const stack: Mode[] = [];
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  let open: { header: string; line: number } | null = null;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '\n') {
      line++;
      lineStart = i + 1;
      continue;
    }
    const mode = stack[stack.length - 1];
    if (mode?.kind === 'string') {
      if (c === '\\') i++;
      else if (c === '"') stack.pop();
      else if ((c === '$' || c === '%') && next === '{') {
        stack.push({ kind: 'interp', depth: 0 });
        i++;
      }
      continue;
    }
    // Code, at top level or inside an interpolation.
    if (c === '#' || (c === '/' && next === '/')) {
      while (i + 1 < n && text[i + 1] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const close = text.indexOf('*/', i + 2);
      const stop = close < 0 ? n : close + 1;
      for (let j = i; j < stop; j++) {
        if (text[j] === '\n') {
          line++;
          lineStart = j + 1;
        }
      }
      i = stop;
    } else if (c === '"') {
      stack.push({ kind: 'string' });
    } else if (c === '<' && next === '<' && mode === undefined) {
      const m = /^<<-?([A-Za-z_][\w-]*)[ \t]*\r?\n/.exec(text.slice(i, i + 200));
      if (m) {
        // Skip to the line holding only the terminator.
        const word = m[1] ?? '';
        let j = i + m[0].length;
        line++;
        while (j < n) {
          const eol = text.indexOf('\n', j);
          const end = eol < 0 ? n : eol;
          if (text.slice(j, end).trim() === word) {
            i = end - 1;
            lineStart = j;
            break;
          }
          if (eol < 0) {
            i = n;
            break;
          }
          j = eol + 1;
          line++;
        }
      }
    } else if (c === '{') {
      if (mode?.kind === 'interp') mode.depth++;
      else {
        if (depth === 0) open = { header: text.slice(lineStart, i), line };
        depth++;
      }
    } else if (c === '}') {
      if (mode?.kind === 'interp') {
        if (mode.depth === 0) stack.pop();
        else mode.depth--;
      } else if (depth > 0) {
        depth--;
        if (depth === 0 && open) {
          const h = parseHeader(open.header);
          if (h) out.push({ ...h, start: open.line, end: line });
          open = null;
        }
      }
    }
  }
  return out;
}

function parseHeader(header: string): { type: string; labels: string[] } | null {
  const m = /^\s*([A-Za-z_][\w-]*)((?:\s+(?:"(?:[^"\\]|\\.)*"|[A-Za-z_][\w-]*))*)\s*$/.exec(header);
  if (!m) return null;
  const labels = [...(m[2] ?? '').matchAll(/"((?:[^"\\]|\\.)*)"|([A-Za-z_][\w-]*)/g)].map(
    (x) => x[1] ?? x[2] ?? '',
  );
  return { type: m[1] ?? '', labels };
}

/** First line in `span` whose text matches `re`, or null. */
export function findLine(lines: string[], span: Span, re: RegExp): number | null {
  for (let l = span.start; l <= span.end; l++) if (re.test(lines[l - 1] ?? '')) return l;
  return null;
}

/** Line of attribute `name = ...` (or nested block `name {`) inside a block, else the block header. */
export function attributeSpan(lines: string[], block: Span, name: string): Span {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const l = findLine(lines, block, new RegExp(`^\\s*${esc}\\s*(=|\\{)`));
  return l === null ? { start: block.start, end: block.start } : { start: l, end: l };
}
