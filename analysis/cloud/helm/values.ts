/**
 * Go template values as JavaScript values: truth, printing (Go's `%v`, Helm's empty string for a
 * missing value), comparison and deep merge. Values come from YAML (numbers are float64 in Helm).
 */

/** Why a template could not be rendered; its template becomes a coverage gap. */
export class RenderError extends Error {
  constructor(
    readonly code: 'unknown_function' | 'unsupported' | 'limit' | 'required' | 'fail' | 'error',
    message: string,
  ) {
    super(message);
  }
}

export type Dict = Record<string, unknown>;

export function isDict(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Method);
}

/** A method of a built-in object (`.Files.Get`, `.Capabilities.APIVersions.Has`). */
export class Method {
  constructor(
    readonly name: string,
    readonly call: (args: unknown[]) => unknown,
  ) {}
}

/** Go's truth of a template value: false, 0, nil and empty strings, lists and maps are false. */
export function truth(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isDict(v)) return Object.keys(v).length > 0;
  return true;
}

/**
 * A float64 printed as Go's `%v` does: shortest digits, an exponent from 1e6 or below 1e-4 (Helm
 * reads every number of values.yaml as a float64, so `1000000` prints `1e+06` there too).
 */
export function goNumber(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  if (n === 0) return '0';
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 6) {
    const [m, e] = n.toExponential().split('e') as [string, string];
    const sign = e.startsWith('-') ? '-' : '+';
    const digits = e.replace(/^[+-]/, '');
    return `${m}e${sign}${digits.padStart(2, '0')}`;
  }
  return String(n);
}

/** The text a value prints as in template output. */
export function show(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(inner).join(' ')}]`;
  if (isDict(v))
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${inner(v[k])}`)
      .join(' ')}]`;
  return String(v);
}

function inner(v: unknown): string {
  return v === null || v === undefined ? '<nil>' : show(v);
}

/** Go's `eq` on basic values (numbers by value, everything else by identity or structure). */
export function same(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (a === b) return true;
  if (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null)
    return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

/** A deep copy of plain data (values are never shared between renders). */
export function copy<T>(v: T): T {
  if (Array.isArray(v)) return v.map(copy) as T;
  if (isDict(v)) {
    const out: Dict = {};
    for (const [k, x] of Object.entries(v)) out[k] = copy(x);
    return out as T;
  }
  return v;
}

/**
 * `dst` with `src` merged in, keys of `dst` winning (sprig `merge`), or `src` winning when
 * `overwrite` (sprig `mergeOverwrite`, Helm's values layering). Maps merge deeply, lists replace.
 */
export function mergeInto(dst: Dict, src: Dict, overwrite: boolean, depth = 0): Dict {
  if (depth > 100) return dst;
  for (const [k, v] of Object.entries(src)) {
    const cur = dst[k];
    if (isDict(cur) && isDict(v)) mergeInto(cur, v, overwrite, depth + 1);
    else if (!(k in dst) || cur === null || cur === undefined || overwrite) dst[k] = copy(v);
  }
  return dst;
}
