/**
 * One system deployed two ways (issue 23): a repository may run the same services with Compose
 * and with Helm charts, each deployment with its own copy of a service's stores (Compose's
 * `orders-db`, the chart's `orders-postgresql`). The Compose deployment is primary (a guess,
 * said so: nothing says which one runs in production); a store that a service reaches only in the
 * charts' rendered manifests, where the same service (by name) reaches a store of the same engine
 * in a compose file, is that store's Helm copy: its records stay evidence but shape no entity or
 * edge, and a `helm` variant record says what was left out. A Compose service is known by its
 * name and by its `hostname` (the chart may name the workload after the latter). Pure and deterministic.
 */
import { keyKind, keyName, type Evidence } from './evidence';
import { uniqueSorted } from './shared/text';
import type { VariantChoice } from './variants';

type Ev = Evidence & { id: string };

const STORE_DECLARED = new Set(['datastore-declared', 'queue-declared']);
/** Engines one service's code reaches the same way (a MariaDB copy of a MySQL store). */
const ENGINE_FAMILY: Record<string, string> = { mariadb: 'mysql', postgresql: 'postgres' };
const engineOf = (e: Ev) =>
  typeof e.attributes.engine === 'string' ? e.attributes.engine.toLowerCase() : '';
const familyOf = (engine: string) => ENGINE_FAMILY[engine] ?? engine;
const fromChart = (e: Ev) => e.provider === 'kubernetes' && e.attributes.rendered_from === 'helm';
const fromCompose = (e: Ev) => e.provider === 'docker-compose';

interface Store {
  keys: Set<string>;
  engine: string;
  ids: string[];
}

/** The stores each family declares, by every key they are known by (the store's and its workload's). */
function storesOf(evidence: Ev[], inFamily: (e: Ev) => boolean): Map<string, Store> {
  const byKey = new Map<string, Store>();
  for (const e of evidence) {
    if (!STORE_DECLARED.has(e.evidence_kind) || !inFamily(e) || !engineOf(e)) continue;
    const workload = e.attributes.service_key;
    const keys = [e.subject_key, ...(typeof workload === 'string' ? [workload] : [])];
    const store = keys.map((k) => byKey.get(k)).find(Boolean) ?? {
      keys: new Set<string>(),
      engine: engineOf(e),
      ids: [],
    };
    for (const k of keys) {
      store.keys.add(k);
      byKey.set(k, store);
    }
    store.ids.push(e.id);
  }
  return byKey;
}

/**
 * A Compose service's `hostname` by its key: the name other containers reach it by, which the
 * charts may give its workload (`cart` with `hostname: carts`, the chart's `carts`).
 */
function hostnames(evidence: Ev[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of evidence) {
    const host = e.attributes.hostname;
    if (e.evidence_kind === 'service-declared' && fromCompose(e) && typeof host === 'string')
      out.set(e.subject_key, host.toLowerCase());
  }
  return out;
}

/**
 * Per service name, the stores it reaches in that family (edges from the service to a store
 * key); a Compose service also by its `hostname`.
 */
function reachedBy(
  evidence: Ev[],
  inFamily: (e: Ev) => boolean,
  stores: Map<string, Store>,
  aliases = new Map<string, string>(),
) {
  const out = new Map<string, Set<Store>>();
  for (const e of evidence) {
    if (!inFamily(e) || !e.object_key || keyKind(e.subject_key) !== 'service') continue;
    const store = stores.get(e.object_key);
    if (!store || store.keys.has(e.subject_key)) continue;
    const alias = aliases.get(e.subject_key);
    for (const name of new Set([keyName(e.subject_key), ...(alias ? [alias] : [])]))
      out.set(name, (out.get(name) ?? new Set()).add(store));
  }
  return out;
}

/** Evidence with the charts' copies of Compose stores left out, and one variant record per copy. */
export function selectStoreCopies<T extends Ev>(
  evidence: T[],
): { evidence: T[]; variants: VariantChoice[] } {
  const chartStores = storesOf(evidence, fromChart);
  if (chartStores.size === 0) return { evidence, variants: [] };
  const composeStores = storesOf(evidence, fromCompose);
  const composeReach = reachedBy(evidence, fromCompose, composeStores, hostnames(evidence));
  const chartReach = reachedBy(evidence, fromChart, chartStores);
  const copies = new Map<Store, { primary: Store; services: Set<string> }>();
  for (const [service, reached] of [...chartReach.entries()].sort()) {
    const primaries = [...(composeReach.get(service) ?? [])];
    for (const store of reached) {
      // The same keys are one store already; a name both families use needs no identification.
      if ([...store.keys].some((k) => composeStores.has(k))) continue;
      const same = primaries.filter((p) => familyOf(p.engine) === familyOf(store.engine));
      if (same.length !== 1) continue; // none, or several of one engine: which copy is unknown
      const known = copies.get(store);
      if (known && known.primary !== same[0]) continue;
      copies.set(store, {
        primary: same[0]!,
        services: (known?.services ?? new Set()).add(service),
      });
    }
  }
  if (copies.size === 0) return { evidence, variants: [] };
  const left = new Set([...copies.keys()].flatMap((s) => [...s.keys]));
  const hidden = (e: T) =>
    fromChart(e) && (left.has(e.subject_key) || (!!e.object_key && left.has(e.object_key)));
  const variants: VariantChoice[] = [];
  for (const [copy, { primary, services }] of copies) {
    const copyKeys = uniqueSorted([...copy.keys]);
    const primaryKey = uniqueSorted([...primary.keys]).find((k) => keyKind(k) !== 'service');
    const shownPrimary = primaryKey ?? [...primary.keys][0]!;
    const dropped = uniqueSorted(
      evidence
        .filter((e) => hidden(e) && e.object_key && copy.keys.has(e.object_key))
        .map((e) => `${e.subject_key} -> ${e.object_key}`),
    );
    const composeFile = evidence.find((e) => e.id === primary.ids[0])?.location.path ?? '';
    const chartFile = evidence.find((e) => e.id === copy.ids[0])?.location.path ?? '';
    variants.push({
      family: 'helm',
      primary: composeFile,
      others: [chartFile],
      chosen_by: 'most-complete',
      guessed: true,
      dropped_edges: dropped,
      evidence_ids: uniqueSorted([...primary.ids, ...copy.ids]),
      detail: `${copyKeys.join(', ')} (${copy.engine}, ${chartFile}) is the Helm deployment's copy of ${shownPrimary} (${primary.engine}, ${composeFile}): ${[...services].sort().join(', ')} reach(es) one or the other. The Compose deployment is the graph (a guess: nothing says which deployment runs); the copy and its edges are left out${dropped.length ? ` (${dropped.join('; ')})` : ''}.`,
    });
  }
  return { evidence: evidence.filter((e) => !hidden(e)), variants };
}
