/**
 * A store a vendor container depends on (docs/decisions.md, "A store a vendor container depends
 * on"). A compose service running an image the repository does not build (`acme/analytics`)
 * reads its store addresses from the image's own defaults, which the repository never shows; its
 * `depends_on` a compose store (a postgres, clickhouse or SMTP image) is then the only sign that
 * it uses the store. Such a service connects to the store, weakly (DEPENDED_STORE_CAP), unless:
 * the dependant is itself a store; its program or settings are in the repository (code, a build,
 * or a repository file mounted into it: had it used the store, they would say so; but not when
 * the program's own code or settings name a store of that engine only at a loopback address,
 * `127.0.0.1:3306`: the developer's machine, which the deployment overrides; nor when its
 * manifests declare a client library of that engine, `amqplib` for RabbitMQ, with no address of
 * the engine in its code: it uses such a store at an address the repository does not show,
 * such as a shared file its image build copies in); it already
 * connects to a store of that engine; it depends on two stores of one engine (which one it
 * uses is unknown); or the compose files give another service the store's address (they pass
 * its address to its users, and gave this one none). The last two give way when the dependant
 * holds the store's login: its environment takes a project variable whole into a login variable
 * (`RABBITMQ_USER: ${RABBITMQ_USER}`) that the store's own environment also takes
 * (`RABBITMQ_DEFAULT_USER: ${RABBITMQ_USER}`). A login is given to a user of the store, so it
 * connects to each depended store whose login it holds, still weakly.
 */
import { keyKind } from './evidence';
import type { RelEntry, StoredEvidence } from './reconcile-model';

const STORE_KINDS = new Set(['datastore', 'queue']);
/** Confidence cap of such an edge: a start order, not an address. */
export const DEPENDED_STORE_CAP = 0.45;
/** What the relationship's attributes say of its basis. */
export const DEPENDED_STORE_BASIS = 'depends on, address not in repository';
/** The basis when the dependant also holds the store's login. */
export const DEPENDED_STORE_LOGIN_BASIS =
  'depends on and holds its login, address not in repository';

function loginVariables(e: StoredEvidence): string[] {
  const v = e.attributes.credential_variables;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * The `connects_to` entries (keyed as reconcile keys them) from a vendor-image compose service to
 * each compose store it depends on and has no address of. `addresses`: the connection-string
 * records of the repository's code and settings, before unread settings files are set aside.
 */
export function dependedStoreEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, RelEntry>,
  rep: (key: string) => string,
  placed: (key: string) => boolean,
  addresses: StoredEvidence[] = [],
): Map<string, RelEntry> {
  // Per program, the engines its own code or settings reach only on the developer's machine.
  const local = new Set<string>();
  const remote = new Set<string>();
  for (const e of addresses) {
    if (e.source_type !== 'code' || !placed(e.subject_key)) continue;
    if (typeof e.attributes.engine !== 'string') continue;
    const k = `${rep(e.subject_key)}\u0000${e.attributes.engine}`;
    (e.attributes.local_host === true ? local : remote).add(k);
  }
  for (const k of remote) local.delete(k);
  // Per program, the engines whose client library its manifests declare (not for development):
  // its code uses such a store, at an address the repository does not show.
  const clients = new Set<string>();
  for (const e of evidence)
    if (
      e.evidence_kind === 'client-library' &&
      e.source_type === 'code' &&
      e.attributes.dev !== true &&
      typeof e.attributes.engine === 'string' &&
      placed(e.subject_key)
    )
      clients.add(`${rep(e.subject_key)}\u0000${e.attributes.engine}`);
  const engineOf = new Map<string, string>();
  // Services whose program the repository holds: code of theirs, or a compose build.
  const programs = new Set<string>();
  const vendor = new Set<string>();
  // Login variables and declaration per compose service (by its own key and its entity's), and
  // the compose service each store is declared by.
  const logins = new Map<string, { vars: Set<string>; ev: StoredEvidence }>();
  const storeService = new Map<string, string>();
  for (const e of evidence) {
    if (e.provider !== 'docker-compose') continue;
    if (e.evidence_kind === 'service-declared' && loginVariables(e).length > 0) {
      const entry = { vars: new Set(loginVariables(e)), ev: e };
      logins.set(e.subject_key, entry);
      if (placed(e.subject_key)) logins.set(rep(e.subject_key), entry);
    }
    if (/-declared$/.test(e.evidence_kind) && typeof e.attributes.service_key === 'string')
      storeService.set(e.subject_key, e.attributes.service_key);
  }
  for (const e of evidence) {
    if (!placed(e.subject_key)) continue;
    const subject = rep(e.subject_key);
    if (e.source_type === 'code') programs.add(subject);
    if (e.provider !== 'docker-compose') continue;
    // A repository file or folder given to the container is its settings: they say its addresses.
    if (e.evidence_kind === 'volume-mount' && typeof e.attributes.host_path === 'string')
      programs.add(subject);
    if (/-declared$/.test(e.evidence_kind) && typeof e.attributes.engine === 'string') {
      if (STORE_KINDS.has(keyKind(subject))) engineOf.set(subject, e.attributes.engine);
    }
    if (e.evidence_kind === 'service-declared') {
      // A fragment an overlay file adds (neither image nor build) says neither.
      if (e.attributes.build !== null && e.attributes.build !== undefined) programs.add(subject);
      else if (e.attributes.image !== null && e.attributes.image !== undefined) vendor.add(subject);
    }
  }
  const reached = new Set<string>();
  // Stores whose address the compose files give some service: they pass that store's address
  // to the services that use it, so a dependant given none does not use it.
  const addressed = new Set<string>();
  for (const r of relEvidence.values()) {
    if (r.kind !== 'connects_to' || !engineOf.has(r.target)) continue;
    reached.add(`${r.source}\u0000${engineOf.get(r.target)}`);
    if (r.ev.some((e) => e.provider === 'docker-compose' && e.evidence_kind !== 'depends-on'))
      addressed.add(r.target);
  }
  // Per dependant and engine, the stores it depends on and the depends_on records.
  const deps = new Map<string, Map<string, StoredEvidence[]>>();
  for (const e of evidence) {
    if (e.provider !== 'docker-compose' || e.evidence_kind !== 'depends-on' || !e.object_key)
      continue;
    if (!placed(e.subject_key) || !placed(e.object_key)) continue;
    const source = rep(e.subject_key);
    const target = rep(e.object_key);
    const engine = engineOf.get(target);
    if (engine === undefined || keyKind(source) !== 'service') continue;
    const k = `${source}\u0000${engine}`;
    if (!vendor.has(source) || (programs.has(source) && !local.has(k) && !clients.has(k))) continue;
    const byTarget = deps.get(k) ?? new Map<string, StoredEvidence[]>();
    byTarget.set(target, [...(byTarget.get(target) ?? []), e]);
    deps.set(k, byTarget);
  }
  const storeLogin = (target: string) => {
    const service = storeService.get(target);
    return logins.get(target) ?? (service !== undefined ? logins.get(service) : undefined);
  };
  const out = new Map<string, RelEntry>();
  for (const [k, byTarget] of deps) {
    if (reached.has(k)) continue;
    const source = k.slice(0, k.indexOf('\u0000'));
    const held = logins.get(source);
    // The depended stores whose login the dependant holds; else the only one, when unaddressed.
    const chosen: [string, StoredEvidence[], string][] = [];
    for (const [target, ev] of byTarget) {
      const store = storeLogin(target);
      if (!held || !store || ![...held.vars].some((v) => store.vars.has(v))) continue;
      chosen.push([target, [...ev, held.ev, store.ev], DEPENDED_STORE_LOGIN_BASIS]);
    }
    const [only, onlyEv] = [...byTarget][0]!;
    if (chosen.length === 0 && byTarget.size === 1 && !addressed.has(only))
      chosen.push([only, onlyEv, DEPENDED_STORE_BASIS]);
    for (const [target, ev, basis] of chosen) {
      const key = `connects_to:${source}->${target}`;
      if (relEvidence.has(key) || source === target) continue;
      out.set(key, { kind: 'connects_to', source, target, ev, cap: DEPENDED_STORE_CAP, basis });
    }
  }
  return out;
}
