/** The graph's shapes (entities, relationships, evidence as stored) and its kinds' ranks. */
import type { Evidence } from './evidence';
import type { VariantChoice } from './variants';

export interface StoredEvidence extends Evidence {
  id: string;
}

/**
 * A relationship as reconcile gathers it, before it is scored: its kind and ends (entity keys)
 * and the records behind it; `cap` bounds its confidence (an inferred edge).
 */
export interface RelEntry {
  kind: string;
  source: string;
  target: string;
  ev: StoredEvidence[];
  cap?: number;
  /** What an inferred edge rests on, when its records alone do not say it. */
  basis?: string;
}

/**
 * Adds an inferred `connects_to` entry from `source` to `target` to `out` (capped at `cap` when
 * given), or its records to the entry already there (each record once), unless reconcile already
 * has that relationship from evidence (`known`): an inferred edge never stands beside a read one.
 */
export function addInferredConnection(
  out: Map<string, RelEntry>,
  known: Map<string, RelEntry>,
  source: string,
  target: string,
  cap: number | undefined,
  records: StoredEvidence[],
): void {
  const key = `connects_to:${source}->${target}`;
  if (known.has(key)) return;
  const entry: RelEntry = out.get(key) ?? { kind: 'connects_to', source, target, ev: [] };
  if (cap !== undefined && entry.cap === undefined) entry.cap = cap;
  for (const x of records) if (!entry.ev.includes(x)) entry.ev.push(x);
  out.set(key, entry);
}

export interface ConflictingClaim {
  field: string;
  claims: Array<{ value: unknown; evidence_ids: string[]; sources: string[] }>;
}

export interface Entity {
  canonical_key: string;
  kind: string;
  name: string;
  attributes: Record<string, unknown>;
  confidence: string;
  evidence_ids: string[];
  sources: string[];
  contradictions: ConflictingClaim[];
}

export interface Relationship {
  canonical_key: string;
  source_key: string;
  target_key: string;
  kind: string;
  attributes: Record<string, unknown>;
  confidence: string;
  evidence_ids: string[];
  sources: string[];
  contradictions: ConflictingClaim[];
}

/**
 * Two deployables (distinct compose services, distinct Kubernetes workloads) that some evidence
 * would have merged into one entity: reconcile keeps them apart and says so.
 */
export interface IdentityConflict {
  /** The entities kept apart (canonical keys, sorted). */
  keys: string[];
  /** Which identity rule would have merged them: `alias`, `same-name`, `build`, `image`. */
  rule: string;
  /** The record that would have merged them, then the deployment declarations of each side. */
  evidence_ids: string[];
  detail: string;
  /**
   * The identity both sides claimed (the unit a build or image names, the name an alias gives):
   * the shared cause, by which uncertainty groups conflicts into one question.
   */
  shared?: string;
}

export interface Graph {
  entities: Entity[];
  relationships: Relationship[];
  /** Present when reconcile had to keep deployables apart (docs/decisions.md). */
  conflicts?: IdentityConflict[];
  /** Present when the repository holds several deployments of one system (analysis/variants.ts). */
  variants?: VariantChoice[];
}

/** Entity kinds that form the graph; other keys (package:, action:, image:) stay evidence only. */
export const GRAPH_KINDS = [
  'service',
  'datastore',
  'queue',
  'bucket',
  'network',
  'cluster',
  'ingress',
  'external',
  'pipeline',
  'job',
  'environment',
] as const;
export const GRAPH = new Set<string>(GRAPH_KINDS);
/** When two keys merge, the more specific kind names the result. */
export const KIND_RANK: Record<string, number> = {
  datastore: 0,
  queue: 1,
  bucket: 2,
  cluster: 3,
  service: 4,
  ingress: 5,
  network: 6,
  pipeline: 7,
  job: 8,
  environment: 9,
  external: 10,
};

/** Evidence kinds that declare a deployable: a compose service, a Kubernetes workload. */
export const DEPLOYMENT_KINDS = new Set(['service-declared', 'workload-declared']);
