/**
 * Opaque keyset cursors. A cursor encodes the (created_at, id) of the last item of a page; the
 * next page starts strictly after it. Clients must treat the string as opaque.
 */

export interface CursorKey {
  createdAt: string;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.createdAt, key.id]), 'utf8').toString('base64url');
}

/** Returns null when the text is not a cursor this service issued. */
export function decodeCursor(text: string): CursorKey | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [createdAt, id] = value as unknown[];
    if (typeof createdAt !== 'string' || typeof id !== 'string' || !UUID.test(id)) return null;
    // Only the exact form encodeCursor writes: anything looser could pass Date.parse yet fail
    // PostgreSQL's timestamptz cast (a 500 instead of a 400).
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(createdAt)) return null;
    const date = new Date(createdAt);
    if (Number.isNaN(date.getTime()) || date.toISOString() !== createdAt) return null;
    return { createdAt, id };
  } catch {
    return null;
  }
}
