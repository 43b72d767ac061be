/**
 * Model prices and exact cost arithmetic. Prices come only from configuration (`MODEL_PRICES`):
 * vendor prices change, so none are built in, and a model without a price costs "0.000000".
 *
 * All arithmetic is on BigInt, never floats. A price is a decimal string of USD per 1,000,000
 * tokens with at most 6 fractional digits, i.e. a whole number of micro-dollars per million
 * tokens. `tokens * priceMicro` is then an exact cost in 1e-12 USD (pico-dollars); the sum over
 * uncached input, cached input and output is rounded once, half-up, to 1e-6 USD.
 */
import type { ModelUsage } from './model';
import { parseMicros, type ModelPrice } from '../../../domain/audits/model-prices';

// The price type and decimal parsing live with the price table's grammar, in domain/.
export { parseMicros, type ModelPrice };

const MICRO = 1_000_000n;

/** Micro-units as a decimal string with exactly 6 fractional digits ("3.683329"). */
export function formatMicros(micros: bigint): string {
  if (micros < 0n) throw new RangeError('negative amount');
  const whole = micros / MICRO;
  const fraction = (micros % MICRO).toString().padStart(6, '0');
  return `${whole}.${fraction}`;
}

/**
 * The cost of one completion in USD, exact to 6 decimals ("0.012345"): uncached input
 * (`inputTokens - cachedInputTokens`) at `input`, cached input at `cachedInput`, output at
 * `output`, summed exactly and rounded half-up once. No price (unknown model) -> "0.000000".
 * Throws on negative or non-integer token counts, or more cached than input tokens.
 */
export function costUsd(usage: ModelUsage, price: ModelPrice | undefined): string {
  const input = tokenCount(usage.inputTokens, 'inputTokens');
  const cached = tokenCount(usage.cachedInputTokens, 'cachedInputTokens');
  const output = tokenCount(usage.outputTokens, 'outputTokens');
  if (cached > input) {
    throw new RangeError(`cachedInputTokens (${cached}) exceeds inputTokens (${input})`);
  }
  if (!price) return formatMicros(0n);
  // tokens * (micro-USD per 1e6 tokens) = 1e-12 USD.
  const pico =
    (input - cached) * parseMicros(price.input) +
    cached * parseMicros(price.cachedInput) +
    output * parseMicros(price.output);
  // Round half-up from 1e-12 to 1e-6 USD (amounts are never negative).
  return formatMicros((pico + MICRO / 2n) / MICRO);
}

/** Exact sum of two non-negative USD amounts (at most 6 decimals each), with 6 decimals. */
export function addUsd(a: string, b: string): string {
  return formatMicros(parseMicros(a) + parseMicros(b));
}

function tokenCount(value: number, name: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
  return BigInt(value);
}
