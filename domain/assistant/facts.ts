/**
 * The read-only queries the assistant answers from (pure, over one snapshot and the records of
 * its repository): dependency paths, datastore clients, changes since the previous snapshot,
 * open blocking uncertainty cases, decisions and findings touching an entity. The graph
 * specialist composes its answers from them and the model calls them as tools; either way each
 * result carries the grounding (keys and ids) it rests on.
 */
import { dependencyPaths, type DependencyPath } from '../../analysis/dependencies';
import type { Graph } from '../architecture/graph';
import { sortedUnique } from '../architecture/graph';
import { diffSnapshots, type GraphItem } from '../changes/diff';
import type { GateDecision } from '../changes/gate';
import { DATA_KINDS } from './route';

/** Everything an answer may rest on, loaded once per run from the context snapshot. */
export interface AssistantContext {
  snapshot: { id: string; generated_at: string; sources: string[]; graph: Graph };
  /** The completed snapshot before it on the same branch, if any. */
  previous: { id: string; generated_at: string; sources: string[]; graph: Graph } | null;
  /** Relationship keys of the repository's recent snapshots, newest first (for "since when"). */
  history: Array<{ snapshot_id: string; generated_at: string; relationship_keys: string[] }>;
  cases: Array<{
    id: string;
    subject_key: string;
    reason: string;
    detail: string;
    blocking: boolean;
    state: string;
    evidence_ids: string[];
  }>;
  decisions: Array<
    Pick<
      GateDecision,
      'id' | 'number' | 'title' | 'status' | 'affected_entity_keys' | 'affected_relationship_keys'
    >
  >;
  findings: Array<{
    id: string;
    control_key: string;
    severity: string;
    title: string;
    status: string;
    entity_key: string | null;
    evidence_ids: string[];
  }>;
}

/** The keys and ids an answer rests on (the `structured` part of an assistant message). */
export interface Grounding {
  entity_keys: string[];
  relationship_keys: string[];
  evidence_ids: string[];
  finding_ids: string[];
  decision_ids: string[];
  uncertainty_case_ids: string[];
}

export const GROUNDING_FIELDS = [
  'entity_keys',
  'relationship_keys',
  'evidence_ids',
  'finding_ids',
  'decision_ids',
  'uncertainty_case_ids',
] as const satisfies ReadonlyArray<keyof Grounding>;

export function emptyGrounding(): Grounding {
  return {
    entity_keys: [],
    relationship_keys: [],
    evidence_ids: [],
    finding_ids: [],
    decision_ids: [],
    uncertainty_case_ids: [],
  };
}

/** The union of groundings, each list sorted and without repeats. */
export function mergeGrounding(...parts: Grounding[]): Grounding {
  const out = emptyGrounding();
  for (const field of GROUNDING_FIELDS) out[field] = sortedUnique(parts.flatMap((p) => p[field]));
  return out;
}

export interface Fact<T> {
  data: T;
  grounding: Grounding;
}

const ground = (g: Partial<Grounding>): Grounding => mergeGrounding({ ...emptyGrounding(), ...g });

/** Entities whose key or name contains `text` (case-insensitive), at most 50. */
export function findEntities(ctx: AssistantContext, text: string) {
  const needle = text.toLowerCase();
  const hits = ctx.snapshot.graph.entities
    .filter(
      (e) =>
        e.canonical_key.toLowerCase().includes(needle) || e.name.toLowerCase().includes(needle),
    )
    .slice(0, 50)
    .map((e) => ({
      key: e.canonical_key,
      kind: e.kind,
      name: e.name,
      confidence: e.confidence,
      evidence_ids: e.evidence_ids,
    }));
  return {
    data: { entities: hits },
    grounding: ground({
      entity_keys: hits.map((h) => h.key),
      evidence_ids: hits.flatMap((h) => h.evidence_ids),
    }),
  };
}

/** Dependency paths of one entity: upstream (what depends on it) or downstream (its needs). */
export function dependencyFacts(
  ctx: AssistantContext,
  key: string,
  direction: 'upstream' | 'downstream',
  maxDepth = 4,
): Fact<{ root: string; direction: string; paths: DependencyPath[] }> {
  const paths = dependencyPaths(ctx.snapshot.graph, key, direction, maxDepth).slice(0, 100);
  return {
    data: { root: key, direction, paths },
    grounding: ground({
      entity_keys: [key, ...paths.flatMap((p) => p.entity_keys)],
      relationship_keys: paths.flatMap((p) => p.relationship_keys),
      evidence_ids: paths.flatMap((p) => p.evidence_ids),
    }),
  };
}

export interface DatastoreClient {
  entity_key: string;
  /** The first of its relationships (by key); `relationship_keys` lists them all. */
  relationship_key: string;
  relationship_kind: string;
  relationship_keys: string[];
  /** `write`, `read`, `read_write` when the evidence says so; else `unknown`. */
  access: string;
  evidence_ids: string[];
  /** The oldest snapshot of an unbroken run of recent snapshots that held the relationship. */
  since_snapshot_id: string;
  since: string;
}

/**
 * The entities with a relationship into a datastore (its writers and readers): one client per
 * entity, however many relationships (a connection and a start-up dependency) join them.
 */
export function datastoreClients(
  ctx: AssistantContext,
  key: string,
): Fact<{ datastore: string; clients: DatastoreClient[] }> {
  const bySource = new Map<string, DatastoreClient>();
  const relationships = ctx.snapshot.graph.relationships
    .filter((r) => r.target_key === key && !r.superseded_at)
    .sort((a, b) => (a.canonical_key < b.canonical_key ? -1 : 1));
  for (const r of relationships) {
    const since = firstSeen(ctx, r.canonical_key);
    const access = accessOf(r.attributes);
    const seen = bySource.get(r.source_key);
    if (!seen) {
      bySource.set(r.source_key, {
        entity_key: r.source_key,
        relationship_key: r.canonical_key,
        relationship_kind: r.kind,
        relationship_keys: [r.canonical_key],
        access,
        evidence_ids: [...r.evidence_ids].sort(),
        since_snapshot_id: since.snapshot_id,
        since: since.generated_at,
      });
      continue;
    }
    seen.relationship_keys.push(r.canonical_key);
    seen.evidence_ids = [...new Set([...seen.evidence_ids, ...r.evidence_ids])].sort();
    seen.access = combineAccess(seen.access, access);
    if (since.generated_at < seen.since) {
      seen.since = since.generated_at;
      seen.since_snapshot_id = since.snapshot_id;
    }
  }
  const clients = [...bySource.values()].sort((a, b) => (a.entity_key < b.entity_key ? -1 : 1));
  return {
    data: { datastore: key, clients },
    grounding: ground({
      entity_keys: [key, ...clients.map((c) => c.entity_key)],
      relationship_keys: clients.flatMap((c) => c.relationship_keys),
      evidence_ids: clients.flatMap((c) => c.evidence_ids),
    }),
  };
}

/** Two relationships of one client: a known access wins over unknown; read and write make both. */
function combineAccess(a: string, b: string): string {
  if (a === 'unknown') return b;
  if (b === 'unknown' || a === b) return a;
  return 'read_write';
}

function accessOf(attributes: Record<string, unknown>): string {
  const value = attributes.access ?? attributes.mode;
  return typeof value === 'string' && /^(read|write|read_write)$/.test(value) ? value : 'unknown';
}

function firstSeen(ctx: AssistantContext, relationshipKey: string) {
  let since = { snapshot_id: ctx.snapshot.id, generated_at: ctx.snapshot.generated_at };
  for (const h of ctx.history) {
    if (h.generated_at > ctx.snapshot.generated_at) continue;
    if (!h.relationship_keys.includes(relationshipKey)) break;
    since = { snapshot_id: h.snapshot_id, generated_at: h.generated_at };
  }
  return since;
}

/** What changed from the previous snapshot to the context snapshot. */
export function changeFacts(ctx: AssistantContext): Fact<{
  from_snapshot_id: string | null;
  to_snapshot_id: string;
  changes: Array<{ change_type: string; key: string; kind: string; evidence_ids: string[] }>;
}> {
  if (!ctx.previous)
    return {
      data: { from_snapshot_id: null, to_snapshot_id: ctx.snapshot.id, changes: [] },
      grounding: emptyGrounding(),
    };
  const side = (s: { sources: string[]; graph: Graph }) => ({
    entities: s.graph.entities as unknown as GraphItem[],
    relationships: s.graph.relationships as unknown as GraphItem[],
    sources: s.sources,
  });
  const items = diffSnapshots(side(ctx.previous), side(ctx.snapshot));
  const changes = items.map((i) => ({
    change_type: i.change_type,
    key: i.key,
    kind: i.kind,
    evidence_ids: [...i.evidence_ids].sort(),
  }));
  return {
    data: { from_snapshot_id: ctx.previous.id, to_snapshot_id: ctx.snapshot.id, changes },
    grounding: ground({
      entity_keys: items.filter((i) => i.subject === 'entity').map((i) => i.key),
      relationship_keys: items.filter((i) => i.subject === 'relationship').map((i) => i.key),
      evidence_ids: changes.flatMap((c) => c.evidence_ids),
    }),
  };
}

/** Keys an entity touches: itself and every relationship into or out of it. */
function touching(ctx: AssistantContext, key: string): Set<string> {
  const keys = new Set([key]);
  for (const r of ctx.snapshot.graph.relationships)
    if (r.source_key === key || r.target_key === key) keys.add(r.canonical_key);
  return keys;
}

/** Open (or investigating) blocking uncertainty cases, of one entity when `key` is given. */
export function blockingCases(ctx: AssistantContext, key?: string) {
  const near = key ? touching(ctx, key) : null;
  const cases = ctx.cases.filter(
    (c) =>
      c.blocking &&
      (c.state === 'open' || c.state === 'investigating') &&
      (!near || near.has(c.subject_key)),
  );
  return {
    data: { cases },
    grounding: ground({
      uncertainty_case_ids: cases.map((c) => c.id),
      evidence_ids: cases.flatMap((c) => c.evidence_ids),
      ...(key ? { entity_keys: [key] } : {}),
    }),
  };
}

/** Decisions whose affected keys name the entity or one of its relationships (all without key). */
export function decisionsAffecting(ctx: AssistantContext, key?: string) {
  const near = key ? touching(ctx, key) : null;
  const decisions = ctx.decisions.filter(
    (d) =>
      !near ||
      d.affected_entity_keys.some((k) => near.has(k)) ||
      d.affected_relationship_keys.some((k) => near.has(k)),
  );
  return {
    data: { decisions },
    grounding: ground({
      decision_ids: decisions.map((d) => d.id),
      ...(key ? { entity_keys: [key] } : {}),
    }),
  };
}

/** Open findings of the repository, of one entity when `key` is given. */
export function findingsFor(ctx: AssistantContext, key?: string) {
  const findings = ctx.findings.filter(
    (f) => f.status === 'open' && (!key || f.entity_key === key),
  );
  return {
    data: { findings },
    grounding: ground({
      finding_ids: findings.map((f) => f.id),
      evidence_ids: findings.flatMap((f) => f.evidence_ids),
      ...(key ? { entity_keys: [key] } : {}),
    }),
  };
}

/** Whether an entity kind holds data. */
export const holdsData = (kind: string): boolean => DATA_KINDS.has(kind);
