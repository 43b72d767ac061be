/**
 * Which repository URLs a tenant may register. Remote git over https or ssh always; local paths
 * and file:// URLs only when the operator allows them, so a tenant can never make the server
 * read its own files. Option-like and transport-helper forms (`-x`, `ext::`) are refused.
 */
export type RepositoryUrlKind = 'https' | 'ssh' | 'local';

export type UrlCheck = { ok: true; kind: RepositoryUrlKind } | { ok: false; reason: string };

const SCP_LIKE = /^[A-Za-z0-9_][A-Za-z0-9._-]*@[A-Za-z0-9.][A-Za-z0-9.-]*:(?!\/\/)(?!-)[^\s]+$/;

export function checkRepositoryUrl(url: string, allowLocal: boolean): UrlCheck {
  if (/[\s\x00-\x1f\x7f]/.test(url))
    return { ok: false, reason: 'must not contain whitespace or control characters' };
  if (url.startsWith('-')) return { ok: false, reason: 'must not start with "-"' };
  if (url.includes('::'))
    return { ok: false, reason: 'git transport helpers (`<transport>::`) are not allowed' };

  if (/^https:\/\//i.test(url) || /^ssh:\/\//i.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { ok: false, reason: 'is not a valid URL' };
    }
    if (!parsed.hostname) return { ok: false, reason: 'must name a host' };
    // An option-like host or user would reach ssh as a command-line flag (CVE-2017-1000117).
    if (parsed.hostname.startsWith('-') || parsed.username.startsWith('-')) {
      return { ok: false, reason: 'host and user must not start with "-"' };
    }
    if (parsed.pathname.length <= 1) return { ok: false, reason: 'must name a repository path' };
    // Credentials belong in the server's configuration, never in a URL every reader sees.
    if (parsed.password || (parsed.protocol === 'https:' && parsed.username)) {
      return { ok: false, reason: 'must not embed credentials; configure them on the server' };
    }
    return { ok: true, kind: parsed.protocol === 'https:' ? 'https' : 'ssh' };
  }
  if (SCP_LIKE.test(url)) return { ok: true, kind: 'ssh' };
  if (/^file:\/\//i.test(url) || url.startsWith('/')) {
    return allowLocal
      ? { ok: true, kind: 'local' }
      : {
          ok: false,
          reason:
            'local paths and file:// URLs are disabled on this server (ALLOW_LOCAL_REPOSITORIES)',
        };
  }
  return { ok: false, reason: 'must be an https://, ssh:// or git@host:path URL' };
}
