/**
 * The template functions Helm charts commonly use: Go's built-ins, the usual sprig functions and
 * Helm's own (`toYaml`, `fromYaml`, `required`, `lookup`...). A function not here makes its
 * template a coverage gap (./exec.ts); functions that read the clock or randomness return fixed
 * values so rendering stays deterministic (they never carry architecture). `include` and `tpl`
 * need the chart and live in ./exec.ts.
 */
import crypto from 'node:crypto';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import {
  RenderError,
  copy,
  goNumber,
  isDict,
  mergeInto,
  same,
  show,
  truth,
  type Dict,
} from './values';

type Fn = (args: unknown[]) => unknown;

const MAX_LIST = 100_000;

function need(name: string, args: unknown[], n: number): void {
  if (args.length < n) throw new RenderError('error', `${name} needs ${n} argument(s)`);
}

function str(v: unknown): string {
  return show(v);
}

function num(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const n = Number(v.trim());
    return Number.isNaN(n) ? 0 : n;
  }
  return 0;
}

function int(v: unknown): number {
  return Math.trunc(num(v));
}

function list(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (v === null || v === undefined) return [];
  throw new RenderError('error', `expected a list, got ${typeof v}`);
}

function dict(v: unknown, name: string): Dict {
  if (isDict(v)) return v;
  throw new RenderError('error', `${name} expects a map`);
}

function empty(v: unknown): boolean {
  return !truth(v);
}

/** Keys sorted, as Go's encoders write maps. */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (isDict(v)) {
    const out: Dict = {};
    for (const k of Object.keys(v).sort()) out[k] = sorted(v[k]);
    return out;
  }
  return v;
}

export function toYaml(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  return stringifyYaml(sorted(v), {
    indentSeq: false,
    lineWidth: 0,
    aliasDuplicateObjects: false,
  }).replace(/\n$/, '');
}

function fromYaml(s: unknown): unknown {
  try {
    const v: unknown = parseYaml(str(s), { maxAliasCount: 100 });
    return v ?? {};
  } catch (e) {
    return { Error: (e as Error).message };
  }
}

function indent(n: unknown, s: unknown): string {
  const pad = ' '.repeat(Math.max(0, Math.min(int(n), 1000)));
  return str(s)
    .split('\n')
    .map((l) => pad + l)
    .join('\n');
}

/** Go's fmt verbs commonly used in charts: %s %v %d %q %t %f %g %x %%, with width and flags. */
export function sprintf(format: string, args: unknown[]): string {
  let i = 0;
  const out = format.replace(
    /%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g,
    (m, flags: string, width: string | undefined, prec: string | undefined, verb: string) => {
      if (verb === '%') return '%';
      if (i >= args.length) return `%!${verb}(MISSING)`;
      const a = args[i++];
      let s: string;
      switch (verb) {
        case 's':
        case 'v':
          s = str(a);
          break;
        case 'd':
          s = typeof a === 'number' ? String(Math.trunc(a)) : `%!d(${typeof a}=${str(a)})`;
          break;
        case 'q':
          s = JSON.stringify(str(a));
          break;
        case 't':
          s = typeof a === 'boolean' ? String(a) : `%!t(${str(a)})`;
          break;
        case 'f':
        case 'F':
          s = num(a).toFixed(prec === undefined ? 6 : Math.min(Number(prec), 20));
          break;
        case 'g':
          s = goNumber(num(a));
          break;
        case 'x':
          s =
            typeof a === 'number'
              ? Math.trunc(a).toString(16)
              : Buffer.from(str(a)).toString('hex');
          break;
        default:
          throw new RenderError('unsupported', `printf verb ${m}`);
      }
      const w = width ? Math.min(Number(width), 1000) : 0;
      if (s.length < w)
        s = flags.includes('-') ? s.padEnd(w) : s.padStart(w, flags.includes('0') ? '0' : ' ');
      return s;
    },
  );
  return i < args.length ? `${out}%!(EXTRA ${args.slice(i).map(str).join(', ')})` : out;
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  throw new RenderError('error', 'incompatible types for comparison');
}

function version(s: string): number[] | null {
  const m = /^v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?/.exec(s.trim());
  if (!m) return null;
  return [Number(m[1]), Number(m[2]) || 0, Number(m[3]) || 0];
}

function cmpVersion(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** Masterminds semver constraints, as charts use them: `>=1.19-0`, `<1.14`, `^1.2`, `~1.2`, `a || b`. */
export function semverCompare(constraint: string, ver: string): boolean {
  const v = version(ver);
  if (!v) throw new RenderError('error', `invalid semantic version ${ver}`);
  return constraint.split('||').some((alt) =>
    alt
      .trim()
      .split(/\s*,\s*|\s+(?=[<>=!~^])/)
      .filter(Boolean)
      .every((c) => {
        const m = /^(>=|<=|!=|=|>|<|\^|~)?\s*(.+)$/.exec(c.trim());
        const want = m ? version(m[2]!.replace(/-.*$/, '')) : null;
        if (!m || !want) throw new RenderError('error', `invalid constraint ${c}`);
        const d = cmpVersion(v, want);
        switch (m[1]) {
          case '>=':
            return d >= 0;
          case '<=':
            return d <= 0;
          case '>':
            return d > 0;
          case '<':
            return d < 0;
          case '!=':
            return d !== 0;
          case '^':
            return d >= 0 && v[0] === want[0];
          case '~':
            return d >= 0 && v[0] === want[0] && v[1] === want[1];
          default:
            return /[x*]/.test(m[2]!) ? v[0] === want[0] : d === 0;
        }
      }),
  );
}

function kind(v: unknown): string {
  if (v === null || v === undefined) return 'invalid';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float64';
  if (Array.isArray(v)) return 'slice';
  return 'map';
}

function typeName(v: unknown): string {
  const k = kind(v);
  return k === 'slice'
    ? '[]interface {}'
    : k === 'map'
      ? 'map[string]interface {}'
      : k === 'invalid'
        ? '<nil>'
        : k;
}

function caseWords(s: string): string[] {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

function range(args: unknown[]): number[] {
  const [start, stop, stepBy] =
    args.length === 1 ? [0, int(args[0]), 1] : [int(args[0]), int(args[1]), int(args[2] ?? 1)];
  if (stepBy === 0) return [];
  const n = Math.ceil((stop - start) / stepBy);
  if (n > MAX_LIST) throw new RenderError('limit', `list of ${n} items`);
  return Array.from({ length: Math.max(0, n) }, (_, i) => start + i * stepBy);
}

const table: Record<string, Fn> = {
  // Go built-ins
  eq: (a) => (need('eq', a, 2), a.slice(1).some((b) => same(a[0], b))),
  ne: (a) => (need('ne', a, 2), !same(a[0], a[1])),
  lt: (a) => compare(a[0], a[1]) < 0,
  le: (a) => compare(a[0], a[1]) <= 0,
  gt: (a) => compare(a[0], a[1]) > 0,
  ge: (a) => compare(a[0], a[1]) >= 0,
  not: (a) => !truth(a[0]),
  len: (a) => {
    const v = a[0];
    if (typeof v === 'string' || Array.isArray(v)) return v.length;
    if (isDict(v)) return Object.keys(v).length;
    if (v === null || v === undefined) return 0;
    throw new RenderError('error', `len of ${typeof v}`);
  },
  index: (a) => {
    let v = a[0];
    for (const k of a.slice(1)) {
      if (Array.isArray(v)) v = v[int(k)];
      else if (isDict(v))
        v = Object.prototype.hasOwnProperty.call(v, str(k)) ? v[str(k)] : undefined;
      else if (v === null || v === undefined) return undefined;
      else throw new RenderError('error', `can't index ${typeof v}`);
    }
    return v;
  },
  print: (a) => a.map(str).join(''),
  println: (a) => `${a.map(str).join(' ')}\n`,
  printf: (a) => sprintf(str(a[0]), a.slice(1)),
  slice: (a) => {
    const v = a[0];
    const from = a[1] === undefined ? 0 : int(a[1]);
    const to = a[2] === undefined ? undefined : int(a[2]);
    if (typeof v === 'string' || Array.isArray(v)) return v.slice(from, to);
    throw new RenderError('error', 'slice of a non-list');
  },
  urlquery: (a) => encodeURIComponent(a.map(str).join('')),
  // sprig: defaults and flow
  default: (a) => {
    need('default', a, 1);
    return a.length < 2 || empty(a[1]) ? a[0] : a[1];
  },
  empty: (a) => empty(a[0]),
  coalesce: (a) => a.find((x) => !empty(x)) ?? null,
  ternary: (a) => (truth(a[2]) ? a[0] : a[1]),
  required: (a) => {
    const v = a[1];
    if (v === null || v === undefined || v === '')
      throw new RenderError('required', `required value missing: ${str(a[0]).slice(0, 200)}`);
    return v;
  },
  fail: (a) => {
    throw new RenderError('fail', `chart calls fail: ${str(a[0]).slice(0, 200)}`);
  },
  // strings
  quote: (a) =>
    a
      .filter((x) => x !== null && x !== undefined)
      .map((x) => JSON.stringify(str(x)))
      .join(' '),
  squote: (a) =>
    a
      .filter((x) => x !== null && x !== undefined)
      .map((x) => `'${str(x)}'`)
      .join(' '),
  toString: (a: unknown[]) => str(a[0]),
  upper: (a) => str(a[0]).toUpperCase(),
  lower: (a) => str(a[0]).toLowerCase(),
  title: (a) => str(a[0]).replace(/\b[a-z]/g, (c) => c.toUpperCase()),
  trim: (a) => str(a[0]).trim(),
  trimAll: (a) => {
    const cut = str(a[0]);
    let s = str(a[1]);
    while (s && cut.includes(s[0]!)) s = s.slice(1);
    while (s && cut.includes(s[s.length - 1]!)) s = s.slice(0, -1);
    return s;
  },
  trimPrefix: (a) =>
    str(a[1]).startsWith(str(a[0])) ? str(a[1]).slice(str(a[0]).length) : str(a[1]),
  trimSuffix: (a) => {
    const s = str(a[1]);
    const x = str(a[0]);
    return x && s.endsWith(x) ? s.slice(0, -x.length) : s;
  },
  trunc: (a) => {
    const n = int(a[0]);
    const s = str(a[1]);
    return n >= 0 ? s.slice(0, n) : s.slice(Math.max(0, s.length + n));
  },
  substr: (a) => str(a[2]).slice(int(a[0]), int(a[1]) < 0 ? undefined : int(a[1])),
  replace: (a) => str(a[2]).split(str(a[0])).join(str(a[1])),
  contains: (a) => str(a[1]).includes(str(a[0])),
  hasPrefix: (a) => str(a[1]).startsWith(str(a[0])),
  hasSuffix: (a) => str(a[1]).endsWith(str(a[0])),
  repeat: (a) => {
    const n = int(a[0]);
    if (n * str(a[1]).length > 1_000_000) throw new RenderError('limit', 'repeat too large');
    return str(a[1]).repeat(Math.max(0, n));
  },
  nospace: (a) => str(a[0]).replace(/\s+/g, ''),
  cat: (a) =>
    a
      .filter((x) => x !== null && x !== undefined)
      .map(str)
      .join(' '),
  indent: (a) => indent(a[0], a[1]),
  nindent: (a) => `\n${indent(a[0], a[1])}`,
  kebabcase: (a) => caseWords(str(a[0])).join('-').toLowerCase(),
  snakecase: (a) => caseWords(str(a[0])).join('_').toLowerCase(),
  camelcase: (a) =>
    caseWords(str(a[0]))
      .map((w) => w[0]!.toUpperCase() + w.slice(1))
      .join(''),
  split: (a) => {
    const out: Dict = {};
    str(a[1])
      .split(str(a[0]))
      .forEach((p, i) => (out[`_${i}`] = p));
    return out;
  },
  splitList: (a) => str(a[1]).split(str(a[0])),
  join: (a) => list(a[1]).map(str).join(str(a[0])),
  regexMatch: (a) => safeRegex(a[0]).test(str(a[1])),
  regexFind: (a) => safeRegex(a[0]).exec(str(a[1]))?.[0] ?? '',
  regexReplaceAll: (a) =>
    str(a[1]).replace(safeRegex(a[0], 'g'), str(a[2]).replace(/\$\{?(\d+)\}?/g, '$$$1')),
  regexReplaceAllLiteral: (a) => str(a[1]).replace(safeRegex(a[0], 'g'), () => str(a[2])),
  b64enc: (a) => Buffer.from(str(a[0])).toString('base64'),
  b64dec: (a) => Buffer.from(str(a[0]), 'base64').toString('utf8'),
  sha256sum: (a) => crypto.createHash('sha256').update(str(a[0])).digest('hex'),
  sha1sum: (a) => crypto.createHash('sha1').update(str(a[0])).digest('hex'),
  // Deterministic stand-ins: generated values carry no architecture, and a generated password
  // is not a committed one (a `<...>` placeholder, as the secret controls read it).
  randAlphaNum: () => '<generated at install>',
  randAlpha: () => '<generated at install>',
  randNumeric: () => '<generated at install>',
  randAscii: () => '<generated at install>',
  uuidv4: () => '00000000-0000-4000-8000-000000000000',
  now: () => '1970-01-01T00:00:00Z',
  date: () => '1970-01-01',
  // numbers
  int: (a) => int(a[0]),
  int64: (a) => int(a[0]),
  float64: (a) => num(a[0]),
  atoi: (a) => int(a[0]),
  add: (a) => a.reduce<number>((s, x) => s + num(x), 0),
  add1: (a) => num(a[0]) + 1,
  sub: (a) => num(a[0]) - num(a[1]),
  mul: (a) => a.reduce<number>((s, x) => s * num(x), 1),
  div: (a) => {
    if (num(a[1]) === 0) throw new RenderError('error', 'division by zero');
    return Math.trunc(num(a[0]) / num(a[1]));
  },
  mod: (a) => {
    if (num(a[1]) === 0) throw new RenderError('error', 'division by zero');
    return num(a[0]) % num(a[1]);
  },
  max: (a) => Math.max(...a.map(num)),
  min: (a) => Math.min(...a.map(num)),
  until: (a) => range([a[0]]),
  untilStep: (a) => range(a),
  seq: (a) => (a.length === 1 ? range([1, int(a[0]) + 1]) : range([a[0], int(a[1]) + 1])).join(' '),
  // lists
  list: (a) => [...a],
  tuple: (a) => [...a],
  first: (a) => list(a[0])[0] ?? null,
  last: (a) => list(a[0]).at(-1) ?? null,
  rest: (a) => list(a[0]).slice(1),
  initial: (a) => list(a[0]).slice(0, -1),
  append: (a) => [...list(a[0]), a[1]],
  mustAppend: (a) => [...list(a[0]), a[1]],
  prepend: (a) => [a[1], ...list(a[0])],
  concat: (a) => a.flatMap((x) => list(x)),
  uniq: (a) => list(a[0]).filter((x, i, all) => all.findIndex((y) => same(x, y)) === i),
  has: (a) => list(a[1]).some((x) => same(x, a[0])),
  without: (a) => list(a[0]).filter((x) => !a.slice(1).some((y) => same(x, y))),
  compact: (a) => list(a[0]).filter(truth),
  sortAlpha: (a) => list(a[0]).map(str).sort(),
  reverse: (a) => [...list(a[0])].reverse(),
  // maps
  dict: (a) => {
    const out: Dict = {};
    for (let i = 0; i < a.length; i += 2) out[str(a[i])] = a[i + 1] ?? null;
    return out;
  },
  get: (a) => {
    const d = dict(a[0], 'get');
    return Object.prototype.hasOwnProperty.call(d, str(a[1])) ? d[str(a[1])] : '';
  },
  set: (a) => {
    const d = dict(a[0], 'set');
    d[str(a[1])] = a[2];
    return d;
  },
  unset: (a) => {
    const d = dict(a[0], 'unset');
    delete d[str(a[1])];
    return d;
  },
  hasKey: (a) => Object.prototype.hasOwnProperty.call(dict(a[0], 'hasKey'), str(a[1])),
  keys: (a) => a.flatMap((d) => Object.keys(dict(d, 'keys'))),
  values: (a) => Object.values(dict(a[0], 'values')),
  pick: (a) => {
    const d = dict(a[0], 'pick');
    const out: Dict = {};
    for (const k of a.slice(1).map(str)) if (k in d) out[k] = d[k];
    return out;
  },
  omit: (a) => {
    const d = dict(a[0], 'omit');
    const drop = new Set(a.slice(1).map(str));
    return Object.fromEntries(Object.entries(d).filter(([k]) => !drop.has(k)));
  },
  pluck: (a) =>
    a
      .slice(1)
      .filter(isDict)
      .filter((d) => str(a[0]) in d)
      .map((d) => d[str(a[0])]),
  dig: (a) => {
    const keys = a.slice(0, -2).map(str);
    let v: unknown = a[a.length - 1];
    for (const k of keys) {
      if (!isDict(v) || !(k in v)) return a[a.length - 2];
      v = v[k];
    }
    return v;
  },
  merge: (a) =>
    a.slice(1).reduce<Dict>((d, s) => mergeInto(d, dict(s, 'merge'), false), dict(a[0], 'merge')),
  mustMerge: (a) =>
    a.slice(1).reduce<Dict>((d, s) => mergeInto(d, dict(s, 'merge'), false), dict(a[0], 'merge')),
  mergeOverwrite: (a) =>
    a
      .slice(1)
      .reduce<Dict>(
        (d, s) => mergeInto(d, dict(s, 'mergeOverwrite'), true),
        dict(a[0], 'mergeOverwrite'),
      ),
  deepCopy: (a) => copy(a[0]),
  // types and encodings
  kindOf: (a) => kind(a[0]),
  kindIs: (a) => kind(a[1]) === str(a[0]),
  typeOf: (a) => typeName(a[0]),
  typeIs: (a) => typeName(a[1]) === str(a[0]),
  toStrings: (a) => list(a[0]).map(str),
  toYaml: (a) => toYaml(a[0]),
  toYamlPretty: (a) => toYaml(a[0]),
  fromYaml: (a) => fromYaml(a[0]),
  fromYamlArray: (a) => list(fromYaml(a[0])),
  toJson: (a) => JSON.stringify(sorted(a[0] ?? null)),
  toRawJson: (a) => JSON.stringify(sorted(a[0] ?? null)),
  toPrettyJson: (a) => JSON.stringify(sorted(a[0] ?? null), null, 2),
  fromJson: (a) => {
    try {
      return JSON.parse(str(a[0])) as unknown;
    } catch (e) {
      return { Error: (e as Error).message };
    }
  },
  semverCompare: (a) => semverCompare(str(a[0]), str(a[1])),
  // Helm: `helm template` has no cluster, so `lookup` finds nothing.
  lookup: () => ({}),
  base: (a) => str(a[0]).split('/').filter(Boolean).at(-1) ?? '.',
  dir: (a) => str(a[0]).replace(/\/[^/]*$/, '') || '.',
};

/** A pattern from a chart, refused when it could backtrack badly (nested quantifiers). */
function safeRegex(p: unknown, flags = ''): RegExp {
  const s = str(p);
  if (s.length > 500 || /\([^)]*[+*][^)]*\)[+*{]/.test(s))
    throw new RenderError(
      'unsupported',
      `a regular expression with nested quantifiers is not evaluated`,
    );
  try {
    return new RegExp(s.replace(/\(\?P</g, '(?<'), flags);
  } catch {
    throw new RenderError('unsupported', `a regular expression JavaScript cannot read`);
  }
}

// `must*` variants behave as the plain ones here (errors already stop rendering).
for (const name of [
  'toYaml',
  'toJson',
  'fromJson',
  'regexMatch',
  'regexFind',
  'regexReplaceAll',
  'first',
  'last',
  'rest',
  'initial',
  'uniq',
  'has',
  'without',
  'compact',
  'prepend',
  'deepCopy',
  'mergeOverwrite',
]) {
  const f = table[name];
  const must = `must${name[0]!.toUpperCase()}${name.slice(1)}`;
  if (f && !(must in table)) table[must] = f;
}

export const FUNCTIONS: ReadonlyMap<string, Fn> = new Map(Object.entries(table));
