/**
 * What an MCP client's user does in a browser, over plain HTTP: follow the authorization
 * redirect, sign in, consent (choose a workspace and scopes), and land on the client's
 * redirect URI with a code. Cookies are kept per path like a browser does. And an
 * OAuthClientProvider for the official MCP SDK client that keeps everything in memory.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

export const REDIRECT_URL = 'http://127.0.0.1:9/callback';

export class MemoryOAuthProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;

  constructor(private readonly metadata: Partial<OAuthClientMetadata> = {}) {}

  get redirectUrl(): string {
    return REDIRECT_URL;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test agent',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...this.metadata,
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

interface Cookie {
  name: string;
  value: string;
  path: string;
}

/** A cookie jar for one origin. */
export class Browser {
  private cookies: Cookie[] = [];
  /** Every page fetched, by URL (the last HTML of each). */
  pages = new Map<string, string>();

  /** `headers`: sent with every request (e.g. X-Forwarded-For behind TRUST_PROXY). */
  constructor(private readonly headers: Record<string, string> = {}) {}

  /** The value of a cookie this browser holds, if any. */
  cookie(name: string): string | undefined {
    return this.cookies.find((c) => c.name === name)?.value;
  }

  private cookieHeader(url: URL): string {
    return this.cookies
      .filter(
        (c) =>
          url.pathname === c.path ||
          url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`) ||
          c.path === '/',
      )
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  private store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';').map((s) => s.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      const path = attrs.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? '/';
      const expired = attrs.some((a) => /^expires=Thu, 01 Jan 1970/i.test(a)) || value === '';
      this.cookies = this.cookies.filter((c) => !(c.name === name && c.path === path));
      if (!expired) this.cookies.push({ name, value, path });
    }
  }

  /** One request, no redirect following. */
  async request(
    url: string,
    init: { method?: string; form?: Record<string, string | string[]> } = {},
  ) {
    const target = new URL(url);
    const headers: Record<string, string> = { ...this.headers, cookie: this.cookieHeader(target) };
    let body: string | undefined;
    if (init.form) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(init.form))
        for (const one of [v].flat()) params.append(k, one);
      body = params.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(target, {
      method: init.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      redirect: 'manual',
    });
    this.store(res);
    const text = await res.text();
    if ((res.headers.get('content-type') ?? '').includes('html'))
      this.pages.set(target.pathname, text);
    return {
      status: res.status,
      location: res.headers.get('location'),
      text,
      headers: res.headers,
    };
  }

  /** Follows redirects from `url` until a page answers or the client's redirect URI is reached. */
  async follow(
    url: string,
    init: { method?: string; form?: Record<string, string | string[]> } = {},
  ) {
    let reply = await this.request(url, init);
    let current = url;
    for (let hops = 0; reply.location && hops < 10; hops++) {
      const next = new URL(reply.location, current).href;
      if (next.startsWith(REDIRECT_URL)) return { ...reply, url: next, redirected: new URL(next) };
      current = next;
      reply = await this.request(next);
    }
    return { ...reply, url: current, redirected: undefined as URL | undefined };
  }
}

export function hiddenField(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no field ${name} in ${html.slice(0, 500)}`);
  return m[1]!.replace(/&amp;/g, '&');
}

export function radioValues(html: string, name: string): string[] {
  return [...html.matchAll(new RegExp(`type="radio" name="${name}" value="([^"]*)"`, 'g'))].map(
    (m) => m[1]!,
  );
}

/**
 * From the authorization URL to the code: sign in when asked, then consent with `workspace`
 * (a member id; default the first offered) and `scopes`. Returns the redirect the client gets.
 */
export async function authorizeInBrowser(
  browser: Browser,
  authorizationUrl: URL,
  who: { login: string; password: string },
  choice: { memberId?: string; scopes: string[]; decision?: 'allow' | 'deny' },
) {
  let page = await browser.follow(authorizationUrl.href);
  if (page.redirected) return page.redirected;
  if (page.url.includes('/session/sign-in')) {
    page = await browser.follow(new URL('/session/sign-in', page.url).href, {
      form: {
        csrf: hiddenField(page.text, 'csrf'),
        return_to: hiddenField(page.text, 'return_to'),
        login: who.login,
        password: who.password,
      },
    });
  }
  if (!page.url.includes('/oauth/interaction/'))
    throw new Error(
      `expected the consent page, got ${page.status} ${page.url}: ${page.text.slice(0, 300)}`,
    );
  const memberId = choice.memberId ?? radioValues(page.text, 'member_id')[0]!;
  const done = await browser.follow(page.url, {
    form: {
      csrf: hiddenField(page.text, 'csrf'),
      member_id: memberId,
      scope: choice.scopes,
      decision: choice.decision ?? 'allow',
    },
  });
  if (!done.redirected) {
    const alert = /role="alert">([^<]*)</.exec(done.text)?.[1];
    throw new Error(`consent did not redirect: ${done.status} ${alert ?? done.text.slice(0, 500)}`);
  }
  return done.redirected;
}
