/** Options several commands share. */
import { Option } from 'commander';
import { CliError, EXIT } from '../exit-codes';

/** `--limit N`: how many items to fetch at most, following next_cursor page after page. */
export function limitOption(fallback = 100): Option {
  return new Option('--limit <n>', 'the most items to fetch (pages are followed)').default(
    String(fallback),
  );
}

export function parseLimit(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 100_000)
    throw new CliError('--limit must be an integer from 1 to 100000.', EXIT.usage);
  return n;
}

/** A whole number of seconds from a flag. */
export function parseSeconds(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0)
    throw new CliError(`${name} must be a number of seconds > 0.`, EXIT.usage);
  return n;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An id argument (audit, decision): a UUID, else a usage error. An empty one is named as such: in
 * CI it is an unset variable (`archaudit audit gate "$AUDIT_ID"` after a failed step), and going on
 * would ask the API another path than the one meant.
 */
export function parseId(text: string, what: string): string {
  if (text.trim() === '')
    throw new CliError(
      `The ${what} id is empty: is the variable that should hold it set (did the step that prints it fail)?`,
      EXIT.usage,
    );
  if (!UUID_RE.test(text))
    throw new CliError(
      `${JSON.stringify(text.slice(0, 80))} is not a ${what} id (a UUID, as the API returns in \`id\`).`,
      EXIT.usage,
    );
  return text.toLowerCase();
}
