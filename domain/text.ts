/**
 * Text PostgreSQL can store. `text` and `jsonb` refuse NUL, and a JSON string with an unpaired
 * UTF-16 surrogate is not valid UTF-8. Client input holding either is refused (the validation
 * layer); text the service itself records (git's stderr, failure messages) is cleaned instead, so
 * that recording a failure cannot itself fail.
 */

/** NUL, or a surrogate that is not half of a pair. */
export const UNSTORABLE_TEXT =
  /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_TEXT_ALL = new RegExp(UNSTORABLE_TEXT.source, 'g');

/** Longest string kept by storableText unless told otherwise (characters). */
export const STORED_TEXT_LIMIT = 4000;

/**
 * `text` with NUL and unpaired surrogates replaced by U+FFFD (invalid UTF-8 already became U+FFFD
 * when the bytes were decoded), cut to `limit` characters (never inside a surrogate pair) with
 * an ellipsis.
 */
export function storableText(text: string, limit = STORED_TEXT_LIMIT): string {
  let out = UNSTORABLE_TEXT.test(text) ? text.replace(UNSTORABLE_TEXT_ALL, '\ufffd') : text;
  if (out.length > limit) {
    let end = Math.max(0, limit - 1);
    const last = out.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end -= 1;
    out = `${out.slice(0, end)}\u2026`;
  }
  return out;
}

/**
 * JSON text (JSON.stringify's) that PostgreSQL reads into jsonb and text: each `\u0000` and
 * each lone surrogate, which JSON.stringify writes as a `\uD8xx` escape (a pair it writes as
 * the characters themselves), replaced by U+FFFD.
 */
export const storableJsonText = (json: string): string =>
  json.replace(/(?<!\\)((?:\\\\)*)\\u(?:d[89a-f][0-9a-f]{2}|0000)/gi, '$1\\ufffd');

/** A copy of a JSON-like value with every string and key made storable (see storableText). */
export function storableJson(value: unknown, limit = STORED_TEXT_LIMIT): unknown {
  if (typeof value === 'string') return storableText(value, limit);
  if (Array.isArray(value)) return value.map((v) => storableJson(v, limit));
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [storableText(k, limit), storableJson(v, limit)]),
  );
}
