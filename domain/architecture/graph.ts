/** An architecture snapshot's graph as the rules over it read it. */

export type Obj = Record<string, unknown>;

/** Sources that disagree on one field of an entity or relationship. */
export interface Contradiction {
  field: string;
  claims: Array<{ value: unknown; evidence_ids: string[]; sources: string[] }>;
}

/** An entity or relationship as a snapshot stores it. */
export interface Element {
  canonical_key: string;
  kind: string;
  attributes: Obj;
  confidence: string;
  evidence_ids: string[];
  sources: string[];
  contradictions: Contradiction[];
}

export interface Graph {
  entities: Array<Element & { name: string }>;
  relationships: Array<
    Element & { source_key: string; target_key: string; superseded_at?: string | null }
  >;
}

/** Code-unit order, independent of locale. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortedUnique(ids: string[]): string[] {
  return [...new Set(ids)].sort(cmp);
}
