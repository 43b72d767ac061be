/** Reading parsed YAML, JSON and HCL values without trusting their shape. */

/** A plain object (not null, not an array). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Strings as they are; numbers and booleans as written; anything else null. */
export function asString(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
