/**
 * Two snapshots of a repository compared in the graph: the entities and relationships of the
 * audit's snapshot, plus those only the other snapshot has, each with how it differs. The
 * differences come from getArchitectureChanges (from = the other snapshot, to = this one), so
 * "added" means "in this snapshot, not in the other".
 */
import type { Schemas } from '../api/client';

type Truth = Schemas['ArchitectureTruthResponse'];
export type Entity = Truth['entities'][number];
export type Relationship = Truth['relationships'][number];
export type Change = Schemas['ArchitectureChangeResponse']['changes'][number];

export type DiffStatus = 'added' | 'removed' | 'changed' | 'unseen' | 'same';

/** How each status is drawn and told: a symbol and a word besides the colour. */
export const DIFF_LEGEND: Record<Exclude<DiffStatus, 'same'>, { symbol: string; label: string }> = {
  added: { symbol: '+', label: 'added (only in this snapshot)' },
  removed: { symbol: '−', label: 'removed (only in the other snapshot)' },
  changed: { symbol: '~', label: 'changed' },
  unseen: { symbol: '?', label: 'not re-observed (its source was not read)' },
};

function statusOf(changeType: Change['change_type']): DiffStatus {
  if (changeType.endsWith('_added')) return 'added';
  if (changeType.endsWith('_removed')) return 'removed';
  if (changeType.endsWith('_changed')) return 'changed';
  return 'unseen';
}

export interface Compared {
  entities: Entity[];
  relationships: Relationship[];
  status: Map<string, DiffStatus>;
  /** Changed fields by key, for the details panel. */
  fields: Map<string, string[]>;
}

export function compare(current: Truth, other: Truth | null, changes: Change[] | null): Compared {
  const status = new Map<string, DiffStatus>();
  const fields = new Map<string, string[]>();
  if (!other || !changes)
    return { entities: current.entities, relationships: current.relationships, status, fields };
  for (const c of changes) {
    status.set(c.key, statusOf(c.change_type));
    if (c.change_fields?.length) fields.set(c.key, c.change_fields);
  }
  const here = new Set(current.entities.map((e) => e.canonical_key));
  const hereRel = new Set(current.relationships.map((r) => r.canonical_key));
  const gone = (key: string) => {
    const s = status.get(key);
    return s === 'removed' || s === 'unseen';
  };
  return {
    entities: [
      ...current.entities,
      ...other.entities.filter((e) => !here.has(e.canonical_key) && gone(e.canonical_key)),
    ],
    relationships: [
      ...current.relationships,
      ...other.relationships.filter((r) => !hereRel.has(r.canonical_key) && gone(r.canonical_key)),
    ],
    status,
    fields,
  };
}
