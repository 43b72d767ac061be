/**
 * Addresses a compose service is started with on its command line: an option named for an
 * address (`--rpc-host=taskbroker:50051`, `--broker kafka:9092`, `--upstream-url
 * http://api:8080`) whose value names a service of the project is a connection of the
 * container, like an environment variable would be. Only values that resolve to a declared
 * service count: an option's value naming nothing the project runs is no claim about an edge.
 */
import { asArray, asString } from '../shared/values';
import { extractHosts } from './common';
import type { HostResolver } from './env';

/** Option names that carry an address. */
const ADDRESS_OPTION =
  /^--?[a-z][\w-]*?(host|hostname|addr|address|url|uri|server|servers|broker|brokers|endpoint|upstream)$/i;

export interface CommandAddress {
  option: string;
  value: string;
  host: string;
  port: number | null;
  key: string;
  name: string;
}

/** The words of a command: a list as written, or a string split on blanks. */
function words(command: unknown): string[] {
  const s = asString(command);
  if (s !== null) return s.split(/\s+/).filter(Boolean);
  return asArray(command).flatMap((w) => {
    const t = asString(w);
    return t === null ? [] : [t];
  });
}

/** The options of `command` naming a declared service's address. */
export function commandAddresses(command: unknown, resolve: HostResolver): CommandAddress[] {
  const out: CommandAddress[] = [];
  const list = words(command);
  const seen = new Set<string>();
  list.forEach((w, i) => {
    const eq = w.indexOf('=');
    const option = eq > 0 ? w.slice(0, eq) : w;
    if (!ADDRESS_OPTION.test(option)) return;
    const value = (eq > 0 ? w.slice(eq + 1) : (list[i + 1] ?? '')).replace(/^["']|["']$/g, '');
    if (value === '' || value.startsWith('-') || value.includes('$')) return;
    for (const h of extractHosts(option.replace(/^-+/, '').replace(/-/g, '_'), value)) {
      const r = resolve(h.host);
      if (!r || r.via !== undefined) continue;
      if (seen.has(r.key)) continue;
      seen.add(r.key);
      out.push({ option, value, host: h.host, port: h.port, key: r.key, name: r.name });
    }
  });
  return out;
}
