/**
 * Plain text from untrusted strings (repository content, member-written text): the one rule for
 * characters that must never reach a reader raw. Control characters (C0 but tab and newline,
 * DEL, C1), unpaired surrogates and the bidirectional overrides and isolates (which reorder
 * what a reader sees, "Trojan Source") are replaced by U+FFFD. The other output modules
 * (markdown.ts, terminal.ts, sarif.ts) build on these.
 */

/** Characters never shown raw: C0 but \t \n, DEL, C1, bidi controls, unpaired surrogates. */
const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Line breaks of every kind (CRLF, CR, LF, NEL, LS, PS). */
const BREAKS = /\r\n|[\r\n\u0085\u2028\u2029]/g;

/** `text` with every unsafe character replaced by U+FFFD; line breaks kept as `\n`, tabs kept. */
export function plainText(text: string): string {
  return text.replace(BREAKS, '\n').replace(UNSAFE, '\ufffd');
}

/** `text` as one line: unsafe characters replaced, line breaks and tabs turned into spaces. */
export function plainLine(text: string): string {
  return plainText(text).replace(/[\n\t]/g, ' ');
}

/** A copy of a JSON-like value with every string (keys too) made plain by plainText. */
export function plainJson(value: unknown): unknown {
  if (typeof value === 'string') return plainText(value);
  if (Array.isArray(value)) return value.map(plainJson);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [plainText(k), plainJson(v)]));
}

/** JSON-text escapes JSON.stringify leaves raw (DEL, C1, bidi, LS/PS): escaped as \uXXXX. */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON of `value` (indented by `space`) that shows no control character raw: JSON.stringify
 * already escapes C0 and unpaired surrogates; the rest are escaped as \uXXXX, so the text means
 * exactly the same value.
 */
export function safeJson(value: unknown, space?: number): string {
  const json = JSON.stringify(value, null, space);
  if (json === undefined) return '';
  return json.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
