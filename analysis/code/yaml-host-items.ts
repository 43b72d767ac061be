/**
 * Store addresses written as a YAML block sequence under an engine's address key:
 *
 *     data:
 *       kafka:
 *         addrs:
 *           - 127.0.0.1:9092
 *
 * Clients that take several brokers or nodes (sarama's `[]string` of Kafka addresses, go-redis'
 * cluster `Addrs`, Elasticsearch `hosts`) are configured this way; each item is one address of
 * the store the owning key names (`data.kafka.addrs`). The owning key must name the engine and
 * end in an address word, as for a `key: value` line; an item with a scheme (`redis://...`) is
 * read as a URL elsewhere, a quoted item under a Kafka key by the bootstrap-list scan.
 */
import type { HostPort } from '../shared/urls';
import { engineFromKey, hostList } from './connection-hosts';

/** The last segment of a key whose sequence items are addresses. */
const ADDRESS_LIST_KEY =
  /(^|[._-])(addrs?|address(es)?|hosts?|servers?|brokers?|nodes|endpoints?|bootstrap[._-]?servers|seeds?)$/i;

/** A YAML parent key and the column its line starts at (dashes of a sequence counted). */
export interface YamlParent {
  indent: number;
  key: string;
}

/**
 * The engine and addresses of a block sequence item line (`  - host:port`), given the keys of
 * the lines above it; null when the line is no such item or its key names no engine's address.
 */
export function yamlHostItem(
  parents: YamlParent[],
  text: string,
): {
  key: string;
  engine: { engine: string; kind: 'datastore' | 'queue' };
  hosts: HostPort[];
} | null {
  const m = /^(\s*)-\s+([^\s"'#][^\s#]*)\s*(#.*)?$/.exec(text);
  if (!m) return null;
  const dash = m[1]!.length;
  // The item belongs to the innermost key opened at or left of its dash (a compact sequence
  // starts in the key's own column).
  const owners = parents.filter((p) => p.indent <= dash);
  const key = owners.map((p) => p.key).join('.');
  if (!key || !ADDRESS_LIST_KEY.test(owners[owners.length - 1]!.key)) return null;
  const engine = engineFromKey(key);
  if (!engine) return null;
  const hosts = hostList(m[2]!);
  return hosts.length > 0 ? { key, engine, hosts } : null;
}
