/**
 * SARIF strings from untrusted paths and text. `artifactLocation.uri` is an RFC 3986
 * URI-reference relative to %SRCROOT%: each path segment percent-encoded (so spaces, `#`, `?`,
 * `%`, `:` and control characters are never raw), `.` segments dropped and `..` segments
 * clamped at the root, so a hostile path cannot name a file outside the checkout.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The base id the relative URIs resolve against. */
export const SRCROOT = '%SRCROOT%';

/** A repository path as a relative URI-reference under %SRCROOT% ('.' for the root itself). */
export function sarifUri(path: string): string {
  const segments: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      segments.pop();
      continue;
    }
    segments.push(
      encodeURIComponent(part.replace(LONE_SURROGATE, '\ufffd')).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    );
  }
  return segments.length ? segments.join('/') : '.';
}
