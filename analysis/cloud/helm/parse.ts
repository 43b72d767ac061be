/**
 * Go `text/template` syntax, as Helm charts write it, parsed to a tree: text, actions with
 * pipelines, `if`/`else if`/`with`/`range`/`define`/`template`/`block`, `break`/`continue`,
 * variables (`$`, `$x := ...`, `$x = ...`), trim markers (`{{-`, `-}}`) and comments. Every node
 * keeps the line it starts at, so rendered output maps back to its template. Never throws: a
 * template that does not parse comes back with the parser's reason (a coverage gap upstream).
 * Hand-written: there is no maintained JavaScript implementation of Go templates (docs/decisions.md).
 */

export type Operand =
  | { t: 'dot' }
  | { t: 'field'; of: Operand | null; names: string[] }
  | { t: 'var'; name: string; names: string[] }
  | { t: 'lit'; value: unknown }
  | { t: 'ident'; name: string }
  | { t: 'sub'; pipe: Pipe; names: string[] };

export interface Command {
  args: Operand[];
}

export interface Pipe {
  /** Variables declared (`:=`) or assigned (`=`) by the pipeline. */
  vars: string[];
  assign: boolean;
  cmds: Command[];
}

export type Node =
  | { t: 'text'; text: string; line: number }
  | { t: 'action'; pipe: Pipe; line: number }
  | { t: 'if' | 'with'; pipe: Pipe; body: Node[]; alt: Node[]; line: number }
  | { t: 'range'; pipe: Pipe; body: Node[]; alt: Node[]; line: number }
  | { t: 'template'; name: string; pipe: Pipe | null; line: number }
  | { t: 'break' | 'continue'; line: number };

export interface Parsed {
  root: Node[];
  defines: Map<string, Node[]>;
}

export class TemplateSyntaxError extends Error {}

const WS = /[ \t\r\n]/;

interface RawAction {
  text: string;
  line: number;
}

type Item = { kind: 'text'; text: string; line: number } | { kind: 'action'; a: RawAction };

/** Splits a template into text and actions, applying trim markers and dropping comments. */
function scan(src: string): Item[] {
  const items: Item[] = [];
  let i = 0;
  let line = 1;
  let trimNext = false;
  const countLines = (s: string) => {
    let n = 0;
    for (let k = 0; k < s.length; k++) if (s.charCodeAt(k) === 10) n++;
    return n;
  };
  const pushText = (text: string, at: number) => {
    let t = text;
    let l = at;
    if (trimNext) {
      const m = /^[ \t\r\n]*/.exec(t)![0];
      l += countLines(m);
      t = t.slice(m.length);
      trimNext = false;
    }
    if (t) items.push({ kind: 'text', text: t, line: l });
  };
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    if (open < 0) {
      pushText(src.slice(i), line);
      break;
    }
    let text = src.slice(i, open);
    const textLine = line;
    line += countLines(text);
    let j = open + 2;
    const leftTrim = src[j] === '-' && WS.test(src[j + 1] ?? '');
    if (leftTrim) {
      j += 2;
      text = text.replace(/[ \t\r\n]+$/, '');
    }
    pushText(text, textLine);
    // The action's end: the first `}}` outside quotes.
    let k = j;
    let quote: string | null = null;
    while (k < src.length) {
      const c = src[k]!;
      if (quote) {
        if (c === '\\' && quote !== '`') k++;
        else if (c === quote) quote = null;
      } else if (c === '"' || c === '`' || c === "'") quote = c;
      else if (c === '/' && src[k + 1] === '*') {
        const end = src.indexOf('*/', k + 2);
        if (end < 0) throw new TemplateSyntaxError(`unclosed comment at line ${line}`);
        k = end + 1;
      } else if (c === '}' && src[k + 1] === '}') break;
      k++;
    }
    if (k >= src.length) throw new TemplateSyntaxError(`unclosed action at line ${line}`);
    let body = src.slice(j, k);
    const rightTrim = /[ \t\r\n]-$/.test(body);
    if (rightTrim) body = body.slice(0, -2);
    const actionLine = line;
    line += countLines(src.slice(open, k + 2));
    i = k + 2;
    trimNext = rightTrim;
    if (/^\s*\/\*[\s\S]*\*\/\s*$/.test(body)) continue;
    items.push({ kind: 'action', a: { text: body, line: actionLine } });
  }
  return items;
}

type Tok =
  | { k: 'str' | 'num' | 'bool' | 'nil'; v: unknown }
  | { k: 'field'; names: string[] }
  | { k: 'var'; name: string; names: string[] }
  | { k: 'ident'; name: string }
  | { k: '(' | ')' | '|' | ':=' | '=' | ',' }
  | { k: 'fieldsAfter'; names: string[] };

function unquote(s: string): string {
  if (s.startsWith('`')) return s.slice(1, -1);
  try {
    return JSON.parse(s.replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1')) as string;
  } catch {
    throw new TemplateSyntaxError(`bad string literal`);
  }
}

function tokenize(a: RawAction): Tok[] {
  const s = a.text;
  const out: Tok[] = [];
  let i = 0;
  const err = (what: string) => new TemplateSyntaxError(`${what} at line ${a.line}`);
  while (i < s.length) {
    const c = s[i]!;
    if (WS.test(c)) {
      i++;
      continue;
    }
    const rest = s.slice(i);
    let m: RegExpExecArray | null;
    if (c === '(' || c === ')' || c === '|' || c === ',') {
      out.push({ k: c });
      i++;
    } else if (rest.startsWith(':=')) {
      out.push({ k: ':=' });
      i += 2;
    } else if (c === '=') {
      out.push({ k: '=' });
      i++;
    } else if ((m = /^"(?:[^"\\\n]|\\.)*"|^`[^`]*`/.exec(rest))) {
      out.push({ k: 'str', v: unquote(m[0]) });
      i += m[0].length;
    } else if ((m = /^'(?:[^'\\]|\\.)'/.exec(rest))) {
      out.push({ k: 'num', v: unquote(`"${m[0].slice(1, -1)}"`).charCodeAt(0) });
      i += m[0].length;
    } else if (
      (m = /^[+-]?(0x[0-9a-fA-F_]+|(\d[\d_]*)?\.?\d+([eE][+-]?\d+)?)(?![\w.])/.exec(rest))
    ) {
      const n = Number(m[0].replace(/_/g, ''));
      if (Number.isNaN(n)) throw err('bad number');
      out.push({ k: 'num', v: n });
      i += m[0].length;
    } else if ((m = /^(\.[A-Za-z_]\w*)+/.exec(rest))) {
      const names = m[0].slice(1).split('.');
      const prev = out[out.length - 1];
      // `(pipeline).Field`: fields applied to a parenthesized result.
      if (prev?.k === ')' && i > 0 && s[i - 1] === ')') out.push({ k: 'fieldsAfter', names });
      else out.push({ k: 'field', names });
      i += m[0].length;
    } else if (c === '.') {
      out.push({ k: 'field', names: [] });
      i++;
    } else if ((m = /^\$(\w*)((?:\.[A-Za-z_]\w*)*)/.exec(rest))) {
      out.push({ k: 'var', name: `$${m[1]}`, names: m[2] ? m[2].slice(1).split('.') : [] });
      i += m[0].length;
    } else if ((m = /^[A-Za-z_]\w*/.exec(rest))) {
      const w = m[0];
      if (w === 'true' || w === 'false') out.push({ k: 'bool', v: w === 'true' });
      else if (w === 'nil') out.push({ k: 'nil', v: null });
      else out.push({ k: 'ident', name: w });
      i += w.length;
    } else throw err(`unexpected "${c}"`);
  }
  return out;
}

class PipeParser {
  i = 0;
  constructor(
    private toks: Tok[],
    private line: number,
  ) {}
  err(what: string): TemplateSyntaxError {
    return new TemplateSyntaxError(`${what} at line ${this.line}`);
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }
  /** A pipeline: optional `$a[, $b] :=` or `$a =`, then commands separated by `|`. */
  pipe(allowDecl: boolean, stopAtParen = false): Pipe {
    const vars: string[] = [];
    let assign = false;
    if (allowDecl) {
      const t = this.toks;
      let j = this.i;
      const names: string[] = [];
      while (t[j]?.k === 'var' && (t[j] as { names: string[] }).names.length === 0) {
        names.push((t[j] as { name: string }).name);
        if (t[j + 1]?.k === ',') j += 2;
        else {
          j++;
          break;
        }
      }
      if (names.length && (t[j]?.k === ':=' || t[j]?.k === '=')) {
        vars.push(...names);
        assign = t[j]!.k === '=';
        this.i = j + 1;
      }
    }
    const cmds: Command[] = [];
    for (;;) {
      const args: Operand[] = [];
      while (!this.done()) {
        const t = this.toks[this.i]!;
        if (t.k === '|' || t.k === ')') break;
        args.push(this.operand());
      }
      if (!args.length) throw this.err('empty command');
      cmds.push({ args });
      const t = this.toks[this.i];
      if (t?.k === '|') {
        this.i++;
        continue;
      }
      if (t?.k === ')' && !stopAtParen) throw this.err('unexpected ")"');
      break;
    }
    return { vars, assign, cmds };
  }
  operand(): Operand {
    const t = this.toks[this.i++]!;
    switch (t.k) {
      case 'str':
      case 'num':
      case 'bool':
      case 'nil':
        return { t: 'lit', value: t.v };
      case 'field':
        return t.names.length ? { t: 'field', of: null, names: t.names } : { t: 'dot' };
      case 'var':
        return { t: 'var', name: t.name, names: t.names };
      case 'ident':
        return { t: 'ident', name: t.name };
      case '(': {
        const pipe = this.pipe(false, true);
        if (this.toks[this.i]?.k !== ')') throw this.err('missing ")"');
        this.i++;
        const next = this.toks[this.i];
        if (next?.k === 'fieldsAfter') {
          this.i++;
          return { t: 'sub', pipe, names: next.names };
        }
        return { t: 'sub', pipe, names: [] };
      }
      default:
        throw this.err(`unexpected "${t.k}"`);
    }
  }
}

function parsePipe(toks: Tok[], line: number, allowDecl: boolean): Pipe {
  const p = new PipeParser(toks, line);
  const pipe = p.pipe(allowDecl);
  if (!p.done()) throw p.err('unexpected tokens after the pipeline');
  return pipe;
}

/** Parses a template; `defines` collects `define` and `block` bodies by name. */
export function parseTemplate(src: string): Parsed {
  const items = scan(src);
  const defines = new Map<string, Node[]>();
  let pos = 0;
  // Returns the nodes up to an `end` or `else` and which one stopped it.
  const list = (
    inDefine: boolean,
    depth: number,
  ): { nodes: Node[]; stop: 'end' | 'else' | 'eof'; elseToks?: Tok[]; line: number } => {
    if (depth > 200) throw new TemplateSyntaxError('control structures nested too deeply');
    const nodes: Node[] = [];
    while (pos < items.length) {
      const it = items[pos++]!;
      if (it.kind === 'text') {
        nodes.push({ t: 'text', text: it.text, line: it.line });
        continue;
      }
      const { line } = it.a;
      const toks = tokenize(it.a);
      const head = toks[0];
      const word = head?.k === 'ident' ? head.name : null;
      if (!head) throw new TemplateSyntaxError(`empty action at line ${line}`);
      if (word === 'end') return { nodes, stop: 'end', line };
      if (word === 'else') return { nodes, stop: 'else', elseToks: toks.slice(1), line };
      if (word === 'if' || word === 'with' || word === 'range') {
        nodes.push(control(word, toks.slice(1), line, inDefine, depth));
      } else if (word === 'define' || word === 'block') {
        const name = toks[1];
        if (name?.k !== 'str')
          throw new TemplateSyntaxError(`${word} without a name at line ${line}`);
        const body = list(true, depth + 1);
        if (body.stop !== 'end')
          throw new TemplateSyntaxError(`${word} without end at line ${line}`);
        defines.set(String(name.v), body.nodes);
        if (word === 'block') {
          const pipe = toks.length > 2 ? parsePipe(toks.slice(2), line, false) : null;
          nodes.push({ t: 'template', name: String(name.v), pipe, line });
        }
      } else if (word === 'template') {
        const name = toks[1];
        if (name?.k !== 'str')
          throw new TemplateSyntaxError(`template without a name at line ${line}`);
        const pipe = toks.length > 2 ? parsePipe(toks.slice(2), line, false) : null;
        nodes.push({ t: 'template', name: String(name.v), pipe, line });
      } else if ((word === 'break' || word === 'continue') && toks.length === 1) {
        nodes.push({ t: word, line });
      } else {
        nodes.push({ t: 'action', pipe: parsePipe(toks, line, true), line });
      }
    }
    return { nodes, stop: 'eof', line: 0 };
  };
  const control = (
    word: 'if' | 'with' | 'range',
    toks: Tok[],
    line: number,
    inDefine: boolean,
    depth: number,
  ): Node => {
    const pipe = parsePipe(toks, line, word !== 'if');
    const body = list(inDefine, depth + 1);
    let alt: Node[] = [];
    if (body.stop === 'eof') throw new TemplateSyntaxError(`${word} at line ${line} has no end`);
    if (body.stop === 'else') {
      const e = body.elseToks ?? [];
      const chained = e[0]?.k === 'ident' ? e[0].name : null;
      if (chained === 'if' || chained === 'with') {
        // `else if x` / `else with x`: a nested control sharing this one's `end`.
        alt = [control(chained, e.slice(1), body.line, inDefine, depth + 1)];
      } else {
        if (e.length)
          throw new TemplateSyntaxError(`unexpected tokens after else at line ${body.line}`);
        const rest = list(inDefine, depth + 1);
        if (rest.stop !== 'end')
          throw new TemplateSyntaxError(`${word} at line ${line} has no end`);
        alt = rest.nodes;
      }
    }
    return { t: word, pipe, body: body.nodes, alt, line } as Node;
  };
  const top = list(false, 0);
  if (top.stop !== 'eof')
    throw new TemplateSyntaxError(`unexpected {{${top.stop}}} at line ${top.line}`);
  return { root: top.nodes, defines };
}
