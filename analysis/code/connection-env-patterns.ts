/** How each language reads an environment variable (and its literal default), for connections.ts. */

interface EnvPattern {
  re: RegExp;
  /** Capture group of the variable name. */
  group: number;
  /** Capture group of a literal default, when the pattern has one. */
  defaultGroup?: number;
}

/** Java and Kotlin defaults: `getOrDefault`, `Optional...orElse`, `requireNonNullElse`. */
const JVM_DEFAULTS: EnvPattern[] = [
  {
    re: /\bSystem\.getenv\(\s*\)\s*\.getOrDefault\(\s*"([A-Za-z_]\w*)"\s*,\s*"([^"\n]*)"/g,
    group: 1,
    defaultGroup: 2,
  },
  {
    re: /\bOptional\.ofNullable\(\s*System\.getenv\(\s*"([A-Za-z_]\w*)"\s*\)\s*\)\s*\.orElse\(\s*"([^"\n]*)"\s*\)/g,
    group: 1,
    defaultGroup: 2,
  },
  {
    re: /\bObjects\.requireNonNullElse\(\s*System\.getenv\(\s*"([A-Za-z_]\w*)"\s*\)\s*,\s*"([^"\n]*)"\s*\)/g,
    group: 1,
    defaultGroup: 2,
  },
];

/**
 * A two-argument helper over the environment in any language (not a setter such as
 * `os.Setenv("X", "v")` or `putenv`): a callee whose name holds `env`
 * (`getEnv("X", "h")`, `env('X', 'h')`, `GetEnvOrDefault("X", "h")`), an upper-case variable
 * name and a literal default.
 */
export const ENV_HELPER: EnvPattern = {
  re: /(?<![\w$])(?!(?:set|put|unset)[_A-Z]?(?:env|Env|ENV)|(?:Set|Put|Unset|SET|PUT)_?(?:env|Env|ENV))[A-Za-z_$]*(?:env|Env|ENV)[\w$]*\(\s*(['"`])([A-Z][A-Z0-9_]*)\1\s*,\s*(['"`])([^'"`\n]*)\3\s*\)/g,
  group: 2,
  defaultGroup: 4,
};

export const ENV_PATTERNS: Record<string, EnvPattern[]> = {
  js: [
    {
      re: /\bprocess\.env\.([A-Za-z_]\w*)(?:\s*(?:\|\||\?\?)\s*(['"`])([^'"`\n]*)\2)?/g,
      group: 1,
      defaultGroup: 3,
    },
    {
      re: /\bprocess\.env\[\s*(['"`])([A-Za-z_]\w*)\1\s*\](?:\s*(?:\|\||\?\?)\s*(['"`])([^'"`\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
    { re: /\bimport\.meta\.env\.([A-Za-z_]\w*)/g, group: 1 },
    { re: /\bDeno\.env\.get\(\s*(['"])([A-Za-z_]\w*)\1/g, group: 2 },
  ],
  go: [
    // `addr, ok := os.LookupEnv("X")` then `if !ok { addr = "h" }` (or `...; !ok { addr = "h" }`).
    {
      re: /(\w+)\s*,\s*(\w+)\s*:?=\s*os\.LookupEnv\(\s*"([A-Za-z_]\w*)"\s*\)\s*(?:;\s*|\n\s*if\s+)!\2\s*\{\s*\1\s*=\s*"([^"\n]*)"/g,
      group: 3,
      defaultGroup: 4,
    },
    { re: /\bos\.(?:Getenv|LookupEnv)\(\s*"([A-Za-z_]\w*)"\s*\)/g, group: 1 },
  ],
  // `os.` is required unless the file does `from os import environ/getenv` (a bare `environ` is
  // often a WSGI request environ, not the process environment).
  python: [
    // `os.getenv("X") or "http://x:8080"`: the literal after `or` is the default.
    {
      re: /\bos\.(?:environ\.get|getenv)\(\s*(['"])([A-Za-z_]\w*)\1\s*\)\s+or\s+(['"])([^'"\n]*)\3/g,
      group: 2,
      defaultGroup: 4,
    },
    { re: /\bos\.environ\[\s*(['"])([A-Za-z_]\w*)\1\s*\]/g, group: 2 },
    {
      re: /\bos\.(?:environ\.get|environ\.setdefault|getenv)\(\s*(['"])([A-Za-z_]\w*)\1(?:\s*,\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
  ],
  'python-from-os': [
    { re: /(?<![\w.])environ\[\s*(['"])([A-Za-z_]\w*)\1\s*\]/g, group: 2 },
    {
      re: /(?<![\w.])(?:environ\.get|environ\.setdefault|getenv)\(\s*(['"])([A-Za-z_]\w*)\1(?:\s*,\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
  ],
  java: [...JVM_DEFAULTS, { re: /\bSystem\.getenv\(\s*"([A-Za-z_]\w*)"\s*\)/g, group: 1 }],
  kotlin: [
    ...JVM_DEFAULTS,
    {
      re: /\bSystem\.getenv\(\s*"([A-Za-z_]\w*)"\s*\)(?:\s*\?:\s*"([^"\n]*)")?/g,
      group: 1,
      defaultGroup: 2,
    },
  ],
  php: [
    // Framework helpers: Utopia's `System::getEnv('X', 'd')`, Laravel's `env('X')`; the name
    // may start with an underscore (`_APP_DOMAIN`).
    {
      re: /(?<![\w$>:])(?:[A-Z]\w*::)?(?:getEnv|env)\(\s*(['"])([A-Za-z_]\w*)\1(?:\s*,\s*(['"])([^'"\n]*)\3)?\s*\)/g,
      group: 2,
      defaultGroup: 4,
    },
    {
      re: /(?<![\w$>:])getenv\(\s*(['"])([A-Za-z_]\w*)\1\s*\)(?:\s*(?:\?:|\?\?)\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
    {
      re: /\$_(?:ENV|SERVER)\[\s*(['"])([A-Za-z_]\w*)\1\s*\](?:\s*(?:\?:|\?\?)\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
  ],
  csharp: [
    {
      re: /\bEnvironment\.GetEnvironmentVariable\(\s*"([A-Za-z_]\w*)"(?:\s*\)\s*\?\?\s*"([^"\n]*)")?/g,
      group: 1,
      defaultGroup: 2,
    },
  ],
  rust: [
    { re: /\benv::var(?:_os)?\(\s*"([A-Za-z_]\w*)"\s*\)/g, group: 1 },
    { re: /\b(?:option_)?env!\(\s*"([A-Za-z_]\w*)"/g, group: 1 },
  ],
  ruby: [
    {
      re: /\bENV\[\s*(['"])([A-Za-z_]\w*)\1\s*\](?:\s*(?:\|\||\bor\b)\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
    {
      re: /\bENV\.fetch\(\s*(['"])([A-Za-z_]\w*)\1(?:\s*,\s*(['"])([^'"\n]*)\3)?/g,
      group: 2,
      defaultGroup: 4,
    },
  ],
};

/** `${VAR}`, `${VAR:default}`, `${VAR:-default}` in configuration (and Spring @Value strings). */
export const PLACEHOLDER_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-?|-)?([^}]*)\}/g;

/** Environment APIs of the languages scanned: a file using one may wrap it in a helper. */
export const ENV_API_RE =
  /\bos\.(?:Getenv|LookupEnv|getenv|environ)\b|\bprocess\.env\b|\bSystem\.getenv\b|\bEnvironment\.GetEnvironmentVariable\b|\bENV\[|\benv::var\b|(?<![\w$>:])getenv\(|\$_ENV\[/;
/** An upper-case variable name with at least one underscore (`CART_SERVICE_ADDR`). */
export const ENV_NAME_LITERAL = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;
