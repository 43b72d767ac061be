/**
 * Kubernetes object names written as shell/envsubst templates (`mongo-deployment-${ENV:-dev}`,
 * `api-$STAGE`): a manifest piped through `envsubst` or `sed` before `kubectl apply`. Such a
 * name is not a stable name: it differs per environment. The name is read with each
 * placeholder's default (`${VAR:-dev}` -> `dev`, one without a default dropped), and a workload
 * whose name holds a placeholder is known by its standard name label (`app.kubernetes.io/name`,
 * else `app`) when it has one, so that it joins the same-named entity of the other deployment
 * files (the compose service `mongo`). A plain literal name is never changed.
 */

/** `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:=default}`, `$VAR`. */
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** True when `text` holds a shell/envsubst placeholder (`${VAR}`, `${VAR:-x}`, `$VAR`). */
export function hasPlaceholder(text: string): boolean {
  PLACEHOLDER.lastIndex = 0;
  return PLACEHOLDER.test(text);
}

/**
 * `text` with each placeholder replaced by its default (none: removed), and the separators the
 * removal leaves doubled or dangling tidied (`api--x` -> `api-x`, `api-` -> `api`); the text
 * itself when it holds no placeholder, or when nothing would be left of it.
 */
export function resolvePlaceholders(text: string): string {
  if (!hasPlaceholder(text)) return text;
  const resolved = text
    .replace(PLACEHOLDER, (_m, _braced: string, def: string | undefined) => def ?? '')
    .replace(/([-._])[-._]+/g, '$1')
    .replace(/^[-._]+|[-._]+$/g, '');
  return resolved === '' ? text : resolved;
}

/** The label keys that name an application, most standard first. */
const NAME_LABELS = ['app.kubernetes.io/name', 'app'];

/**
 * The name a workload is known by: its written name when that is a plain literal; when it holds
 * a placeholder, the first literal name label of its pod template or its own metadata
 * (`app.kubernetes.io/name`, then `app`), else the name resolved with the placeholders' defaults.
 */
export function workloadIdentity(
  rawName: string,
  podLabels: Record<string, string>,
  labels: Record<string, string>,
): string {
  if (!hasPlaceholder(rawName)) return rawName;
  for (const key of NAME_LABELS) {
    for (const set of [podLabels, labels]) {
      const v = set[key]?.trim();
      if (v && !hasPlaceholder(v) && /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(v)) return v;
    }
  }
  return resolvePlaceholders(rawName);
}
