/**
 * Changes between two architecture snapshots of one repository. Pure: the same two snapshots
 * always give the same items in the same order.
 *
 * An entity or relationship the previous snapshot held but the current one lacks is `removed`
 * only when the current snapshot read a source type that observed it before; when every source
 * type that saw it went unread this time (a narrower scope, a missing CI folder), nothing says
 * it is gone: it is `not_reobserved`.
 */
import type { ArchitectureChangeType } from '../contract/values';
import { jsonEqual } from '../decisions/rules';

export interface GraphItem {
  canonical_key: string;
  kind: string;
  name?: string;
  source_key?: string;
  target_key?: string;
  attributes: Record<string, unknown>;
  confidence: string;
  evidence_ids: string[];
  sources: string[];
}

export interface SnapshotSide {
  entities: readonly GraphItem[];
  relationships: readonly GraphItem[];
  /** Source types the audit read and found files for (code, cloud, cicd). */
  sources: readonly string[];
}

export interface ChangeItem {
  change_type: ArchitectureChangeType;
  subject: 'entity' | 'relationship';
  key: string;
  label: string;
  kind: string;
  change_fields: string[];
  /** Evidence of the current side (added, changed) or of the previous side (removed). */
  evidence_ids: string[];
  source_key: string | null;
  target_key: string | null;
  /** The item's confidence on the side the evidence comes from. */
  confidence: number;
  /** The item as the current snapshot holds it (null when it is gone). */
  current: GraphItem | null;
  previous: GraphItem | null;
}

/**
 * Attributes that describe how an item was observed rather than what it is: they differ
 * between two audits of the same architecture and are not changes.
 */
const VOLATILE_ATTRIBUTES = new Set(['providers', 'aliases', 'in_test']);

/** The fields that differ between two versions of one item (`kind`, `name`, `attributes.<k>`). */
export function changedFields(before: GraphItem, after: GraphItem): string[] {
  const fields: string[] = [];
  if (before.kind !== after.kind) fields.push('kind');
  if ((before.name ?? null) !== (after.name ?? null)) fields.push('name');
  const keys = new Set([...Object.keys(before.attributes), ...Object.keys(after.attributes)]);
  for (const k of [...keys].sort()) {
    if (VOLATILE_ATTRIBUTES.has(k)) continue;
    if (!jsonEqual(before.attributes[k] ?? null, after.attributes[k] ?? null))
      fields.push(`attributes.${k}`);
  }
  return fields;
}

function labelOf(item: GraphItem, subject: 'entity' | 'relationship'): string {
  if (subject === 'entity') return item.name ?? item.canonical_key;
  return `${item.source_key} ${item.kind} ${item.target_key}`;
}

function diffSide(
  subject: 'entity' | 'relationship',
  previous: readonly GraphItem[],
  current: readonly GraphItem[],
  currentSources: ReadonlySet<string>,
): ChangeItem[] {
  const before = new Map(previous.map((i) => [i.canonical_key, i]));
  const after = new Map(current.map((i) => [i.canonical_key, i]));
  const out: ChangeItem[] = [];
  const item = (
    change: 'added' | 'changed' | 'removed' | 'not_reobserved',
    prev: GraphItem | null,
    curr: GraphItem | null,
    fields: string[],
  ): ChangeItem => {
    const shown = (curr ?? prev)!;
    return {
      change_type: `${subject}_${change}` as ArchitectureChangeType,
      subject,
      key: shown.canonical_key,
      label: labelOf(shown, subject),
      kind: shown.kind,
      change_fields: fields,
      evidence_ids: [...shown.evidence_ids],
      source_key: subject === 'relationship' ? (shown.source_key ?? null) : null,
      target_key: subject === 'relationship' ? (shown.target_key ?? null) : null,
      confidence: Number(shown.confidence),
      current: curr,
      previous: prev,
    };
  };
  for (const [key, curr] of after) {
    const prev = before.get(key);
    if (!prev) out.push(item('added', null, curr, []));
    else {
      const fields = changedFields(prev, curr);
      if (fields.length > 0) out.push(item('changed', prev, curr, fields));
    }
  }
  for (const [key, prev] of before) {
    if (after.has(key)) continue;
    const reread = prev.sources.some((s) => currentSources.has(s));
    out.push(item(reread ? 'removed' : 'not_reobserved', prev, null, []));
  }
  return out;
}

const ORDER: Record<string, number> = { added: 0, changed: 1, removed: 2, not_reobserved: 3 };

/** Every change from `previous` to `current`, entities first, then by change and key. */
export function diffSnapshots(previous: SnapshotSide, current: SnapshotSide): ChangeItem[] {
  const sources = new Set(current.sources);
  const items = [
    ...diffSide('entity', previous.entities, current.entities, sources),
    ...diffSide('relationship', previous.relationships, current.relationships, sources),
  ];
  const rank = (i: ChangeItem) => ORDER[i.change_type.slice(i.subject.length + 1)] ?? 9;
  return items.sort(
    (a, b) =>
      (a.subject === b.subject ? 0 : a.subject === 'entity' ? -1 : 1) ||
      rank(a) - rank(b) ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

/** Whether two snapshots read the same source types (so a missing item means a real removal). */
export function coverageComparable(previous: SnapshotSide, current: SnapshotSide): boolean {
  const a = [...new Set(previous.sources)].sort().join(',');
  const b = [...new Set(current.sources)].sort().join(',');
  return a === b;
}

/**
 * The service-to-service cycles of a graph, each as its sorted member keys joined by `,`
 * (strongly connected components of two or more services, or a service calling itself).
 */
export function serviceCycles(side: SnapshotSide): Set<string> {
  const services = new Set(
    side.entities.filter((e) => e.kind === 'service').map((e) => e.canonical_key),
  );
  const edges = new Map<string, string[]>();
  for (const r of side.relationships) {
    if (!r.source_key || !r.target_key) continue;
    if (!services.has(r.source_key) || !services.has(r.target_key)) continue;
    edges.set(r.source_key, [...(edges.get(r.source_key) ?? []), r.target_key]);
  }
  // Tarjan's strongly connected components, iterative so a deep graph cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles = new Set<string>();
  let next = 0;
  for (const root of [...services].sort()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: root, i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = edges.get(frame.node) ?? [];
      if (frame.i < targets.length) {
        const t = targets[frame.i++]!;
        if (!index.has(t)) {
          index.set(t, next);
          low.set(t, next++);
          stack.push(t);
          onStack.add(t);
          work.push({ node: t, i: 0 });
        } else if (onStack.has(t))
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(t)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const members: string[] = [];
      let m: string;
      do {
        m = stack.pop()!;
        onStack.delete(m);
        members.push(m);
      } while (m !== frame.node);
      const selfLoop = (edges.get(frame.node) ?? []).includes(frame.node);
      if (members.length > 1 || selfLoop) cycles.add(members.sort().join(','));
    }
  }
  return cycles;
}
