/**
 * Model prices as configured (`MODEL_PRICES`, read by platform/config.ts): the table's grammar and
 * the exact decimal amounts it holds. The cost arithmetic over them is in
 * activities/audits/agents/pricing.ts.
 */

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
