/**
 * What an audit's architecture bundle observes about its snapshot: coverage (missing sources,
 * the audit's coverage gaps, the analyzers' gaps), weakly evidenced entities and contradictions,
 * each with the evidence ids it rests on.
 */
import { sortedUnique, type Contradiction, type Graph, type Obj } from './graph';

/** Below this confidence an entity is reported as weakly evidenced. */
export const LOW_CONFIDENCE = 0.5;

/** The snapshot fields the observations read. */
export interface ObservedSnapshot {
  status: string;
  sources: string[];
  missing_sources: string[];
  source_coverage: string;
}

export function observationsOf(
  snapshot: ObservedSnapshot,
  graph: Graph,
  coverageGaps: readonly Obj[],
  analyzerGaps: readonly unknown[],
): Obj[] {
  const out: Obj[] = [
    {
      type: 'coverage',
      status: snapshot.status,
      sources: snapshot.sources,
      missing_sources: snapshot.missing_sources,
      source_coverage: snapshot.source_coverage,
      evidence_ids: [],
    },
  ];
  for (const source of snapshot.missing_sources)
    out.push({
      type: 'missing_source',
      source_type: source,
      message: `No ${source} evidence was found; facts that only ${source} files would show are absent.`,
      evidence_ids: [],
    });
  for (const gap of coverageGaps) out.push({ ...gap, type: 'coverage_gap', evidence_ids: [] });
  for (const gap of analyzerGaps)
    if (gap && typeof gap === 'object')
      out.push({ ...gap, type: 'analyzer_gap', evidence_ids: [] });
  for (const e of graph.entities)
    if (Number(e.confidence) < LOW_CONFIDENCE)
      out.push({
        type: 'low_confidence',
        key: e.canonical_key,
        kind: e.kind,
        confidence: e.confidence,
        message: `${e.canonical_key} rests on weak evidence (confidence ${e.confidence}).`,
        evidence_ids: e.evidence_ids,
      });
  for (const item of [...graph.entities, ...graph.relationships]) {
    for (const c of (item.contradictions ?? []) as Contradiction[])
      out.push({
        type: 'contradiction',
        key: item.canonical_key,
        field: c.field,
        claims: c.claims,
        message: `Sources disagree on ${c.field} of ${item.canonical_key}.`,
        evidence_ids: sortedUnique(c.claims.flatMap((cl) => cl.evidence_ids)),
      });
  }
  return out;
}
