/**
 * Connections through Dapr secrets: an application that reads secret K of Dapr secret store S
 * (`dapr-secret-read`, analysis/code/dapr-secret-reads.ts) connects to the host S's secret K
 * names (`dapr-secret-host`, analysis/cloud/dapr-secrets.ts), when that host is one entity of
 * the graph (a compose service, a workload, a datastore of that name). A host the graph does not
 * know, or knows as several entities, names nothing. Keys compare as .NET configuration keys do:
 * case-insensitive, with `__` and the store's nested separator read as `:`.
 *
 * A local file standing in for a vault: when a store of the same name is also declared with
 * another secret store type (`secretstores.azure.keyvault`...), the file serves local runs and
 * the deployed secret's value is not in the repository. A host of that file the graph does not
 * know at all (a server only a developer's machine has) still says the engine: when the graph
 * holds exactly one store of that engine, the application connects to it, an inference capped
 * at ENGINE_ONLY_CAP. A file that is the store's only definition is taken at its word: an
 * unknown host there is a server outside the system, and names nothing.
 */
import { keyName, normalizeName } from './evidence';
import type { StoredEvidence } from './reconcile-model';

const normalizeKey = (key: string, separator: string) =>
  (separator === ':' ? key : key.split(separator).join(':')).replace(/__/g, ':').toLowerCase();

/** Confidence cap of a connection inferred from the secret's engine alone. */
const ENGINE_ONLY_CAP = 0.45;

/** One connection: the reading application, the host's entity, the records joined. */
export interface SecretConnection {
  source: string;
  target: string;
  ev: StoredEvidence[];
  /** Set when only the secret's engine named the target. */
  cap?: number;
}

/**
 * The connections the graph's Dapr secret reads make. `rep` gives a subject's entity (null when
 * it is no placed entity); `resolve` gives the one entity a host names, or null.
 */
export function daprSecretConnections(
  evidence: StoredEvidence[],
  rep: (key: string) => string | null,
  resolve: (host: string) => string | null,
  byEngine: (host: string, engine: string) => string | null = () => null,
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
  // Stores also declared as a vault (or any secret store other than a local file).
  const vaulted = new Set<string>();
  for (const e of evidence) {
    const type = e.attributes.dapr_type;
    if (e.attributes.dapr_block !== 'secretstores' || typeof type !== 'string') continue;
    if (type !== 'secretstores.local.file') vaulted.add(keyName(e.subject_key));
  }
  const out = new Map<string, SecretConnection>();
  for (const read of evidence) {
    if (read.evidence_kind !== 'dapr-secret-read') continue;
    const { store, key } = read.attributes;
    if (typeof store !== 'string' || typeof key !== 'string') continue;
    const held = hosts.get(`${store.toLowerCase()}\u0000${normalizeKey(key, ':')}`);
    const source = held ? rep(read.subject_key) : null;
    if (!held || !source) continue;
    for (const h of held) {
      const host = String(h.attributes.host);
      const engine = h.attributes.engine;
      const named = resolve(host);
      const local = vaulted.has(normalizeName(store));
      const target = named ?? (local && typeof engine === 'string' ? byEngine(host, engine) : null);
      if (!target || target === source) continue;
      const id = `${source}->${target}`;
      const entry: SecretConnection = out.get(id) ?? {
        source,
        target,
        ev: [],
        ...(named ? {} : { cap: ENGINE_ONLY_CAP }),
      };
      if (named) delete entry.cap;
      for (const e of [read, h]) if (!entry.ev.includes(e)) entry.ev.push(e);
      out.set(id, entry);
    }
  }
  return [...out.values()];
}

/** Engine names one server answers to (a URL scheme, an image's engine): `postgresql` is `postgres`. */
const FAMILY: Record<string, string> = {
  postgresql: 'postgres',
  mariadb: 'mysql',
  rediss: 'redis',
  'mongodb+srv': 'mongodb',
  sqlserver: 'mssql',
  amqp: 'rabbitmq',
  amqps: 'rabbitmq',
};
export const engineFamily = (engine: string) =>
  FAMILY[engine.toLowerCase()] ?? engine.toLowerCase();
