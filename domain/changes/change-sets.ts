/**
 * Change sets: a candidate is declared intent (a pull request, an IaC plan) as normalized
 * changes in the graph's canonical keys; an observed set is what an audit's changes stage saw.
 * Reconciling the two measures how well the declaration matched what happened. Pure.
 */
import { dependencyPaths, type DependencyGraph } from '../../analysis/dependencies';
import { GRAPH_KINDS } from '../../analysis/reconcile';
import type { ArchitectureChangeType } from '../contract/values';
import type { ChangeItem } from './diff';

export interface NormalizedChange {
  change_type: ArchitectureChangeType;
  key: string;
  kind: string;
  field: string | null;
  before: unknown;
  after: unknown;
}

const ENTITY_KINDS = new Set<string>(GRAPH_KINDS);
const NAME = /^[^\s]+$/;

/** Whether `key` is an entity key in canonical form (`<kind>:<name>`, kind a graph kind). */
export function isEntityKey(key: string): boolean {
  const colon = key.indexOf(':');
  if (colon <= 0) return false;
  return (
    ENTITY_KINDS.has(key.slice(0, colon)) && NAME.test(key.slice(colon + 1)) && !key.includes('->')
  );
}

/** Whether `key` is a relationship key in canonical form (`<kind>:<entity key>-><entity key>`). */
export function isRelationshipKey(key: string): boolean {
  const m = /^([a-z][a-z_]*):(.+)->(.+)$/.exec(key);
  return !!m && isEntityKey(m[2]!) && isEntityKey(m[3]!);
}

/** What is wrong with declared changes beyond their schema, with the JSON pointer of each. */
export function changeProblems(
  changes: readonly NormalizedChange[],
): Array<{ pointer: string; message: string }> {
  const out: Array<{ pointer: string; message: string }> = [];
  const seen = new Map<string, number>();
  changes.forEach((c, i) => {
    const entity = c.change_type.startsWith('entity_');
    const ok = entity ? isEntityKey(c.key) : isRelationshipKey(c.key);
    if (!ok)
      out.push({
        pointer: `/changes/${i}/key`,
        message: entity
          ? `is not a canonical entity key (<kind>:<name>, kind one of ${GRAPH_KINDS.join(', ')})`
          : 'is not a canonical relationship key (<kind>:<entity key>-><entity key>)',
      });
    if (entity && ok && c.kind !== c.key.slice(0, c.key.indexOf(':')))
      out.push({ pointer: `/changes/${i}/kind`, message: `must be the kind the key names` });
    const id = `${c.change_type}\u0000${c.key}\u0000${c.field ?? ''}`;
    const before = seen.get(id);
    if (before !== undefined)
      out.push({ pointer: `/changes/${i}`, message: `repeats change ${before}` });
    else seen.set(id, i);
  });
  return out;
}

/** An observed set's changes: one per added/removed item, one per changed field. */
export function normalizeObserved(items: readonly ChangeItem[]): NormalizedChange[] {
  const out: NormalizedChange[] = [];
  for (const item of items) {
    if (item.change_fields.length === 0) {
      out.push({
        change_type: item.change_type,
        key: item.key,
        kind: item.kind,
        field: null,
        before: null,
        after: null,
      });
      continue;
    }
    for (const field of item.change_fields) {
      const read = (x: typeof item.current) => {
        if (!x) return null;
        if (field === 'kind') return x.kind;
        if (field === 'name') return x.name ?? null;
        return x.attributes[field.slice('attributes.'.length)] ?? null;
      };
      out.push({
        change_type: item.change_type,
        key: item.key,
        kind: item.kind,
        field,
        before: read(item.previous),
        after: read(item.current),
      });
    }
  }
  return out;
}

const ratio = (n: number, d: number) => (d === 0 ? '1' : (n / d).toFixed(4));

/**
 * How a candidate matched the observed set, by (change type, key): matched, missed (observed,
 * not declared), unexpected (declared, not observed), precision and recall.
 */
export function accuracyOf(
  candidate: readonly NormalizedChange[],
  observed: readonly NormalizedChange[],
) {
  const id = (c: NormalizedChange) => `${c.change_type}\u0000${c.key}`;
  const declared = new Set(candidate.map(id));
  const seen = new Set(observed.map(id));
  const matched = [...declared].filter((k) => seen.has(k)).length;
  const unexpected = declared.size - matched;
  const missed = seen.size - matched;
  return {
    matched,
    missed,
    unexpected,
    precision: ratio(matched, matched + unexpected),
    recall: ratio(matched, matched + missed),
  };
}

const PATHS_PER_ENTITY = 50;

/**
 * The reach of a change: for each changed entity (and each endpoint of a changed relationship)
 * present in the result graph, its downstream dependency paths (what it relies on) and upstream
 * ones (what relies on it), at most 50 each, depth 3.
 */
export function impactOf(graph: DependencyGraph, changes: readonly NormalizedChange[]) {
  const roots = new Set<string>();
  for (const c of changes) {
    if (c.change_type.startsWith('entity_')) roots.add(c.key);
    else {
      const m = /^[a-z][a-z_]*:(.+)->(.+)$/.exec(c.key);
      if (m) [m[1]!, m[2]!].forEach((k) => roots.add(k));
    }
  }
  const entities = [...roots]
    .filter((k) => graph.entities.some((e) => e.canonical_key === k))
    .sort()
    .map((key) => {
      const downstream = dependencyPaths(graph, key, 'downstream', 3);
      const upstream = dependencyPaths(graph, key, 'upstream', 3);
      return {
        entity_key: key,
        downstream_paths: downstream.slice(0, PATHS_PER_ENTITY),
        upstream_paths: upstream.slice(0, PATHS_PER_ENTITY),
        affected_entity_keys: [
          ...new Set([...downstream, ...upstream].flatMap((p) => p.entity_keys)),
        ]
          .filter((k) => k !== key)
          .sort(),
      };
    });
  return {
    entities,
    affected_entity_keys: [...new Set(entities.flatMap((e) => e.affected_entity_keys))].sort(),
  };
}
