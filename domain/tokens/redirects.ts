/** Which redirect URIs an OAuth client may register: https anywhere, http only on loopback. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function isAllowedRedirectUri(uri: string): boolean {
  if (!URL.canParse(uri)) return false;
  const url = new URL(uri);
  if (url.hash || url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}
