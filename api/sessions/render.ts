/** Server-rendered pages of the customer session: the layout, the sign-in page, the session page. */

/** HTML-escapes text for element content and attribute values. */
export function esc(text: unknown): string {
  return String(text ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:34rem;margin:3rem auto;background:#fff;border-radius:10px;padding:2rem 2.25rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.35rem;margin:0 0 1rem}label{display:block;margin:.6rem 0 .2rem;font-weight:600}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #bbb;border-radius:6px;font:inherit}
button{margin-top:1.2rem;padding:.55rem 1.2rem;border-radius:6px;border:0;background:#2456d6;color:#fff;font:inherit;cursor:pointer}
button.secondary{background:#e4e7ee;color:#1d2330;margin-left:.5rem}
.error{background:#fde8e8;color:#8a1c1c;padding:.6rem .8rem;border-radius:6px}
.muted{color:#5b6475;font-size:.9rem}fieldset{border:1px solid #dde;border-radius:8px;margin:1rem 0;padding:.6rem 1rem}
fieldset label{font-weight:400;margin:.25rem 0}code{background:#eef;padding:0 .25rem;border-radius:4px}
.scopes{columns:2}`;

/** A whole page; `title` and the body's dynamic parts are escaped by the callers. */
export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)} · archaudit</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

export function signInPage(input: {
  csrf: string;
  returnTo: string;
  login?: string;
  error?: string;
}): string {
  return page(
    'Sign in',
    `<h1>Sign in to archaudit</h1>
${input.error ? `<p class="error" role="alert">${esc(input.error)}</p>` : ''}
<form method="post" action="/session/sign-in">
<input type="hidden" name="csrf" value="${esc(input.csrf)}">
<input type="hidden" name="return_to" value="${esc(input.returnTo)}">
<label for="login">Login</label><input id="login" name="login" type="text" autocomplete="username" required value="${esc(input.login ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<p class="muted">An operator sets your password with <code>npm run admin -- set-password</code>.</p>`,
  );
}

export interface GrantView {
  id: string;
  clientName: string;
  workspaceName: string;
  scopes: string[];
  createdAt: Date;
}

export function sessionPage(input: {
  login: string;
  expiresAt: Date;
  csrf: string;
  grants: GrantView[];
}): string {
  const grants = input.grants
    .map(
      (g) =>
        `<li><strong>${esc(g.clientName)}</strong> in ${esc(g.workspaceName)} <span class="muted">since ${esc(g.createdAt.toISOString())}</span><br><span class="muted">${g.scopes.map((s) => `<code>${esc(s)}</code>`).join(' ')}</span>
<form method="post" action="/session/grants/${esc(g.id)}/revoke"><input type="hidden" name="csrf" value="${esc(input.csrf)}"><button class="secondary" type="submit">Revoke</button></form></li>`,
    )
    .join('\n');
  return page(
    'Session',
    `<h1>Signed in as ${esc(input.login)}</h1>
<p class="muted">This session ends at ${esc(input.expiresAt.toISOString())}.</p>
<h2>Applications you authorized</h2>
${grants ? `<ul>${grants}</ul>` : '<p class="muted">None.</p>'}
<form method="post" action="/session/sign-out"><input type="hidden" name="csrf" value="${esc(input.csrf)}"><button type="submit">Sign out</button></form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${esc(title)}</h1><p>${esc(message)}</p>`);
}
