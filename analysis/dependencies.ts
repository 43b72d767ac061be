/**
 * Dependency paths through an architecture graph (pure). Downstream follows relationships
 * source -> target from the root, upstream follows them target -> source.
 *
 * - Only maximal simple paths are returned: a path ends when it has `maxDepth` relationships,
 *   when its last entity has no further relationship in that direction, or when every further
 *   step would revisit an entity already on the path (a cycle ends the path there; the path
 *   does not repeat the entity). Prefixes of a returned path are not returned separately. A
 *   root with no relationship in that direction has no paths.
 * - Two relationships between the same entities (connects_to and depends_on) give two paths.
 * - Confidence of a path = product of its relationships' confidences, computed exactly on the
 *   two-decimal values and rounded half up to two decimals (0.85 x 0.50 = 0.425 -> "0.43").
 * - evidence_ids = sorted union of the relationships' evidence ids; contradictions = the
 *   relationships' contradictions, in path order, present only when there are any.
 * - Work is bounded: at most MAX_DEPENDENCY_PATHS paths; the walk stops expanding once that
 *   many are found (entities and relationships are visited in sorted key order, so which paths
 *   are kept is deterministic). Superseded relationships (superseded_at set) are skipped.
 * - Output is sorted by entity keys, then relationship keys (each joined with '\n').
 */
import { compareStrings } from './shared/text';

export type DependencyDirection = 'upstream' | 'downstream';

/** At most this many paths are returned for one root. */
export const MAX_DEPENDENCY_PATHS = 1000;

export interface PathClaim {
  field: string;
  claims: Array<{ value: unknown; evidence_ids: string[]; sources: string[] }>;
}

export interface DependencyGraph {
  entities: ReadonlyArray<{ canonical_key: string; attributes?: Record<string, unknown> }>;
  relationships: ReadonlyArray<{
    canonical_key: string;
    source_key: string;
    target_key: string;
    confidence: string;
    evidence_ids: string[];
    contradictions?: PathClaim[];
    superseded_at?: string | null;
  }>;
}

export interface DependencyPath {
  direction: DependencyDirection;
  entity_keys: string[];
  relationship_keys: string[];
  evidence_ids: string[];
  confidence: string;
  contradictions?: PathClaim[];
}

type Rel = DependencyGraph['relationships'][number];

/** Every maximal simple path of 1..maxDepth relationships from `rootKey` (see the file comment). */
export function dependencyPaths(
  graph: DependencyGraph,
  rootKey: string,
  direction: DependencyDirection,
  maxDepth: number,
): DependencyPath[] {
  if (maxDepth < 1 || !graph.entities.some((e) => e.canonical_key === rootKey)) return [];
  const next = new Map<string, Array<{ rel: Rel; to: string }>>();
  const live = graph.relationships
    .filter((r) => !r.superseded_at)
    .sort((a, b) => compareStrings(a.canonical_key, b.canonical_key));
  for (const rel of live) {
    const [from, to] =
      direction === 'downstream'
        ? [rel.source_key, rel.target_key]
        : [rel.target_key, rel.source_key];
    if (from === to) continue;
    const list = next.get(from) ?? [];
    list.push({ rel, to });
    next.set(from, list);
  }

  const out: DependencyPath[] = [];
  const entities: string[] = [rootKey];
  const rels: Rel[] = [];
  const onPath = new Set<string>([rootKey]);
  const walk = (at: string): void => {
    if (out.length >= MAX_DEPENDENCY_PATHS) return;
    const steps =
      rels.length < maxDepth ? (next.get(at) ?? []).filter((s) => !onPath.has(s.to)) : [];
    if (steps.length === 0) {
      if (rels.length > 0) out.push(present(direction, entities, rels));
      return;
    }
    for (const { rel, to } of steps) {
      if (out.length >= MAX_DEPENDENCY_PATHS) return;
      entities.push(to);
      rels.push(rel);
      onPath.add(to);
      walk(to);
      onPath.delete(to);
      rels.pop();
      entities.pop();
    }
  };
  walk(rootKey);
  return out.sort(
    (a, b) =>
      compareStrings(a.entity_keys.join('\n'), b.entity_keys.join('\n')) ||
      compareStrings(a.relationship_keys.join('\n'), b.relationship_keys.join('\n')),
  );
}

/**
 * The canonical key `key` names: an entity's own key, else the entity whose attributes.aliases
 * lists it (the smallest canonical key if several do). Null when none.
 */
export function resolveEntityKey(
  graph: Pick<DependencyGraph, 'entities'>,
  key: string,
): string | null {
  if (graph.entities.some((e) => e.canonical_key === key)) return key;
  const owners = graph.entities
    .filter((e) => {
      const aliases = e.attributes?.aliases;
      return Array.isArray(aliases) && aliases.includes(key);
    })
    .map((e) => e.canonical_key)
    .sort(compareStrings);
  return owners[0] ?? null;
}

/** Product of two-decimal confidences, exact, rounded half up to two decimals. */
export function confidenceProduct(values: readonly string[]): string {
  let num = 1n;
  let scale = 1n;
  for (const v of values) {
    num *= hundredths(v);
    scale *= 100n;
  }
  // num / scale, to hundredths, half up (all factors are non-negative).
  const cents = (num * 100n * 2n + scale) / (scale * 2n);
  const whole = cents / 100n;
  const frac = (cents % 100n).toString().padStart(2, '0');
  return `${whole}.${frac}`;
}

function hundredths(v: string): bigint {
  const m = /^\s*(\d*)(?:\.(\d*))?\s*$/.exec(v);
  if (!m) return 0n;
  const whole = m[1] || '0';
  const frac = `${m[2] ?? ''}000`;
  // Three digits read, the third rounds half up: "0.855" -> 86 hundredths.
  const thousandths = BigInt(whole) * 1000n + BigInt(frac.slice(0, 3));
  return (thousandths + 5n) / 10n;
}

function present(direction: DependencyDirection, entities: string[], rels: Rel[]): DependencyPath {
  const contradictions = rels.flatMap((r) => r.contradictions ?? []);
  return {
    direction,
    entity_keys: [...entities],
    relationship_keys: rels.map((r) => r.canonical_key),
    evidence_ids: [...new Set(rels.flatMap((r) => r.evidence_ids))].sort(compareStrings),
    confidence: confidenceProduct(rels.map((r) => r.confidence)),
    ...(contradictions.length > 0 ? { contradictions } : {}),
  };
}
