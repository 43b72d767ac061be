/**
 * The kinds of configuration setting (platform/config-settings.ts uses them): how a variable's
 * text becomes a value, its default and bounds, and the default README shows. Each `read` gets
 * the text (undefined when the variable is unset or empty) and the variable's name, and throws an
 * error naming the variable for a bad value, so a bad value stops the process at start.
 */
import path from 'node:path';
import { allowListEntryProblem, type SshAccess } from '../domain/repositories/source-policy';

export interface Kind<T> {
  read(text: string | undefined, name: string): T;
  /** README's Default column: a leading `value` in backticks is what unset means. */
  default: string;
}

export const PORT_MAX = 65535;

const shown = (value: string | number | boolean): string => `\`${value}\``;

/** An integer from `min` to `max`; `fallback` a number or computed when read. */
export function integer(
  fallback: number | (() => number),
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): Kind<number> {
  return {
    default: typeof fallback === 'number' ? shown(fallback) : 'computed',
    read(text, name) {
      if (text === undefined) return typeof fallback === 'number' ? fallback : fallback();
      const value = Number(text);
      if (!Number.isInteger(value) || value < min || value > max) {
        const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
        throw new Error(`${name} must be an integer ${range}, got ${JSON.stringify(text)}`);
      }
      return value;
    },
  };
}

/** An integer from 0 to `max` where 0, like unset, turns the feature off (null). */
export function integerOrOff(max: number): Kind<number | null> {
  const kind = integer(0, 0, max);
  return { default: '— (off)', read: (text, name) => kind.read(text, name) || null };
}

export function flag(fallback: boolean): Kind<boolean> {
  return {
    default: shown(fallback),
    read(text, name) {
      if (text === undefined) return fallback;
      if (/^(1|true|yes|on)$/i.test(text)) return true;
      if (/^(0|false|no|off)$/i.test(text)) return false;
      throw new Error(`${name} must be true or false (or on/off), got ${JSON.stringify(text)}`);
    },
  };
}

/** Text as it is; without a fallback, unset is undefined. */
export function text(): Kind<string | undefined>;
export function text(fallback: string): Kind<string>;
export function text(fallback?: string): Kind<string | undefined> {
  return {
    default: fallback === undefined ? '—' : shown(fallback),
    read: (value) => value ?? fallback,
  };
}

/** One of `values` (trimmed). */
export function choice<T extends string>(values: readonly T[], fallback: T): Kind<T> {
  return {
    default: shown(fallback),
    read(value, name) {
      const trimmed = value?.trim();
      if (!trimmed) return fallback;
      if (!(values as readonly string[]).includes(trimmed)) {
        throw new Error(
          `${name} must be one of ${values.join(', ')}, got ${JSON.stringify(trimmed)}`,
        );
      }
      return trimmed as T;
    },
  };
}

/** A comma-separated list, entries trimmed, empty ones dropped; `check` refuses a bad list. */
export function list(check?: (entries: string[], name: string) => void): Kind<string[]> {
  return {
    default: '—',
    read(value, name) {
      const entries = (value ?? '')
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e !== '');
      check?.(entries, name);
      return entries;
    },
  };
}

/** Any other reading of the text (JSON settings). */
export function parsed<T>(read: (text: string | undefined, name: string) => T): Kind<T> {
  return { default: '—', read };
}

// ---------------------------------------------------------------------------------------------
// The checks and parsers of particular settings

export function hostEntries(entries: string[], name: string): void {
  for (const entry of entries) {
    const problem = allowListEntryProblem(entry);
    if (problem) throw new Error(`${name}: ${JSON.stringify(entry)} ${problem}`);
  }
}

export function cookieKeys(entries: string[], name: string): void {
  if (entries.some((k) => k.length < 32))
    throw new Error(`${name}: each key must be at least 32 characters`);
}

/** `{"<workspace>": {"known_hosts": "<file>", "identity_file": "<file>"}}`. */
export function sshWorkspaces(text: string | undefined, name: string): Record<string, SshAccess> {
  if (text === undefined) return {};
  const fail = (why: string): never => {
    throw new Error(`${name} ${why}`);
  };
  let parsedJson: unknown;
  try {
    parsedJson = JSON.parse(text);
  } catch {
    fail('must be a JSON object');
  }
  if (typeof parsedJson !== 'object' || parsedJson === null || Array.isArray(parsedJson))
    fail('must be a JSON object');
  const out: Record<string, SshAccess> = {};
  for (const [workspace, value] of Object.entries(parsedJson as Record<string, unknown>)) {
    const v = (value ?? {}) as Record<string, unknown>;
    const knownHosts = v.known_hosts;
    const identity = v.identity_file ?? null;
    const extra = Object.keys(v).filter((k) => k !== 'known_hosts' && k !== 'identity_file');
    if (typeof value !== 'object' || extra.length > 0)
      fail(`.${workspace} must be {"known_hosts": "<file>", "identity_file": "<file>"}`);
    if (typeof knownHosts !== 'string' || !path.isAbsolute(knownHosts))
      fail(`.${workspace}.known_hosts must be an absolute path`);
    if (identity !== null && (typeof identity !== 'string' || !path.isAbsolute(identity)))
      fail(`.${workspace}.identity_file must be an absolute path`);
    out[workspace] = {
      knownHostsFile: knownHosts as string,
      identityFile: identity as string | null,
    };
  }
  return out;
}
