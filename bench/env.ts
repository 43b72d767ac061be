/** Benchmark settings from the environment. */

/** An integer setting >= `min`, or `fallback` when unset; anything else stops the benchmark. */
export function intEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got ${raw}`);
  }
  return value;
}
