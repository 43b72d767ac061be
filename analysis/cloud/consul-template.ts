/**
 * Consul Template files that render a proxy for every service of the Consul catalog (issue 23,
 * session 15). Consul Template (`consul-template -consul-addr consul:8500 -template
 * "in.ctmpl:out.conf:reload"`) watches a Consul agent and rewrites a file from a Go template;
 * its `services` function lists every service of the catalog and `service <name>` the healthy
 * instances of one. A template that ranges over `services` and writes, for each, a proxy
 * directive with the instances' `.Address` (Apache `BalancerMember`/`ProxyPass`, nginx
 * `upstream`/`server`/`proxy_pass`, HAProxy `backend`/`server`) makes the container running it
 * route to every service registered in that Consul.
 *
 * Read only when nothing in the range can drop a service: any `if`, `with` or `else` action in
 * the range's body, or `services` called with arguments (a datacenter, a namespace), and the
 * file says nothing (a filter by tag or name is not evaluated). The file is a `*.ctmpl` (the
 * tool's conventional extension) and the container that runs it is the proxy: a Dockerfile
 * `CMD`/`ENTRYPOINT` or a compose `command`/`entrypoint` that runs `consul-template` with a
 * `-template` whose source is that file's name, run by the service owning the file
 * (analysis/cloud/proxies.ts). The Consul it asks is that invocation's `-consul-addr` (or the
 * older `-consul`), else the service's `CONSUL_HTTP_ADDR`; unknown: nothing said.
 *
 * Evidence `registry-catalog-route` (no object: which services register in that Consul is read
 * from code, analysis/code/consul-registration.ts, and joined in
 * analysis/reconcile-registry-catalog.ts), attributes `registry: 'consul'`, `registry_host`.
 */
import type { SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { basename } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { parseHostPort } from '../shared/urls';
import { asArray, asString, isRecord } from '../shared/values';
import { parseYamlDocuments } from '../shared/yaml';
import { instructions } from './dockerfile';

export const isConsulTemplate = (path: string) => /\.ctmpl$/i.test(path);

export interface CatalogRange {
  start: number;
  end: number;
  /** The first proxy directive of the range's body (`BalancerMember`, `upstream`...). */
  directive: string;
}

const ACTION = /\{\{([^{}]{0,2000})\}\}/g;
const OPENS = /^(?:range|if|with|block|define)\b/;
const FILTERS = /^(?:if|with|else)\b/;
const PROXY_WORD =
  /\b(BalancerMember|ProxyPass|ProxyPassReverse|proxy_pass|grpc_pass|upstream|backend|server)\b/;

/** The `{{range services}}` blocks of a template that keep every service and proxy to each. */
export function catalogRanges(text: string): CatalogRange[] {
  const idx = new LineIndex(text);
  const out: CatalogRange[] = [];
  // The open blocks: for a catalog range, where it starts and whether its body filters.
  const stack: Array<{
    catalog: boolean;
    at: number;
    bodyAt: number;
    filtered: boolean;
    instances: boolean;
    address: boolean;
  }> = [];
  for (const m of text.matchAll(ACTION)) {
    // `{{- x -}}` trims the text around it: the action is `x`.
    const action = (m[1] ?? '').replace(/^-\s/, '').replace(/\s-$/, '').trim();
    const at = m.index ?? 0;
    const catalog = stack.find((s) => s.catalog);
    if (catalog) {
      if (FILTERS.test(action)) catalog.filtered = true;
      if (/^range\s+(?:\$\w+\s*(?:,\s*\$\w+\s*)?:=\s*)?service\s+(?:\.Name|\$\w+)\s*$/.test(action))
        catalog.instances = true;
      if (/(?:^|\s)\.Address\b/.test(action)) catalog.address = true;
    }
    if (/^end\b/.test(action)) {
      const top = stack.pop();
      if (top?.catalog && !top.filtered && top.instances && top.address) {
        const body = text.slice(top.bodyAt, at).replace(/\{\{[^{}]*\}\}/g, ' ');
        const word = PROXY_WORD.exec(body);
        if (word)
          out.push({ start: idx.lineAt(top.at), end: idx.lineAt(at), directive: word[1] ?? '' });
      }
      continue;
    }
    if (!OPENS.test(action)) continue;
    stack.push({
      // A nested catalog range inside another is read as part of the outer one.
      catalog: !catalog && /^range\s+(?:\$\w+\s*(?:,\s*\$\w+\s*)?:=\s*)?services\s*$/.test(action),
      at,
      bodyAt: at + m[0].length,
      filtered: false,
      instances: false,
      address: false,
    });
    if (stack.length > 64) return out;
  }
  return out;
}

/** A `consul-template` command line: the template sources it renders and the Consul it asks. */
export interface Invocation {
  /** The compose service, or the Dockerfile path whose owner runs it. */
  service?: string;
  dockerfile?: string;
  sources: string[];
  host: string | null;
}

function parseCommand(line: string): Omit<Invocation, 'service' | 'dockerfile'> | null {
  if (!/\bconsul-template\b/.test(line)) return null;
  const sources: string[] = [];
  for (const m of line.matchAll(/(?:^|\s)--?template(?:=|\s+)["']?([^"'\s:]{1,500})/g))
    sources.push(basename(m[1] ?? ''));
  const addr = /(?:^|\s)--?consul(?:-addr)?(?:=|\s+)["']?([^"'\s]{1,300})/.exec(line);
  const value = (addr?.[1] ?? '').replace(/^https?:\/\//i, '');
  const hp = value ? parseHostPort(value) : null;
  return { sources, host: hp && hp.host !== '' ? hp.host.toLowerCase() : null };
}

/** `CMD`/`ENTRYPOINT` of a Dockerfile's final stage, exec form joined into one line. */
function dockerfileCommands(text: string): string[] {
  let out: string[] = [];
  for (const ins of instructions(text)) {
    if (ins.cmd === 'FROM') out = [];
    else if (ins.cmd === 'CMD' || ins.cmd === 'ENTRYPOINT') {
      const args = ins.args.trim();
      let line = args;
      if (args.startsWith('[')) {
        try {
          const arr = JSON.parse(args) as unknown;
          if (Array.isArray(arr)) line = arr.map(String).join(' ');
        } catch {
          // Not JSON: the shell form.
        }
      }
      out.push(line);
    }
  }
  return out;
}

/** The consul-template invocations of the Dockerfiles and compose services. */
export function consulTemplateInvocations(
  dockerfiles: SourceFile[],
  compose: SourceFile[],
): Invocation[] {
  const out: Invocation[] = [];
  for (const f of dockerfiles) {
    if (!f.text.includes('consul-template')) continue;
    for (const line of dockerfileCommands(f.text)) {
      const p = parseCommand(line);
      if (p) out.push({ ...p, dockerfile: f.path });
    }
  }
  for (const f of compose) {
    if (!f.text.includes('consul-template')) continue;
    for (const doc of parseYamlDocuments(f).docs) {
      const services = isRecord(doc.value) ? doc.value.services : null;
      if (!isRecord(services)) continue;
      for (const [name, svc] of Object.entries(services)) {
        if (!isRecord(svc)) continue;
        for (const v of [svc.entrypoint, svc.command]) {
          const line =
            typeof v === 'string'
              ? v
              : asArray(v)
                  .map((x) => asString(x) ?? '')
                  .join(' ');
          const p = parseCommand(line);
          if (p) out.push({ ...p, service: entityKey('service', name) });
        }
      }
    }
  }
  return out;
}
