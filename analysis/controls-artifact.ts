/**
 * The controls stage's artifact as stored, built in an analysis pool thread from the audit's
 * snapshot as JSON text (issue 24, fair sharing: a 10,000-service snapshot is tens of megabytes,
 * and reading it, assessing it and writing the result stopped the worker's main thread).
 */
import { ASSESSMENT_STATUSES } from '../domain/contract/values';
import { NO_LOCATION } from '../domain/architecture/ingested';
import { assessControls, CONTROL_CATALOG_VERSION, type Assessment } from './controls';
import type { ConflictingClaim, Entity, Relationship, StoredEvidence } from './reconcile';
import type { ArtifactText } from './artifacts';

/** One assessment as the artifact carries it: the pure result plus what it rests on in the graph. */
export interface ControlArtifactItem extends Assessment {
  /** Canonical keys of the relationships whose evidence the control used. */
  architecture_relationship_ids: string[];
  /** Evidence the control used that takes part in a contradiction of the snapshot. */
  conflicting_evidence_ids: string[];
  /** Always empty: every evidence comes from this audit's own observation of its commit. */
  stale_evidence_ids: string[];
  /** Requirements whose checks all lacked the facts they need (status unknown). */
  missing_requirement_keys: string[];
}

export interface ControlArtifact {
  catalog_version: string;
  assessments: ControlArtifactItem[];
}

/** A snapshot as JSON text: its entities, relationships and evidence (rows in position order). */
export interface SnapshotText {
  entities: string;
  relationships: string;
  evidence: string;
}

function contradictionEvidence(items: Array<{ contradictions: ConflictingClaim[] }>): Set<string> {
  const out = new Set<string>();
  for (const item of items)
    for (const c of item.contradictions)
      for (const claim of c.claims) for (const id of claim.evidence_ids) out.add(id);
  return out;
}

/** "14 controls: 9 pass, 3 fail, 2 not_applicable". */
export function describeAssessments(assessments: Array<{ status: string }>): string {
  const counts = ASSESSMENT_STATUSES.map(
    (s) => [s, assessments.filter((a) => a.status === s).length] as const,
  ).filter(([, n]) => n > 0);
  return `${assessments.length} controls: ${counts.map(([s, n]) => `${n} ${s}`).join(', ')}`;
}

/** The catalog assessed on the snapshot; the artifact, its summary and its failing evidence. */
export function controlsArtifact(
  snapshot: SnapshotText,
  files: string[],
): { artifact: ArtifactText; summary: string; evidenceIds: string[] } {
  const entities = JSON.parse(snapshot.entities) as Entity[];
  const relationships = JSON.parse(snapshot.relationships) as Relationship[];
  const evidence = (JSON.parse(snapshot.evidence) as StoredEvidence[]).map((e) => ({
    ...e,
    // Ingested evidence may have no location (a runtime trace).
    location: e.location ?? { ...NO_LOCATION },
  }));
  const assessed = assessControls({ entities, relationships, evidence, files });
  const conflicting = contradictionEvidence([...entities, ...relationships]);
  const assessments: ControlArtifactItem[] = assessed.map((a) => {
    const used = new Set(a.evidence_ids);
    return {
      ...a,
      architecture_relationship_ids: relationships
        .filter((r) => r.evidence_ids.some((id) => used.has(id)))
        .map((r) => r.canonical_key)
        .sort(),
      conflicting_evidence_ids: a.evidence_ids.filter((id) => conflicting.has(id)),
      stale_evidence_ids: [],
      missing_requirement_keys: a.requirements
        .filter((r) => r.status === 'unknown')
        .map((r) => r.key),
    };
  });
  const artifact: ControlArtifact = { catalog_version: CONTROL_CATALOG_VERSION, assessments };
  return {
    artifact: { json: JSON.stringify(artifact), evidence: 0, entities: 0 },
    summary: describeAssessments(assessments),
    evidenceIds: [...new Set(assessments.flatMap((a) => a.failing_evidence_ids))].sort(),
  };
}
