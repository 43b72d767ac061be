/**
 * Seed and node lists: `POSTGRES_SEEDS=postgresql`, `CASSANDRA_SEEDS=cassandra1,cassandra2`,
 * `ES_SEEDS=elasticsearch`. Cassandra's `seeds`, Temporal's server images (`*_SEEDS`, the
 * persistence and visibility stores' hosts) and cluster clients (`*_NODES`) take a
 * comma-separated list of host names to open their first connections to. The name alone says
 * less than `*_HOST` does (a `*_SEED` may be a random seed, a `*_NODES` a node count or node
 * names), so a bare item counts as an address only when it is the name of a unit the
 * deployment declares (checked by the caller through its resolver).
 */
import type { HostRef } from './common';

/** `ES_SEEDS`, `CASSANDRA_SEED`, `REDIS_CLUSTER_NODES`, `cassandra.seeds`. */
const SEED_LIST_NAME = /[_.](SEEDS?|NODES)$/i;
/**
 * Elasticsearch's `cluster.initial_master_nodes` names the master-eligible nodes by their
 * `node.name` for the first election: node names, not addresses the node opens.
 */
const NODE_NAMES = /(^|[_.])INITIAL_MASTER_NODES$/i;
/** One item of the list: a host name with an optional port, no scheme, path or option. */
const ITEM = /^([a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?)(?::(\d{1,5}))?$/i;

/**
 * The host names of a seed or node list, when the variable is named as one and every item is a
 * bare host name (with an optional port); empty otherwise. The caller keeps only the items naming
 * a declared unit.
 */
export function seedListHosts(name: string, value: string): HostRef[] {
  if (!SEED_LIST_NAME.test(name) || NODE_NAMES.test(name)) return [];
  const items = value
    .trim()
    .split(',')
    .map((x) => x.trim());
  if (items.length === 0 || items.length > 50) return [];
  const out: HostRef[] = [];
  for (const item of items) {
    const m = ITEM.exec(item);
    // A number (`CLUSTER_NODES=3`) or anything else than a host list makes no list of hosts.
    if (!m || !/[a-z]/i.test(m[1] ?? '')) return [];
    out.push({ host: (m[1] ?? '').toLowerCase(), port: m[3] ? Number(m[3]) : null, scheme: null });
  }
  return out;
}
