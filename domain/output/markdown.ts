/**
 * Markdown from untrusted strings. Every renderer of Markdown (the report, the decision brief,
 * the MADR export) interpolates repository- and member-written text only through these, so
 * that a common renderer (CommonMark, GFM, markdown-it) shows it as the text it is:
 * - no raw HTML: `<`, `>` and `&` become entities;
 * - no Markdown structure: emphasis, code, link, image, table and line-start block markers are
 *   backslash-escaped, and GFM's bare-URL, `www.` and e-mail autolinks are broken;
 * - links only where the renderer asks for one, and only http(s) to the audited repository's
 *   own host (`mdLink`); no images at all;
 * - code spans fenced with more backticks than the text holds, so no backtick run ends them.
 */
import { plainLine, plainText } from './plain';

/** Inline metacharacters escaped wherever they stand. */
// `_` between letters or digits never opens or closes emphasis (CommonMark's flanking rules),
// so `in_review` stays readable; elsewhere it is escaped.
const INLINE = /[\\`*[\]{}!|~@]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu;
const ENTITY: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;' };

function escapeLine(line: string): string {
  let out = line
    .replace(/[<>&]/g, (c) => ENTITY[c]!)
    .replace(INLINE, '\\$&')
    // GFM autolinks: `scheme://...` and `www.` become links in running text.
    .replace(/:\/\//g, '\\://')
    .replace(/\b(www)\./gi, '$1\\.');
  // Block markers that count only at the start of a line (after up to 3 spaces).
  out = out.replace(/^( {0,3})([-+=#])/, '$1\\$2').replace(/^( {0,3}\d{1,9})([.)])/, '$1\\$2');
  return out;
}

/** One line of text (headings, list items, table cells): breaks become spaces. */
export function mdText(text: string): string {
  return escapeLine(plainLine(text));
}

/** Paragraphs of text: line breaks kept, every line escaped (no line can start a block). */
export function mdBlock(text: string): string {
  return plainText(text)
    .replace(/\t/g, ' ')
    .split('\n')
    .map((line) => escapeLine(line.replace(/^ {4,}/, '   ')))
    .join('\n');
}

/**
 * An inline code span holding `text` exactly (one line): fenced by one more backtick than its
 * longest run. In a GFM table cell (`inTable`) a `|` still splits the cell inside code, so it
 * is escaped there (the table parser removes the backslash).
 */
export function mdCode(text: string, inTable = false): string {
  let body = plainLine(text);
  if (inTable) body = body.replace(/\|/g, '\\|');
  const longest = Math.max(0, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = body.startsWith('`') || body.endsWith('`') || body.trim() === '' ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** The host of an http(s) URL, lower-cased; null for anything else. */
export function httpHost(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * A link to `url` labelled `label`, only when `url` is http(s) on `allowedHost` (the audited
 * repository's own host); otherwise the label alone (and the URL as code, so it can be read but
 * not followed). The URL is written in its parsed, percent-encoded form inside `<...>`.
 */
export function mdLink(label: string, url: string, allowedHost: string | null): string {
  const host = httpHost(url);
  if (host && allowedHost && host === allowedHost.toLowerCase()) {
    const href = new URL(url).href.replace(/[<>\s()]/g, (c) => encodeURIComponent(c));
    return `[${mdText(label)}](<${href}>)`;
  }
  return label === url ? mdCode(url) : `${mdText(label)} (${mdCode(url)})`;
}
