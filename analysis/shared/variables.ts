/**
 * `$VAR` / `${VAR}` parameter expansion as shells, Compose and Dockerfiles write it, and the
 * test for text that still holds a variable or template expression.
 */

export type Lookup = (name: string) => string | undefined;

export interface ExpandOptions {
  /** `$$` stands for a literal `$` (Compose files); elsewhere it is left as written. */
  dollarEscape?: boolean;
}

const EXPANSION =
  /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+?])((?:[^{}]|\{[^{}]*\})*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Expands `${VAR}`, `$VAR`, `${VAR:-default}`, `${VAR-default}`, `${VAR:+alt}`, `${VAR+alt}`
 * and `${VAR:?err}` / `${VAR?err}`. A variable `lookup` does not know counts as unset: its
 * default applies, and where there is none it stays written as it is, so callers can tell a
 * resolved value from an unknown one.
 */
export function expandVariables(value: string, lookup: Lookup, opts: ExpandOptions = {}): string {
  return value.replace(
    EXPANSION,
    (whole, braced?: string, op?: string, arg?: string, bare?: string) => {
      if (whole === '$$') return opts.dollarEscape ? '$' : whole;
      const v = lookup(braced ?? bare ?? '');
      const set = v !== undefined;
      const nonEmpty = set && v !== '';
      const inner = (): string => expandVariables(arg ?? '', lookup, opts);
      switch (op) {
        case ':-':
          return nonEmpty ? v : inner();
        case '-':
          return set ? v : inner();
        case ':+':
          return nonEmpty ? inner() : '';
        case '+':
          return set ? inner() : '';
        default:
          return set ? v : whole;
      }
    },
  );
}

/** Nothing is known: only defaults apply (`${IMG:-nginx}` -> `nginx`; `${IMG}` stays). */
export const NO_VARIABLES: Lookup = () => undefined;

/**
 * Holds a variable or template expression: `$X`, `${X}`, `$(X)`, GitHub `${{ }}`, CircleCI
 * `<< >>`, Go and Jinja `{{ }}`.
 */
export function isDynamic(value: string): boolean {
  return /\$|<<|\{\{/.test(value);
}
