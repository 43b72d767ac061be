/**
 * URLs written in code that are no address the unit connects to (docs/decisions.md, "URLs that
 * are no address", issue 23): read by the connection scan (connections.ts) before it reports a
 * connection.
 *
 * - A URL inside a regular expression (`#https://github\.com/[^\s]+#`): the escaped dot ends the
 *   scanned host early (`github`); the text is a pattern matched against output, not a call.
 * - A host written as an upper-case placeholder (`https://HOSTNAME/v1`, `http://YOUR_HOST`):
 *   host names are written in lower case; a single upper-case word is a slot to fill in.
 * - The cloud platform's own instance metadata endpoint (`metadata.google.internal`,
 *   `instance-data.ec2.internal`): a probe of where the process runs, no service of the system.
 * - The value of a `placeholder` / `example` / `sample` key (`'placeholder' =>
 *   'mongodb+srv://user:pw@cluster0.abc.mongodb.net'`): a sample shown to a user in a form or a
 *   catalogue, not a connection the unit makes.
 */

/**
 * The URL's host stops at an escaped dot (`github\.com`, `github\\.com`): a regular expression. Other escapes
 * (`\"` closing an embedded string, `\n`) are string syntax and leave the URL an address.
 */
export function isPatternUrl(code: string, end: number): boolean {
  // One backslash in a regex literal or a PHP pattern, two in a string literal (`'github\\.com'`).
  return /^\\{1,2}\./.test(code.slice(end, end + 3));
}

/**
 * `HOSTNAME`, `YOUR_HOST`, `API_HOST` as written after `scheme://` (`rest`, before any
 * lower-casing): one upper-case word (no dot), a slot, not a host.
 */
export function isPlaceholderHost(rest: string): boolean {
  const host = rest.replace(/^[^@/]*@/, '').split(/[:/?#]/)[0] ?? '';
  return /^[A-Z][A-Z0-9_-]*[A-Z0-9]$/.test(host) && /[A-Z]{3}/.test(host);
}

const METADATA_HOSTS = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** The instance metadata service of a cloud platform (GCE, EC2). */
export function isCloudMetadataHost(host: string): boolean {
  return METADATA_HOSTS.has(host.toLowerCase());
}

/** The key the value at `index` is given to, read back over at most two lines. */
const SAMPLE_KEY =
  /\b(?:placeholder|example|examples|sample|sample_value|example_value)['"]?\s*(?:=>|:|=)\s*\[?\s*['"`]?$/i;

/** The URL at `index` is the value of a `placeholder` / `example` / `sample` key or attribute. */
export function isSampleValue(code: string, index: number): boolean {
  const before = code.slice(Math.max(0, index - 160), index);
  const lines = before.split('\n');
  const tail = lines.slice(-2).join('\n');
  return SAMPLE_KEY.test(tail);
}
