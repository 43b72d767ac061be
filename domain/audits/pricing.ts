/**
 * Model prices and exact cost arithmetic. Prices come only from configuration (`MODEL_PRICES`,
 * parsed here for platform/config.ts): vendor prices change, so none are built in, and a model
 * without a price costs "0.000000".
 *
 * All arithmetic is on BigInt, never floats. A price is a decimal string of USD per 1,000,000
 * tokens with at most 6 fractional digits, i.e. a whole number of micro-dollars per million
 * tokens. `tokens * priceMicro` is then an exact cost in 1e-12 USD (pico-dollars); the sum over
 * uncached input, cached input and output is rounded once, half-up, to 1e-6 USD.
 */

/** Tokens of one completion, as the model server reports them. */
export interface ModelUsage {
  /** Prompt tokens, including the cached ones (as OpenAI reports `prompt_tokens`). */
  inputTokens: number;
  /** The part of `inputTokens` served from the provider's prompt cache. */
  cachedInputTokens: number;
  outputTokens: number;
}

/** USD per 1,000,000 tokens, as decimal strings (at most 6 fractional digits). */
export interface ModelPrice {
  input: string;
  cachedInput: string;
  output: string;
}

const DECIMAL = /^(\d+)(?:\.(\d{1,6}))?$/;
const MICRO = 1_000_000n;
/** Longest accepted decimal string: far beyond any real amount, short of absurd input. */
const MAX_DECIMAL_CHARS = 40;
const PRICE_FIELDS = { input: 'input', cached_input: 'cachedInput', output: 'output' } as const;

/**
 * Parses a non-negative decimal string with at most 6 fractional digits ("2.50", "10", "0.000001")
 * into millionths (micro-units). Throws on anything else: signs, exponents, blanks, more than 6
 * fractional digits, a bare "." or a missing integer part.
 */
export function parseMicros(text: string): bigint {
  if (typeof text !== 'string' || text.length > MAX_DECIMAL_CHARS) {
    throw new Error(`not a decimal amount: ${JSON.stringify(text)}`);
  }
  const match = DECIMAL.exec(text);
  if (!match) {
    throw new Error(
      `not a non-negative decimal with at most 6 fractional digits: ${JSON.stringify(text)}`,
    );
  }
  const whole = BigInt(match[1] as string);
  const fraction = BigInt((match[2] ?? '').padEnd(6, '0'));
  return whole * MICRO + fraction;
}

/**
 * The price table from `MODEL_PRICES` (read by platform/config.ts), a JSON object
 * `{"<model_id>": {"input": "2.50", "cached_input": "1.25", "output": "10.00"}}`. Unset or blank
 * means an empty table. Strict: every entry needs exactly these three fields, each a decimal
 * string; any violation throws an Error naming the entry.
 */
export function parsePriceTable(raw: string | undefined): Record<string, ModelPrice> {
  if (raw === undefined || raw.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw new Error(`MODEL_PRICES is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new Error('MODEL_PRICES must be a JSON object keyed by model id');
  }
  const table: Record<string, ModelPrice> = Object.create(null) as Record<string, ModelPrice>;
  for (const [modelId, entry] of Object.entries(json as Record<string, unknown>)) {
    const where = `MODEL_PRICES[${JSON.stringify(modelId)}]`;
    if (modelId.trim() === '' || modelId !== modelId.trim()) {
      throw new Error(`${where}: the model id must be non-empty without surrounding spaces`);
    }
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new Error(`${where} must be an object with input, cached_input and output`);
    }
    const fields = entry as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (!Object.hasOwn(PRICE_FIELDS, key)) {
        throw new Error(
          `${where} has an unknown field ${JSON.stringify(key)} (expected input, cached_input, output)`,
        );
      }
    }
    const price: Partial<ModelPrice> = {};
    for (const [key, prop] of Object.entries(PRICE_FIELDS)) {
      const value = fields[key];
      if (value === undefined) throw new Error(`${where} is missing ${key}`);
      if (typeof value !== 'string') {
        throw new Error(
          `${where}.${key} must be a decimal string such as "2.50", got ${JSON.stringify(value)}`,
        );
      }
      try {
        parseMicros(value);
      } catch (err) {
        throw new Error(`${where}.${key}: ${(err as Error).message}`);
      }
      price[prop] = value;
    }
    table[modelId] = price as ModelPrice;
  }
  return { ...table };
}

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
