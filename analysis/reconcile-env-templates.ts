/**
 * Env templates (docs/decisions.md, "A committed env template configures the unit beside it"). A
 * unit run outside any deployment the repository holds (compose runs only its stores, say) reads
 * its addresses from the environment file its developers copy from the committed template
 * (`.env.sample` beside the unit's manifest). When no deployment gives that unit an environment,
 * the template's addresses are that unit's: a host the graph knows by name (one entity), or a
 * local address (`localhost`, `127.0.0.1`) reaching the one compose store of the URL's engine
 * published on its port (the engine's default port when none is written). The unit must show it
 * uses the value: its code reads the variable, or it holds a client library of the URL's engine.
 * A documented value, not a deployed one: the edge is capped below what a deployment's gives.
 */
import { BROKER_SCHEMES, DATASTORE_SCHEMES } from './code/connection-hosts';
import { keyKind } from './evidence';
import { publishedStores } from './reconcile-local-stores';
import { addInferredConnection, type RelEntry, type StoredEvidence } from './reconcile-model';
import { dirname, normalizeDir } from './shared/paths';
import { isLocalHost } from './shared/urls';

/** Confidence cap of an edge known only from a template: a documented value, not a deployed one. */
const TEMPLATE_CAP = 0.45;
const TARGET_KINDS = new Set(['service', 'datastore', 'queue']);
/** The engine a URL scheme names. */
const SCHEME_ENGINES: Record<string, string> = { ...DATASTORE_SCHEMES, ...BROKER_SCHEMES };

/**
 * The `connects_to` entries from units to what their env template's addresses name, for units
 * no deployment configures.
 */
export function templateEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, RelEntry>,
  rep: (key: string) => string,
  placed: (key: string) => boolean,
  hostEntity: (host: string) => string | null,
): Map<string, RelEntry> {
  const out = new Map<string, RelEntry>();
  const templates = evidence.filter((e) => e.evidence_kind === 'env-template-value');
  if (templates.length === 0) return out;
  const unitsByDir = new Map<string, string>();
  const configured = new Set<string>();
  const reads = new Set<string>();
  const engines = new Set<string>();
  for (const e of evidence) {
    const dir = typeof e.attributes.dir === 'string' ? normalizeDir(e.attributes.dir) : null;
    if (e.evidence_kind === 'unit-declared' && dir !== null) unitsByDir.set(dir, e.subject_key);
    if (
      e.source_type !== 'code' &&
      e.evidence_kind !== 'env-default' &&
      e.evidence_kind !== 'env-template-value' &&
      typeof e.attributes.variable === 'string'
    )
      configured.add(rep(e.subject_key));
    if (e.source_type !== 'code' || e.attributes.in_test === true) continue;
    if (e.evidence_kind === 'env-read' && e.attributes.source !== 'env-file')
      reads.add(`${rep(e.subject_key)}\u0000${String(e.attributes.variable)}`);
    if (e.evidence_kind === 'client-library' && typeof e.attributes.engine === 'string')
      engines.add(`${rep(e.subject_key)}\u0000${e.attributes.engine}`);
  }
  const published = publishedStores(evidence, rep, placed);
  for (const e of templates) {
    const unit = unitsByDir.get(normalizeDir(dirname(e.location.path)) ?? '\u0000');
    if (!unit || !placed(unit)) continue;
    const source = rep(unit);
    // A deployment gives the unit its environment: that deployment's values are in effect.
    if (keyKind(source) !== 'service' || configured.has(source)) continue;
    const host = String(e.attributes.host);
    const scheme = typeof e.attributes.scheme === 'string' ? e.attributes.scheme : null;
    const engine = scheme ? SCHEME_ENGINES[scheme] : undefined;
    const used =
      reads.has(`${source}\u0000${String(e.attributes.variable)}`) ||
      (engine !== undefined && engines.has(`${source}\u0000${engine}`));
    if (!used) continue;
    let target: string | null;
    let with_: StoredEvidence[] = [];
    if (isLocalHost(host) || host === '::1') {
      if (!engine) continue;
      const port = typeof e.attributes.port === 'number' ? String(e.attributes.port) : null;
      const found = published(engine, port);
      if (!found) continue;
      target = found.store;
      with_ = found.evidence;
    } else {
      target = hostEntity(host);
    }
    if (!target || target === source || !TARGET_KINDS.has(keyKind(target))) continue;
    addInferredConnection(out, relEvidence, source, target, TEMPLATE_CAP, [e, ...with_]);
  }
  return out;
}
