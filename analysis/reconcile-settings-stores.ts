/**
 * A store a program's own settings name at the developer's loopback address (docs/decisions.md,
 * "A store a program's settings name at the developer's loopback"). A program's committed
 * settings file (`configs/config.yaml`, analysis/code/settings-files.ts) written for a run on the
 * developer's machine names its stores at `127.0.0.1` (`data.redis.addr: 127.0.0.1:6379`,
 * `data.kafka.addrs: [127.0.0.1:9092]`, a MySQL DSN on `tcp(127.0.0.1:3306)`): no host names the
 * store, and a deployment overrides the address. The key (or the URL's scheme, the DSN's form)
 * still names the engine, and when the program's own code uses a client library of that engine
 * (analysis/code/clients.ts; for an application of a many-program Go module, the clients its
 * files import, analysis/code/go-import-clients.ts) the program connects to a store of it: a
 * settings template may carry keys the code never reads, the client is what connects.
 *
 * Such a program connects, weakly (SETTINGS_STORE_CAP), to the deployment's one store of that
 * engine; when the repository runs none, to a store of that engine named after it
 * (`datastore:redis`, `queue:kafka`, like the other stores known only by an address), which is
 * added to the graph with the same cap. Nothing is drawn when the program already connects to a
 * store of that engine, names a non-loopback address of it anywhere in its code or settings, or
 * the repository runs two or more stores of it (which one is unknown); nor for a settings file in
 * the folder of one program of a many-program unit (`cmd/barista/config.yml`: it is that
 * program's, and the service running it has its own records), nor for settings files no code
 * unit holds (reconcile-mounted.ts gives those to the containers they are mounted into).
 *
 * A Spring / Micronaut settings file (`application.yml`, `jvm_settings`) is read the same way for
 * a unit no deployment runs (docs/decisions.md, "Units run one by one on the developer's host"),
 * only when the repository runs no store of the engine; a `hostname`/`port` pair naming no
 * engine counts when its port is the default port of the one engine whose client the unit uses.
 */
import { entityKey, keyKind, keyName } from './evidence';
import { confidence } from './reconcile-confidence';
import { engineFamily } from './reconcile-dapr-secrets';
import type { Entity, RelEntry, StoredEvidence } from './reconcile-model';
import { DEFAULT_PORTS } from './reconcile-local-stores';
import { deployedUnits } from './reconcile-local-run';
import { isWithin } from './shared/paths';

const STORE_KINDS = new Set(['datastore', 'queue']);
/** Engines whose stores a settings key, URL scheme or DSN names. */
const ENGINES = new Set([
  'postgres',
  'mysql',
  'mongodb',
  'redis',
  'memcached',
  'cassandra',
  'rabbitmq',
  'elasticsearch',
  'kafka',
  'nats',
  'mssql',
]);
/** Confidence cap of such an edge and of a store it adds: a developer's address, not the store's. */
export const SETTINGS_STORE_CAP = 0.45;
/** The basis of an edge to the deployment's one store of the engine. */
export const SETTINGS_STORE_BASIS =
  "its settings name the engine at the developer's loopback address; the deployment's one store of that engine";
/** The basis of an edge to (and of) a store the repository does not run. */
export const SETTINGS_STORE_NEW_BASIS =
  "its settings name the engine at the developer's loopback address; the repository runs no store of that engine";

/**
 * A program's own committed settings: a settings file by name (`configs/config.yaml`) or a
 * Spring / Micronaut settings file (`application.yml`, which only its own program reads).
 */
const ownSettings = (e: StoredEvidence) =>
  e.attributes.settings_file === true || e.attributes.jvm_settings === true;

interface Use {
  source: string;
  family: string;
  category: 'datastore' | 'queue';
  settings: StoredEvidence[];
  /** Known only from Spring settings files (no settings file by name). */
  jvmOnly: boolean;
}

/**
 * The `connects_to` entries (keyed as reconcile keys them) from programs whose settings name a
 * store engine only at a loopback address and whose code uses its client, and the stores added
 * for engines the repository does not run. `addresses`: the connection-string records of the
 * repository's code and settings, before unread settings files are set aside; `known`: the keys
 * of the graph's entities.
 */
export function settingsStoreEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, RelEntry>,
  rep: (key: string) => string,
  placed: (key: string) => boolean,
  addresses: StoredEvidence[],
  known: Set<string>,
): { edges: Map<string, RelEntry>; stores: Entity[] } {
  // Program folders of units holding several programs: their settings are one program's.
  const programDirs = new Map<string, string[]>();
  for (const e of evidence)
    if (e.evidence_kind === 'program-declared' && typeof e.attributes.dir === 'string')
      programDirs.set(e.subject_key, [...(programDirs.get(e.subject_key) ?? []), e.attributes.dir]);
  const oneProgramOf = (e: StoredEvidence) => {
    const dirs = programDirs.get(e.subject_key) ?? [];
    return dirs.length > 1 && dirs.some((d) => isWithin(e.location.path, d));
  };
  // Per program and engine family: its loopback settings records, and whether it names the
  // engine anywhere else (a host that is not the developer's machine).
  const uses = new Map<string, Use>();
  const remote = new Set<string>();
  for (const e of addresses) {
    if (e.source_type !== 'code' || typeof e.attributes.engine !== 'string') continue;
    if (!placed(e.subject_key) || e.subject_key.startsWith('settings:')) continue;
    const source = rep(e.subject_key);
    const family = engineFamily(e.attributes.engine);
    const k = `${source}\u0000${family}`;
    if (e.attributes.local_host !== true) {
      remote.add(k);
      continue;
    }
    if (!ownSettings(e) || !ENGINES.has(family) || oneProgramOf(e)) continue;
    if (keyKind(source) !== 'service') continue;
    const category = e.attributes.category === 'queue' ? 'queue' : 'datastore';
    const use = uses.get(k) ?? { source, family, category, settings: [], jvmOnly: true };
    use.settings.push(e);
    if (e.attributes.settings_file === true) use.jvmOnly = false;
    uses.set(k, use);
  }
  // The client libraries each program's code uses, per engine family.
  const clients = new Map<string, StoredEvidence[]>();
  const clientFamilies = new Map<string, Set<string>>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'client-library' || e.attributes.dev === true) continue;
    if (typeof e.attributes.engine !== 'string' || !placed(e.subject_key)) continue;
    const family = engineFamily(e.attributes.engine);
    const k = `${rep(e.subject_key)}\u0000${family}`;
    clients.set(k, [...(clients.get(k) ?? []), e]);
    const fams = clientFamilies.get(rep(e.subject_key)) ?? new Set<string>();
    clientFamilies.set(rep(e.subject_key), fams.add(family));
  }
  // A Spring settings pair naming no engine (`cronos.db.hostname: 127.0.0.1`, `port: 9042`):
  // the engine whose default port it is, when the program's code uses that engine's client
  // and no other engine it uses has that default port.
  for (const e of evidence) {
    if (e.evidence_kind !== 'local-address' || e.attributes.jvm_settings !== true) continue;
    if (e.attributes.in_test === true || !placed(e.subject_key)) continue;
    if (typeof e.attributes.port !== 'number') continue;
    const source = rep(e.subject_key);
    if (keyKind(source) !== 'service') continue;
    const port = String(e.attributes.port);
    const fams = [...(clientFamilies.get(source) ?? [])].filter(
      (f) => ENGINES.has(f) && DEFAULT_PORTS[f] === port,
    );
    if (fams.length !== 1) continue;
    const family = fams[0]!;
    const k = `${source}\u0000${family}`;
    const category = clients.get(k)?.[0]?.attributes.category === 'queue' ? 'queue' : 'datastore';
    const use = uses.get(k) ?? { source, family, category, settings: [], jvmOnly: true };
    use.settings.push(e);
    uses.set(k, use);
  }
  // The stores the repository runs, per engine family, with their declarations.
  const stores = new Map<string, Set<string>>();
  const engineOf = new Map<string, string>();
  const declarations = new Map<string, StoredEvidence[]>();
  for (const e of evidence) {
    if (!/-declared$/.test(e.evidence_kind) || typeof e.attributes.engine !== 'string') continue;
    if (!placed(e.subject_key) || !STORE_KINDS.has(keyKind(rep(e.subject_key)))) continue;
    const store = rep(e.subject_key);
    const family = engineFamily(e.attributes.engine);
    stores.set(family, (stores.get(family) ?? new Set<string>()).add(store));
    engineOf.set(store, family);
    declarations.set(store, [...(declarations.get(store) ?? []), e]);
  }
  // A store known only by its engine's name (another program's address `redis:6379`).
  for (const family of new Set([...uses.values()].map((u) => u.family)))
    for (const kind of STORE_KINDS)
      if (known.has(entityKey(kind, family)))
        stores.set(family, (stores.get(family) ?? new Set<string>()).add(entityKey(kind, family)));
  // Programs already connected to a store of an engine.
  const reached = new Set<string>();
  for (const r of relEvidence.values()) {
    if (r.kind !== 'connects_to' || !STORE_KINDS.has(keyKind(r.target))) continue;
    const engines = new Set(
      r.ev.map((e) => e.attributes.engine).filter((x): x is string => typeof x === 'string'),
    );
    if (engineOf.has(r.target)) engines.add(engineOf.get(r.target)!);
    if (keyName(r.target) !== '') engines.add(keyName(r.target));
    for (const en of engines) reached.add(`${r.source}\u0000${engineFamily(en)}`);
  }
  const deployed = deployedUnits(evidence, rep);
  const edges = new Map<string, RelEntry>();
  const added = new Map<string, StoredEvidence[]>();
  for (const [k, use] of uses) {
    const used = clients.get(k);
    if (!used || remote.has(k) || reached.has(k)) continue;
    const running = [...(stores.get(use.family) ?? [])];
    if (running.length > 1) continue;
    // A Spring settings file's loopback address is the developer's run of a unit no deployment
    // runs (inside a container `localhost` is the container), and a store the repository runs
    // is reached there only on the port it publishes (reconcile-local-stores.ts).
    if (use.jvmOnly && (deployed.has(use.source) || running.length > 0)) continue;
    const target = running[0] ?? entityKey(use.category, use.family);
    const key = `connects_to:${use.source}->${target}`;
    if (target === use.source || relEvidence.has(key)) continue;
    const ev = [...use.settings, ...used, ...(declarations.get(target) ?? [])];
    const basis = running.length === 1 ? SETTINGS_STORE_BASIS : SETTINGS_STORE_NEW_BASIS;
    edges.set(key, {
      kind: 'connects_to',
      source: use.source,
      target,
      ev,
      cap: SETTINGS_STORE_CAP,
      basis,
    });
    if (running.length === 0) added.set(target, [...(added.get(target) ?? []), ...ev]);
  }
  const newStores: Entity[] = [...added].map(([key, ev]) => ({
    canonical_key: key,
    kind: keyKind(key),
    name: keyName(key),
    attributes: { engine: keyName(key), basis: SETTINGS_STORE_NEW_BASIS },
    confidence: Math.min(Number(confidence(ev, 0)), SETTINGS_STORE_CAP).toFixed(2),
    evidence_ids: [...new Set(ev.map((e) => e.id))].sort(),
    sources: [...new Set(ev.map((e) => e.source_type))].sort(),
    contradictions: [],
  }));
  return { edges, stores: newStores };
}
