/**
 * Where an integration may send its calls: the configured API base URL only, under the SSRF
 * rules of repository sources (domain/repositories/source-policy.ts): no internal or special
 * host or address unless the operator allow-listed it (REPOSITORY_ALLOWED_HOSTS), no embedded
 * credentials; https, or plain http to an allow-listed host only (a self-managed forge inside the
 * network). The addresses a name resolves to are checked again at each call (resolvedAddressProblem).
 */
import {
  allowListed,
  checkSource,
  type SourcePolicy,
  type WorkspaceRef,
} from '../repositories/source-policy';

/** The longest API base URL accepted. */
export const API_BASE_URL_MAX = 500;

/** Why `url` cannot be an integration's API base URL, or null. */
export function apiBaseUrlProblem(
  url: string,
  workspace: WorkspaceRef,
  policy: SourcePolicy,
): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'must be an https:// URL';
  if (u.username || u.password)
    return 'must not embed credentials; give the token in `token` instead';
  if (u.search || u.hash || url.includes('?') || url.includes('#'))
    return 'must not have a query or fragment';
  // The host as repository sources judge it (the path only has to be there).
  const check = checkSource(`https://${url.slice(u.protocol.length + 2)}/_`, workspace, {
    ...policy,
    localWorkspaces: [],
  });
  if (!check.ok) return check.reason;
  if (check.source.kind === 'local') return 'must be an https:// URL';
  if (u.protocol === 'http:' && !allowListed(policy, check.source.host, check.source.literal))
    return 'plain http is allowed only for hosts in REPOSITORY_ALLOWED_HOSTS; use https';
  return null;
}

/** The base URL as stored: without trailing slashes. */
export const normalizedBaseUrl = (url: string): string => url.replace(/\/+$/, '');
