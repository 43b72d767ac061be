/**
 * Connections through Dapr secrets: an application that reads secret K of Dapr secret store S
 * (`dapr-secret-read`, analysis/code/dapr-secret-reads.ts) connects to the host S's secret K
 * names (`dapr-secret-host`, analysis/cloud/dapr-secrets.ts), when that host is one entity of
 * the graph (a compose service, a workload, a datastore of that name). A host the graph does not
 * know, or knows as several entities, names nothing. Keys compare as .NET configuration keys do:
 * case-insensitive, with `__` and the store's nested separator read as `:`.
 */
import type { StoredEvidence } from './reconcile-model';

const normalizeKey = (key: string, separator: string) =>
  (separator === ':' ? key : key.split(separator).join(':')).replace(/__/g, ':').toLowerCase();

/** One connection: the reading application, the host's entity, the records joined. */
export interface SecretConnection {
  source: string;
  target: string;
  ev: StoredEvidence[];
}

/**
 * The connections the graph's Dapr secret reads make. `rep` gives a subject's entity (null when
 * it is no placed entity); `resolve` gives the one entity a host names, or null.
 */
export function daprSecretConnections(
  evidence: StoredEvidence[],
  rep: (key: string) => string | null,
  resolve: (host: string) => string | null,
): SecretConnection[] {
  const hosts = new Map<string, StoredEvidence[]>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'dapr-secret-host') continue;
    const { store, key, separator } = e.attributes;
    if (typeof store !== 'string' || typeof key !== 'string') continue;
    const slot = `${store.toLowerCase()}\u0000${normalizeKey(key, typeof separator === 'string' ? separator : ':')}`;
    hosts.set(slot, [...(hosts.get(slot) ?? []), e]);
  }
  if (hosts.size === 0) return [];
  const out = new Map<string, SecretConnection>();
  for (const read of evidence) {
    if (read.evidence_kind !== 'dapr-secret-read') continue;
    const { store, key } = read.attributes;
    if (typeof store !== 'string' || typeof key !== 'string') continue;
    const held = hosts.get(`${store.toLowerCase()}\u0000${normalizeKey(key, ':')}`);
    const source = held ? rep(read.subject_key) : null;
    if (!held || !source) continue;
    for (const h of held) {
      const target = resolve(String(h.attributes.host));
      if (!target || target === source) continue;
      const id = `${source}->${target}`;
      const entry = out.get(id) ?? { source, target, ev: [] };
      for (const e of [read, h]) if (!entry.ev.includes(e)) entry.ev.push(e);
      out.set(id, entry);
    }
  }
  return [...out.values()];
}
