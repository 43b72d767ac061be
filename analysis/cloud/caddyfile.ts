/**
 * Caddyfile reverse-proxy routes (issue 23, session 15): the upstreams of Caddy's `reverse_proxy`
 * directive, read for the service that runs the file (analysis/cloud/proxies.ts finds it, like an
 * nginx configuration's).
 *
 * Per Caddy's documentation (https://caddyserver.com/docs/caddyfile/directives/reverse_proxy):
 * `reverse_proxy [<matcher>] [<upstreams...>] [{ to <upstreams...> ... }]`; a matcher token is
 * `*`, a path (`/api/*`) or a named matcher (`@api`); an upstream is `[scheme://]host[:port]`
 * (`http`, `https`, `h2c`), never a path; `unix//...` sockets name no host. Environment
 * placeholders (https://caddyserver.com/docs/caddyfile/concepts#environment-variables):
 * `{$VAR}` and `{$VAR:default}` are replaced when the Caddyfile is parsed, `{env.VAR}` at run
 * time; both from the container's environment. An upstream still holding a placeholder (a
 * variable no environment defines, a request placeholder like `{http.request.host}`) names
 * nothing. The syntax (https://caddyserver.com/docs/caddyfile/concepts#structure): an opening
 * brace ends its line, a closing brace stands on its own line; `#` starts a comment.
 *
 * One pass over the lines, no backtracking patterns.
 */
import type { SourceFile } from '../evidence';
import { basename } from '../shared/paths';
import { parseHostPort, type HostPort } from '../shared/urls';

/** A Caddyfile by its conventional names (`Caddyfile`, `Caddyfile.prod`, `site.caddyfile`) that proxies. */
export function isCaddyfile(file: SourceFile): boolean {
  const name = basename(file.path);
  return (
    (/^caddyfile(?:[.-][\w.-]*)?$/i.test(name) || /\.caddyfile$/i.test(name)) &&
    /(^|\s)reverse_proxy(\s|$)/m.test(file.text)
  );
}

/** Caddy's environment placeholders replaced from `env`, else from their own default. */
export function fillCaddyPlaceholders(
  text: string,
  env: Map<string, string>,
): { text: string; used: Set<string>; defaulted: Set<string> } {
  const used = new Set<string>();
  const defaulted = new Set<string>();
  const out = text.replace(
    /\{\$([A-Za-z_]\w*)(?::([^{}\n]*))?\}|\{env\.([A-Za-z_]\w*)\}/g,
    (all, a?: string, def?: string, b?: string) => {
      const name = a ?? b ?? '';
      const v = env.get(name);
      if (v !== undefined) {
        used.add(name);
        return v.replace(/\n/g, ' ');
      }
      if (a !== undefined && def !== undefined) {
        used.add(name);
        defaulted.add(name);
        return def;
      }
      return all;
    },
  );
  return { text: out, used, defaulted };
}

export interface CaddyRoute {
  /** 1-based line of the directive (or of its `to` subdirective). */
  line: number;
  directive: 'reverse_proxy';
  target: HostPort;
}

/** The tokens of one line: whitespace-separated, quotes dropped, a `#` token ends the line. */
function tokens(line: string): string[] {
  const out: string[] = [];
  for (const t of line.split(/[ \t\r]+/)) {
    if (t === '') continue;
    if (t.startsWith('#')) break;
    out.push(t.replace(/^(["'`])(.*)\1$/, '$2'));
  }
  return out;
}

function isMatcher(token: string): boolean {
  return token === '*' || token.startsWith('/') || token.startsWith('@');
}

/** `api:8000`, `http://api:8000`, `h2c://grpc:9000` -> the host; sockets and placeholders -> null. */
function upstream(token: string): HostPort | null {
  if (/^unix\//i.test(token) || token.includes('{') || token.includes('$')) return null;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(token);
  const address = scheme ? (scheme[2] ?? '') : token;
  const hp = parseHostPort(address);
  return hp && hp.host !== '' ? hp : null;
}

/** The upstreams of every `reverse_proxy` directive of a (filled) Caddyfile. */
export function caddyRoutes(text: string): CaddyRoute[] {
  const routes: CaddyRoute[] = [];
  const push = (line: number, args: string[]) => {
    for (const a of args) {
      const target = upstream(a);
      if (target) routes.push({ line, directive: 'reverse_proxy', target });
    }
  };
  let depth = 0;
  /** The depth inside an open `reverse_proxy` block, or -1. */
  let proxyBlock = -1;
  text.split('\n').forEach((raw, i) => {
    const t = tokens(raw);
    if (t.length === 0) return;
    if (t.length === 1 && t[0] === '}') {
      depth = Math.max(0, depth - 1);
      if (depth < proxyBlock) proxyBlock = -1;
      return;
    }
    const opens = t[t.length - 1] === '{';
    const args = opens ? t.slice(0, -1) : t;
    if (args[0] === 'reverse_proxy') {
      const rest = args.slice(1);
      push(i + 1, rest.length > 0 && isMatcher(rest[0] ?? '') ? rest.slice(1) : rest);
      if (opens) proxyBlock = depth + 1;
    } else if (proxyBlock !== -1 && depth === proxyBlock && args[0] === 'to') {
      push(i + 1, args.slice(1));
    }
    if (opens) depth += 1;
  });
  return routes;
}
