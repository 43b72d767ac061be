/**
 * A compose file recognised by its content, whatever its name (`pwd.yml`, `stack.yml`,
 * `production.yaml`): the one test both the source classifier (domain/audits/classify.ts, which
 * sees only a file's first 4 KiB) and the cloud analyzer (analysis/cloud/index.ts) apply, so
 * the two never disagree about a file.
 */

/** How much of a file the test reads: what classifyPath is given (domain/audits/classify.ts headBytes). */
export const COMPOSE_HEAD_BYTES = 4096;

/** The top-level keys of the Compose file format (`x-` extensions apart). */
const COMPOSE_KEYS = new Set([
  'version',
  'name',
  'services',
  'networks',
  'volumes',
  'configs',
  'secrets',
  'include',
  'models',
]);

/**
 * True when the head of a YAML file is a compose file: a top-level `services:` mapping (not a
 * list: Tye's `services: - name:` is not one) whose entries declare an `image:` or a `build:`,
 * and no top-level key outside the Compose format (a Helm values file, a CI pipeline or a
 * Kubernetes manifest with a `services:` key is not a compose file).
 */
export function isComposeHead(text: string | undefined): boolean {
  if (!text) return false;
  // The same bytes classifyPath is given: the first 4 KiB, its last line dropped when cut.
  const bytes = Buffer.from(text.slice(0, COMPOSE_HEAD_BYTES), 'utf8').subarray(
    0,
    COMPOSE_HEAD_BYTES,
  );
  const lines = bytes.toString('utf8').split(/\r?\n/);
  if (bytes.length === COMPOSE_HEAD_BYTES) lines.pop();
  let inServices = false;
  let sawServices = false;
  let firstEntry: boolean | null = null;
  let declares = false;
  for (const line of lines) {
    if (/^\s*(#.*)?$/.test(line) || /^(---|\.\.\.)\s*$/.test(line)) continue;
    const top = /^([A-Za-z_][\w.-]*)\s*:(.*)$/.exec(line);
    if (top) {
      const key = top[1]!;
      if (!COMPOSE_KEYS.has(key) && !key.startsWith('x-')) return false;
      inServices = key === 'services';
      if (inServices) {
        // `services: {}` or an inline flow value declares nothing readable here.
        if (!/^\s*(#.*)?$/.test(top[2]!)) return false;
        sawServices = true;
      }
      continue;
    }
    // Anything else at column 0 (a list item, a quoted key) is not the Compose format.
    if (!/^\s/.test(line)) return false;
    if (!inServices) continue;
    if (firstEntry === null) firstEntry = /^\s+[^\s#-][^:]*:/.test(line);
    if (/^\s+(image|build)\s*:/.test(line)) declares = true;
  }
  return sawServices && firstEntry === true && declares;
}
