/**
 * Local connections to a published store (docs/decisions.md, "A local address reaches the store
 * published on its port"). Settings written for a developer's machine say `localhost`
 * (`jdbc:mysql://localhost/shop`, `redis://127.0.0.1:6379`): no host names the store, so the
 * address joins nothing. When the repository's compose file publishes a store of that engine
 * on the host at the address's port (the engine's default port when none is written), that
 * store is what the address reaches: `docker compose up mysql` and run the application. Only
 * one such store resolves (two publishing the port: which one is unknown, nothing is drawn);
 * test code, a service that already connects to a store of that engine, and a service compose
 * itself runs (inside its container `localhost` is the container: those settings are for a run
 * outside compose, which the compose deployment supersedes) are left alone. A compose service on
 * the host network (`network_mode: host`) is the exception: its `localhost` is the host's, so it
 * resolves like a local run, and a store container on the host network listens on the host at
 * its engine's default port (published or not).
 */
import { keyKind } from './evidence';
import { addInferredConnection, type RelEntry, type StoredEvidence } from './reconcile-model';

/** The port a client of the engine uses when its address names none. */
export const DEFAULT_PORTS: Record<string, string> = {
  postgres: '5432',
  mysql: '3306',
  mariadb: '3306',
  mongodb: '27017',
  redis: '6379',
  memcached: '11211',
  cassandra: '9042',
  rabbitmq: '5672',
  elasticsearch: '9200',
  kafka: '9092',
  nats: '4222',
  mssql: '1433',
  // The native protocol's port (clickhouse-go and clickhouse-driver speak it).
  clickhouse: '9000',
};
/** Engines one wire protocol serves: a MySQL client reaches a MariaDB server. */
const FAMILY: Record<string, string> = { mariadb: 'mysql' };
const family = (engine: string) => FAMILY[engine] ?? engine;
const STORE_KINDS = new Set(['datastore', 'queue']);
/** Confidence cap of such an edge: an inference from a port, not an address naming the store. */
export const LOCAL_STORE_CAP = 0.6;

/**
 * The `connects_to` entries (keyed as reconcile keys them) from a service whose code or settings
 * connect to an engine on the local host to the one compose store of that engine publishing
 * that port on the host.
 */
export function localStoreEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, RelEntry>,
  rep: (key: string) => string,
  placed: (key: string) => boolean,
): Map<string, RelEntry> {
  const { engineOf, published } = composeStores(evidence, rep, placed);
  // Services compose runs as containers; those on the host network (`network_mode: host`)
  // share the host's addresses, so their `localhost` is the host's, as for a local run.
  const contained = new Set<string>();
  const hostNetwork = new Set<string>();
  for (const e of evidence)
    if (e.provider === 'docker-compose' && e.evidence_kind === 'service-declared') {
      if (e.attributes.network_mode === 'host') hostNetwork.add(rep(e.subject_key));
      else contained.add(rep(e.subject_key));
    }
  for (const s of hostNetwork) contained.delete(s);
  // The declaration of each host-network store: the evidence that it listens on the host.
  const hostDeclared = new Map<string, StoredEvidence[]>();
  for (const e of evidence)
    if (
      e.provider === 'docker-compose' &&
      e.evidence_kind === 'service-declared' &&
      e.attributes.network_mode === 'host'
    )
      hostDeclared.set(rep(e.subject_key), [...(hostDeclared.get(rep(e.subject_key)) ?? []), e]);
  const reached = new Set<string>();
  for (const r of relEvidence.values())
    if (r.kind === 'connects_to' && engineOf.has(r.target))
      reached.add(`${r.source}\u0000${engineOf.get(r.target)}`);
  const out = new Map<string, RelEntry>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'connection-string' || e.source_type !== 'code') continue;
    if (e.attributes.local_host !== true || e.attributes.in_test === true) continue;
    const engine = e.attributes.engine;
    if (typeof engine !== 'string' || !placed(e.subject_key)) continue;
    const port =
      e.attributes.port === null || e.attributes.port === undefined
        ? DEFAULT_PORTS[engine]
        : String(e.attributes.port);
    if (!port) continue;
    const source = rep(e.subject_key);
    if (contained.has(source)) continue;
    if (keyKind(source) !== 'service' || reached.has(`${source}\u0000${family(engine)}`)) continue;
    // A store on the host network listens on the host at its engine's default port.
    const listening = (s: string) =>
      published.has(`${s}\u0000${port}`) ||
      (hostNetwork.has(s) && DEFAULT_PORTS[engineOf.get(s) ?? ''] === port);
    const targets = [...engineOf.entries()]
      .filter(([s, en]) => en === family(engine) && listening(s))
      .map(([s]) => s);
    if (targets.length !== 1 || targets[0] === source) continue;
    const target = targets[0]!;
    addInferredConnection(out, relEvidence, source, target, LOCAL_STORE_CAP, [
      e,
      ...(published.get(`${target}\u0000${port}`) ?? hostDeclared.get(target) ?? []),
    ]);
  }
  return out;
}

/** Each compose store's engine family, and the evidence of each host port its service publishes. */
function composeStores(
  evidence: StoredEvidence[],
  rep: (key: string) => string,
  placed: (key: string) => boolean,
): { engineOf: Map<string, string>; published: Map<string, StoredEvidence[]> } {
  const engineOf = new Map<string, string>();
  for (const e of evidence) {
    if (e.provider !== 'docker-compose' || !/-declared$/.test(e.evidence_kind)) continue;
    const engine = e.attributes.engine;
    if (typeof engine !== 'string' || !placed(e.subject_key)) continue;
    const store = rep(e.subject_key);
    if (STORE_KINDS.has(keyKind(store))) engineOf.set(store, family(engine));
  }
  const published = new Map<string, StoredEvidence[]>(); // `${store}\0${port}` -> evidence
  for (const e of evidence) {
    if (e.provider !== 'docker-compose' || e.evidence_kind !== 'port-exposed') continue;
    const port = e.attributes.published;
    if (typeof port !== 'string' || !/^\d+$/.test(port) || !placed(e.subject_key)) continue;
    const store = rep(e.subject_key);
    if (!engineOf.has(store)) continue;
    const k = `${store}\u0000${port}`;
    published.set(k, [...(published.get(k) ?? []), e]);
  }
  return { engineOf, published };
}

/**
 * The one compose store of an engine publishing a host port (the engine's default port when
 * `port` is null), with the evidence of that port; null when none or several do.
 */
export function publishedStores(
  evidence: StoredEvidence[],
  rep: (key: string) => string,
  placed: (key: string) => boolean,
): (engine: string, port: string | null) => { store: string; evidence: StoredEvidence[] } | null {
  const { engineOf, published } = composeStores(evidence, rep, placed);
  return (engine, written) => {
    const port = written ?? DEFAULT_PORTS[engine];
    if (!port) return null;
    const stores = [...engineOf.entries()]
      .filter(([s, en]) => en === family(engine) && published.has(`${s}\u0000${port}`))
      .map(([s]) => s);
    if (stores.length !== 1) return null;
    return { store: stores[0]!, evidence: published.get(`${stores[0]}\u0000${port}`) ?? [] };
  };
}
