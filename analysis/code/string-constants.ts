/**
 * The string constants a source file declares, by name, so that a call naming a service or a
 * component through a constant (`InvokeMethodAsync(HttpMethod.Get, OrderServiceAppId, ...)` with
 * `private const string OrderServiceAppId = "order-service";`) is read like the literal.
 *
 * Read from `code` (comments blanked, strings kept): a declaration with a constant-like keyword
 * (`const`, `readonly`, `final`, `static`, `val`) whose value is one string literal
 * (`const string X = "a";`, `static readonly string X = "a";`, `static final String X = "a";`,
 * `const X = 'a'`, `val X = "a"`), and an upper-case name assigned a literal at the start of a
 * line (Python's and Go's module constants, `X = "a"`). Interpolated strings and concatenations
 * are no constant. A name declared twice with different values in one file is left out: which
 * one a call means is not known.
 */

const KEYWORD_DECL =
  /\b(?:const|readonly|final|static|val)\b[^=;\n(){}]*?\b([A-Za-z_]\w*)\s*(?::\s*[\w.<>?[\]]+\s*)?=\s*(["'`])([^"'`\\\n$]*)\2\s*(?=[;,\n)]|$)/g;
const UPPER_DECL =
  /^[ \t]*([A-Z][A-Z0-9_]*)\s*(?::\s*\w+\s*)?:?=\s*(["'`])([^"'`\\\n$]*)\2\s*;?$/gm;

/** Name -> value of the file's string constants (see the module comment). */
export function stringConstants(code: string): Map<string, string> {
  const seen = new Map<string, string | null>();
  const add = (name: string, value: string) => {
    const prior = seen.get(name);
    seen.set(name, prior === undefined || prior === value ? value : null);
  };
  if (/\b(?:const|readonly|final|static|val)\b/.test(code))
    for (const m of code.matchAll(KEYWORD_DECL)) add(m[1] ?? '', m[3] ?? '');
  for (const m of code.matchAll(UPPER_DECL)) add(m[1] ?? '', m[3] ?? '');
  const out = new Map<string, string>();
  for (const [k, v] of seen) if (v !== null && k !== '') out.set(k, v);
  return out;
}

/**
 * A JavaScript/TypeScript variable assigned one string literal in the file (`let host =
 * "api:4000"`, `const HOST = 'api'`, a later `host = "api:4000"`), by name: the value a template
 * literal's `${host}` substitutes (MDN, "Template literals"). A name assigned two different
 * literals is left out (which one is in effect is not known); assignments of anything else (an
 * environment override, `host = process.env.API`) are not literals and leave the literal as the
 * value the program has unless configured otherwise.
 */
const JS_LITERAL_ASSIGN =
  /(?<![\w$.])([A-Za-z_$][\w$]*)[ \t]*(?::[ \t]*string[ \t]*)?=(?![=>])[ \t]*(["'`])([^"'`\\\n$]*)\2/g;

export function jsLiteralVariables(code: string): Map<string, string> {
  const seen = new Map<string, string | null>();
  for (const m of code.matchAll(JS_LITERAL_ASSIGN)) {
    const name = m[1] ?? '';
    const value = m[3] ?? '';
    const prior = seen.get(name);
    seen.set(name, prior === undefined || prior === value ? value : null);
  }
  const out = new Map<string, string>();
  for (const [k, v] of seen) if (v !== null && k !== '') out.set(k, v);
  return out;
}
