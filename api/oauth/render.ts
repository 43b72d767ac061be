/** The consent page and the authorization server's error page. */
import { esc, page } from '../sessions/render';
import { SCOPE_DESCRIPTIONS } from '../../domain/tokens/scope-descriptions';
import type { ScopeName } from '../../domain/contract/values';

export interface ConsentView {
  uid: string;
  csrf: string;
  login: string;
  clientName: string;
  clientId: string;
  redirectHost: string;
  resource: string;
  workspaces: Array<{
    memberId: string;
    name: string;
    slug: string;
    role: string;
    allowed: ScopeName[];
  }>;
  /** Scopes the client asked for (each shown checked when the member's role allows it). */
  requested: ScopeName[];
  error?: string;
}

export function consentPage(v: ConsentView): string {
  const workspaces = v.workspaces
    .map(
      (w, i) =>
        `<label><input type="radio" name="member_id" value="${esc(w.memberId)}"${i === 0 ? ' checked' : ''}> ${esc(w.name)} <span class="muted">(${esc(w.slug)}, ${esc(w.role)})</span></label>`,
    )
    .join('\n');
  const allowedAnywhere = new Set(v.workspaces.flatMap((w) => w.allowed));
  const scopes = v.requested
    .filter((s) => allowedAnywhere.has(s))
    .map(
      (s) =>
        `<label title="${esc(SCOPE_DESCRIPTIONS[s])}"><input type="checkbox" name="scope" value="${esc(s)}"${s.endsWith(':read') ? ' checked' : ''}> <code>${esc(s)}</code></label>`,
    )
    .join('\n');
  return page(
    'Authorize',
    `<h1>Authorize ${esc(v.clientName)}</h1>
${v.error ? `<p class="error" role="alert">${esc(v.error)}</p>` : ''}
<p><strong>${esc(v.clientName)}</strong> <span class="muted">(client <code>${esc(v.clientId)}</code>)</span> asks to use archaudit as <strong>${esc(v.login)}</strong> through the MCP gateway. After you decide, you are sent back to <strong>${esc(v.redirectHost)}</strong>.</p>
<form method="post" action="/oauth/interaction/${esc(v.uid)}">
<input type="hidden" name="csrf" value="${esc(v.csrf)}">
<fieldset><legend>Workspace (one)</legend>
${workspaces}
</fieldset>
<fieldset><legend>Scopes (never more than your role in the workspace allows)</legend><div class="scopes">
${scopes || '<p class="muted">The client asked for no scope you can grant.</p>'}
</div></fieldset>
<p class="muted">Access tokens last an hour and are renewed while the grant lives; you can revoke the grant at any time (<code>DELETE /v1/workspaces/{id}/oauth-grants/{grant_id}</code>).</p>
<button type="submit" name="decision" value="allow">Allow</button><button class="secondary" type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function renderOAuthError(out: Record<string, string>): string {
  return page(
    'Authorization error',
    `<h1>Authorization failed</h1><p class="error">${esc(out.error)}: ${esc(out.error_description ?? '')}</p><p class="muted">Return to the application and start again.</p>`,
  );
}
