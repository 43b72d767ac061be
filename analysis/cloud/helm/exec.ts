/**
 * Executes parsed Go templates (./parse.ts) over Helm's data: pipelines, variables, control
 * structures, `template`/`include`/`tpl`, with the functions of ./functions.ts. Bounded for
 * hostile charts: steps, nesting of includes, output size; exceeding a bound, an unknown function
 * or a construct outside the subset is a RenderError (the template becomes a coverage gap), never
 * a crash or a guess. Output keeps, per line, the template line it came from.
 */
import { FUNCTIONS } from './functions';
import { parseTemplate, type Command, type Node, type Operand, type Pipe } from './parse';
import { Method, RenderError, isDict, show, truth } from './values';

export { RenderError } from './values';

export interface Limits {
  /** Nodes, commands and function calls executed per template file. */
  steps: number;
  /** Nesting of `include`/`template`/`tpl`. */
  depth: number;
  /** Characters of output, and of any one string value. */
  output: number;
}

export const DEFAULT_LIMITS: Limits = { steps: 200_000, depth: 100, output: 2_000_000 };

/** Where rendered text goes: a string (an include), or the file output with line origins. */
export interface Writer {
  /** `line` is where `text` starts in the template; `spread` when later lines follow it there. */
  write(text: string, line: number, spread: boolean): void;
}

class StringWriter implements Writer {
  parts: string[] = [];
  size = 0;
  constructor(private max: number) {}
  write(text: string): void {
    this.size += text.length;
    if (this.size > this.max)
      throw new RenderError('limit', `output exceeds ${this.max} characters`);
    this.parts.push(text);
  }
  toString(): string {
    return this.parts.join('');
  }
}

/** The rendered text of a file and, per output line (0-based), its template line (1-based). */
export class LineWriter implements Writer {
  private lines: string[] = [''];
  private origins: number[] = [0];
  private size = 0;
  constructor(private max: number) {}
  write(text: string, line: number, spread: boolean): void {
    this.size += text.length;
    if (this.size > this.max)
      throw new RenderError('limit', `output exceeds ${this.max} characters`);
    const parts = text.split('\n');
    parts.forEach((part, i) => {
      if (i > 0) {
        this.lines.push('');
        this.origins.push(0);
      }
      const at = this.lines.length - 1;
      this.lines[at] += part;
      const src = spread ? line + i : line;
      // A line's origin is where its first non-blank character came from.
      if (this.origins[at] === 0 && part.trim()) this.origins[at] = src;
    });
  }
  result(): { text: string; origins: number[] } {
    return { text: this.lines.join('\n'), origins: this.origins };
  }
}

class Break {}
class Continue {}

interface Scope {
  vars: { name: string; value: unknown }[];
}

export interface Context {
  defines: Map<string, Node[]>;
  limits: Limits;
  steps: number;
  depth: number;
}

export function newContext(defines: Map<string, Node[]>, limits: Limits = DEFAULT_LIMITS): Context {
  return { defines, limits, steps: 0, depth: 0 };
}

function step(ctx: Context, n = 1): void {
  ctx.steps += n;
  if (ctx.steps > ctx.limits.steps)
    throw new RenderError('limit', `more than ${ctx.limits.steps} steps`);
}

/** Renders `nodes` with `dot` (and `$` = dot) into `w`. */
export function execute(ctx: Context, nodes: Node[], dot: unknown, w: Writer): void {
  const scope: Scope = { vars: [{ name: '$', value: dot }] };
  try {
    run(ctx, nodes, dot, scope, w);
  } catch (e) {
    if (e instanceof Break || e instanceof Continue)
      throw new RenderError('error', 'break or continue outside range');
    throw e;
  }
}

/** A named template rendered to a string (`include`, `template`). */
export function includeTemplate(ctx: Context, name: string, dot: unknown): string {
  const body = ctx.defines.get(name);
  if (!body) throw new RenderError('error', `no template named "${name.slice(0, 100)}"`);
  return nested(ctx, () => {
    const w = new StringWriter(ctx.limits.output);
    execute(ctx, body, dot, w);
    return w.toString();
  });
}

/** `tpl`: a string rendered as a template with the chart's named templates. */
export function renderString(ctx: Context, text: string, dot: unknown): string {
  step(ctx, 1 + Math.floor(text.length / 100));
  return nested(ctx, () => {
    let parsed;
    try {
      parsed = parseTemplate(text);
    } catch (e) {
      throw new RenderError('error', `tpl: ${(e as Error).message}`);
    }
    const defines = new Map(ctx.defines);
    for (const [k, v] of parsed.defines) defines.set(k, v);
    const inner: Context = { ...ctx, defines };
    const w = new StringWriter(ctx.limits.output);
    try {
      execute(inner, parsed.root, dot, w);
    } finally {
      ctx.steps = inner.steps;
    }
    return w.toString();
  });
}

function nested<T>(ctx: Context, f: () => T): T {
  if (ctx.depth >= ctx.limits.depth)
    throw new RenderError('limit', `templates nested more than ${ctx.limits.depth} deep (a loop?)`);
  ctx.depth++;
  try {
    return f();
  } finally {
    ctx.depth--;
  }
}

function run(ctx: Context, nodes: Node[], dot: unknown, scope: Scope, w: Writer): void {
  for (const n of nodes) {
    step(ctx);
    switch (n.t) {
      case 'text':
        w.write(n.text, n.line, true);
        break;
      case 'action': {
        const v = pipe(ctx, n.pipe, dot, scope);
        if (n.pipe.vars.length === 0) write(ctx, w, v, n.line);
        break;
      }
      case 'if':
      case 'with': {
        const mark = scope.vars.length;
        const v = pipe(ctx, n.pipe, dot, scope);
        if (truth(v)) run(ctx, n.body, n.t === 'with' ? v : dot, scope, w);
        else run(ctx, n.alt, dot, scope, w);
        scope.vars.length = mark;
        break;
      }
      case 'range':
        range(ctx, n, dot, scope, w);
        break;
      case 'template': {
        const arg = n.pipe ? pipe(ctx, n.pipe, dot, scope) : null;
        w.write(includeTemplate(ctx, n.name, arg), n.line, false);
        break;
      }
      case 'break':
        throw new Break();
      case 'continue':
        throw new Continue();
    }
  }
}

function write(ctx: Context, w: Writer, v: unknown, line: number): void {
  if (v instanceof Method) throw new RenderError('unsupported', `method ${v.name} printed`);
  const s = show(v);
  if (s.length > ctx.limits.output) throw new RenderError('limit', 'value too large');
  w.write(s, line, false);
}

function range(
  ctx: Context,
  n: Extract<Node, { t: 'range' }>,
  dot: unknown,
  scope: Scope,
  w: Writer,
): void {
  const mark = scope.vars.length;
  const decl = { ...n.pipe, vars: [] as string[] };
  const v = pipe(ctx, decl, dot, scope);
  let entries: [unknown, unknown][];
  if (Array.isArray(v)) entries = v.map((x, i) => [i, x]);
  else if (isDict(v))
    entries = Object.keys(v)
      .sort()
      .map((k) => [k, v[k]]);
  else if (typeof v === 'number' && Number.isInteger(v)) {
    if (v > ctx.limits.steps) throw new RenderError('limit', `range over ${v}`);
    entries = Array.from({ length: Math.max(0, v) }, (_, i) => [i, i]);
  } else if (v === null || v === undefined) entries = [];
  else throw new RenderError('error', `range can't iterate over a ${typeof v}`);
  if (!entries.length) {
    run(ctx, n.alt, dot, scope, w);
    scope.vars.length = mark;
    return;
  }
  for (const [k, x] of entries) {
    step(ctx);
    const [a, b] = n.pipe.vars;
    if (a && b) scope.vars.push({ name: a, value: k }, { name: b, value: x });
    else if (a) scope.vars.push({ name: a, value: x });
    try {
      run(ctx, n.body, x, scope, w);
    } catch (e) {
      if (e instanceof Break) break;
      if (!(e instanceof Continue)) throw e;
    } finally {
      scope.vars.length = mark;
    }
  }
}

function lookupVar(scope: Scope, name: string): { name: string; value: unknown } {
  for (let i = scope.vars.length - 1; i >= 0; i--)
    if (scope.vars[i]!.name === name) return scope.vars[i]!;
  throw new RenderError('error', `undefined variable ${name}`);
}

function pipe(ctx: Context, p: Pipe, dot: unknown, scope: Scope): unknown {
  let v: unknown = undefined;
  let first = true;
  for (const c of p.cmds) {
    v = command(ctx, c, dot, scope, first ? [] : [v]);
    first = false;
  }
  if (p.vars.length) {
    const name = p.vars[p.vars.length - 1]!;
    if (p.assign) lookupVar(scope, name).value = v;
    else scope.vars.push({ name, value: v });
  }
  return v;
}

function fields(v: unknown, names: string[], args: unknown[], what: string): unknown {
  let cur = v;
  names.forEach((name, i) => {
    const last = i === names.length - 1;
    if (cur instanceof Method)
      throw new RenderError('unsupported', `field ${name} of method ${cur.name}`);
    if (isDict(cur)) {
      const x = Object.prototype.hasOwnProperty.call(cur, name) ? cur[name] : undefined;
      if (x instanceof Method) {
        cur = x.call(last ? args : []);
        if (last) args = [];
      } else cur = x;
    } else if (cur === null || cur === undefined) {
      throw new RenderError(
        'error',
        `nil pointer evaluating ${what}.${names.slice(0, i + 1).join('.')}`,
      );
    } else {
      throw new RenderError('error', `can't evaluate field ${name} in ${typeof cur}`);
    }
  });
  if (args.length) {
    if (cur instanceof Method) return cur.call(args);
    throw new RenderError('error', `${what}.${names.join('.')} is not a method but has arguments`);
  }
  return cur;
}

function operand(
  ctx: Context,
  o: Operand,
  dot: unknown,
  scope: Scope,
  args: unknown[] = [],
): unknown {
  step(ctx);
  switch (o.t) {
    case 'dot':
      return dot;
    case 'lit':
      return o.value;
    case 'field':
      return fields(o.of ? operand(ctx, o.of, dot, scope) : dot, o.names, args, '');
    case 'var':
      return fields(lookupVar(scope, o.name).value, o.names, args, o.name);
    case 'sub':
      return fields(pipe(ctx, o.pipe, dot, scope), o.names, args, '(...)');
    case 'ident':
      return call(ctx, o.name, [], [], dot, scope);
  }
}

function command(ctx: Context, c: Command, dot: unknown, scope: Scope, piped: unknown[]): unknown {
  const [head, ...rest] = c.args;
  if (!head) throw new RenderError('error', 'empty command');
  if (head.t === 'ident') return call(ctx, head.name, rest, piped, dot, scope);
  const args = [...rest.map((a) => operand(ctx, a, dot, scope)), ...piped];
  if (head.t === 'field' || head.t === 'var' || head.t === 'sub')
    return operand(ctx, head, dot, scope, args);
  if (args.length) throw new RenderError('error', `can't give arguments to a non-function`);
  return operand(ctx, head, dot, scope);
}

function call(
  ctx: Context,
  name: string,
  rawArgs: Operand[],
  piped: unknown[],
  dot: unknown,
  scope: Scope,
): unknown {
  step(ctx);
  // `and` and `or` stop at the first argument that decides, as Go's do.
  if (name === 'and' || name === 'or') {
    const all = [
      ...rawArgs.map((a) => () => operand(ctx, a, dot, scope)),
      ...piped.map((p) => () => p),
    ];
    if (!all.length) throw new RenderError('error', `${name} needs arguments`);
    let v: unknown = undefined;
    for (const f of all) {
      v = f();
      if (truth(v) !== (name === 'and')) return v;
    }
    return v;
  }
  const args = [...rawArgs.map((a) => operand(ctx, a, dot, scope)), ...piped];
  if (name === 'include') {
    if (typeof args[0] !== 'string') throw new RenderError('error', 'include needs a name');
    return includeTemplate(ctx, args[0], args[1]);
  }
  if (name === 'tpl') {
    if (typeof args[0] !== 'string') throw new RenderError('error', 'tpl needs a string');
    return renderString(ctx, args[0], args[1]);
  }
  const f = FUNCTIONS.get(name);
  if (!f)
    throw new RenderError('unknown_function', `function "${name.slice(0, 60)}" is not supported`);
  const v = f(args);
  if (typeof v === 'string' && v.length > ctx.limits.output)
    throw new RenderError('limit', `${name} made a string over ${ctx.limits.output} characters`);
  if (Array.isArray(v)) step(ctx, v.length);
  return v;
}
