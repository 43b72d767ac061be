/**
 * Managed stores reached through a cloud SDK (docs/decisions.md, "A managed store reached by its
 * SDK"). Code calls DynamoDB, SQS or Kinesis through the provider's SDK with a table or queue
 * name, never a host, so no address joins the code to the store its infrastructure declares.
 * When the code of a service uses the SDK client of such an engine and the repository declares
 * exactly one store of that engine, the service connects to it; with several, which one is
 * unknown and nothing is drawn.
 */
import { keyKind } from './evidence';
import { addInferredConnection, type RelEntry, type StoredEvidence } from './reconcile-model';

/** Engines addressed by name through the provider's SDK, holding the application's own data. */
const SDK_ENGINES = new Set([
  'dynamodb',
  'sqs',
  'kinesis',
  'pubsub',
  'servicebus',
  'cosmosdb',
  'firestore',
]);
const STORE_KINDS = new Set(['datastore', 'queue']);

/**
 * The `connects_to` entries (keyed as reconcile keys them) from a service using an SDK engine's
 * client to the one store of that engine, unless it already connects to a store of it.
 */
export function sdkStoreEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, RelEntry>,
  rep: (key: string) => string,
  placed: (key: string) => boolean,
): Map<string, RelEntry> {
  // Each store of an SDK engine.
  const stores = new Map<string, Set<string>>();
  const engineOf = new Map<string, string>();
  for (const e of evidence) {
    const engine = e.attributes.engine;
    if (e.source_type !== 'cloud' || !/-declared$/.test(e.evidence_kind)) continue;
    if (typeof engine !== 'string' || !SDK_ENGINES.has(engine) || !placed(e.subject_key)) continue;
    const store = rep(e.subject_key);
    if (!STORE_KINDS.has(keyKind(store))) continue;
    stores.set(engine, (stores.get(engine) ?? new Set<string>()).add(store));
    engineOf.set(store, engine);
  }
  const reached = new Set<string>();
  for (const r of relEvidence.values())
    if (r.kind === 'connects_to' && engineOf.has(r.target))
      reached.add(`${r.source}\u0000${engineOf.get(r.target)}`);
  const out = new Map<string, RelEntry>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'client-library' || e.attributes.dev === true) continue;
    const engine = e.attributes.engine;
    if (typeof engine !== 'string' || !placed(e.subject_key)) continue;
    const byStore = stores.get(engine);
    if (!byStore || byStore.size !== 1) continue;
    const source = rep(e.subject_key);
    if (keyKind(source) !== 'service' || reached.has(`${source}\u0000${engine}`)) continue;
    const target = [...byStore][0]!;
    // Only the client use is cited: the inference is as strong as the code's own use (0.4).
    addInferredConnection(out, relEvidence, source, target, undefined, [e]);
  }
  return out;
}
