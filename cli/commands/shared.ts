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
