/**
 * The rows of an audit's architecture snapshot, built in an analysis pool thread from the
 * reconcile artifact as JSON text (issue 24, fair sharing): for a 10,000-service system the
 * entities, relationships and evidence are tens of megabytes, and parsing the artifact, naming
 * every evidence by its uuid, building the rows and serialising them held the worker's main
 * thread for seconds. The main thread writes what comes back: JSON text and a few counts.
 */
import crypto from 'node:crypto';
import {
  applyIngested,
  localIngestedId,
  type IngestedRecord,
} from '../domain/architecture/ingested';
import { storableJsonText } from '../domain/text';
import type { SourceType } from './evidence';
import type { Entity, IdentityConflict, Relationship, StoredEvidence } from './reconcile';
import { architectureStatus, uncertaintyCandidates, type CaseCandidate } from './uncertainty';
import type { VariantChoice } from './variants';

export interface SnapshotRowsInput {
  auditId: string;
  snapshotId: string;
  workspaceId: string;
  /** The reconcile artifact as stored. */
  graphJson: string;
  /** The entities and relationships of the repository's previous snapshot, as JSON text. */
  previousItems: string | null;
  ingested: IngestedRecord[];
  requested: SourceType[];
  budgetCut: boolean;
  sourceRef: string;
  /** The snapshot's observation time (ISO 8601). */
  now: string;
}

type Gap = { kind: string; path: string; reason: string; message: string };

export interface SnapshotRows {
  status: 'complete' | 'partial';
  sources: SourceType[];
  missing: SourceType[];
  analyzerGaps: Gap[];
  reconcileGaps: Gap[];
  /** The snapshot's entities and relationships as JSON text, and how many. */
  entities: { json: string; count: number };
  relationships: { json: string; count: number };
  /** The evidence rows (location and attributes as JSON values) as one JSON array. */
  evidenceJson: string;
  candidates: CaseCandidate[];
  /** For the audit's log line. */
  counts: {
    entities: number;
    relationships: number;
    evidence: number;
    ingested: number;
    corroboratedEntities: number;
    corroboratedRelationships: number;
    uncorroborated: number;
  };
}

/** The snapshot of the reconcile artifact: its rows, status, coverage gaps and uncertainty. */
export function snapshotRows(input: SnapshotRowsInput): SnapshotRows {
  const { auditId, now } = input;
  const graph = JSON.parse(input.graphJson) as {
    entities: Entity[];
    relationships: Relationship[];
    evidence: StoredEvidence[];
    gaps?: Array<{ path: string; reason: string; message: string }>;
    conflicts?: IdentityConflict[];
    variants?: VariantChoice[];
  };
  const uuidOf = (local: string) => {
    const h = crypto.createHash('sha256').update(`${auditId}:${local}`).digest('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  };
  const ids = (list: string[]) => list.map(uuidOf);
  // Evidence from outside the repository (ingestEvidence) corroborates or contradicts what
  // the files declare (domain/architecture/ingested.ts); coverage stays the files' own.
  const ingested = applyIngested(graph, input.ingested);
  const ingestedAt = new Map(input.ingested.map((r) => [localIngestedId(r.id), r] as const));
  const allEvidence = [...graph.evidence, ...ingested.evidence];
  const firstSeen = new Map<string, string>();
  const previous = input.previousItems
    ? (JSON.parse(input.previousItems) as Array<Record<string, unknown>>)
    : [];
  for (const item of previous)
    firstSeen.set(item.canonical_key as string, item.first_observed_at as string);
  const withIds = <
    T extends {
      canonical_key: string;
      evidence_ids: string[];
      contradictions: Array<{ field: string; claims: Array<{ evidence_ids: string[] }> }>;
    },
  >(
    x: T,
  ) => ({
    ...x,
    evidence_ids: ids(x.evidence_ids),
    contradictions: x.contradictions.map((c) => ({
      ...c,
      claims: c.claims.map((cl) => ({ ...cl, evidence_ids: ids(cl.evidence_ids) })),
    })),
    first_observed_at: firstSeen.get(x.canonical_key) ?? now,
    last_observed_at: now,
  });
  const sources = input.requested.filter((t) => graph.evidence.some((e) => e.source_type === t));
  const missing = input.requested.filter((t) => !sources.includes(t));
  // What the analyzers could not read becomes coverage gaps of the audit, with why.
  const analyzerGaps = (graph.gaps ?? []).map((g) => ({
    kind: 'analyzer',
    path: g.path,
    reason: g.reason,
    message: g.message,
  }));
  // Identity conflicts (deployables reconcile kept apart) are gaps too: the graph guessed.
  const conflicts = (graph.conflicts ?? []).map((c) => ({
    ...c,
    evidence_ids: ids(c.evidence_ids),
  }));
  const byLocalId = new Map(graph.evidence.map((e) => [e.id, e]));
  const reconcileGaps = (graph.conflicts ?? []).map((c) => ({
    kind: 'reconcile',
    path: byLocalId.get(c.evidence_ids[0] ?? '')?.location.path ?? '',
    reason: 'identity_conflict',
    message: c.detail,
  }));
  // A choice between deployment variants is said: a guess keeps the snapshot partial.
  for (const v of graph.variants ?? []) {
    reconcileGaps.push({
      kind: 'reconcile',
      path: v.primary,
      reason: v.guessed ? 'deployment_variant_guessed' : 'deployment_variant_chosen',
      message: v.detail,
    });
  }
  const status = architectureStatus({
    missingSources: missing,
    conflicts,
    gaps: analyzerGaps,
    guessedVariant: (graph.variants ?? []).some((v) => v.guessed),
    budgetCut: input.budgetCut,
  });
  const entities = ingested.entities.map(withIds);
  const relationships = ingested.relationships.map(withIds);
  const evidenceRows = allEvidence.map((e, position) => ({
    id: uuidOf(e.id),
    snapshot_id: input.snapshotId,
    workspace_id: input.workspaceId,
    source_type: e.source_type,
    provider: e.provider,
    evidence_kind: e.evidence_kind,
    subject_key: e.subject_key,
    relationship_kind: e.relationship_kind,
    object_key: e.object_key,
    location: ingestedAt.has(e.id) ? ingestedAt.get(e.id)!.location : e.location,
    source_ref: ingestedAt.has(e.id)
      ? `ingestion:${ingestedAt.get(e.id)!.ingestion_id}`
      : input.sourceRef,
    summary: e.summary,
    content_sha256: e.content_sha256,
    attributes: e.attributes ?? {},
    observed_at: ingestedAt.get(e.id)?.observed_at ?? now,
    position,
  }));
  const candidates = uncertaintyCandidates({
    entities,
    relationships,
    evidence: allEvidence.map((e) => ({
      ...e,
      id: uuidOf(e.id),
      location: ingestedAt.get(e.id)?.location === null ? null : e.location,
    })),
    missingSources: missing,
    conflicts,
    variants: (graph.variants ?? []).map((v) => ({ ...v, evidence_ids: ids(v.evidence_ids) })),
    undeclaredCalls: ingested.uncorroborated.map((c) => ({
      ...c,
      evidence_ids: ids(c.evidence_ids),
    })),
  });
  return {
    status,
    sources,
    missing,
    analyzerGaps,
    reconcileGaps,
    entities: { json: JSON.stringify(entities), count: entities.length },
    relationships: {
      json: JSON.stringify(
        relationships.map((r) => ({ ...r, supersedes_id: null, superseded_at: null })),
      ),
      count: relationships.length,
    },
    evidenceJson: storableJsonText(JSON.stringify(evidenceRows)),
    candidates,
    counts: {
      entities: graph.entities.length,
      relationships: graph.relationships.length,
      evidence: graph.evidence.length,
      ingested: input.ingested.length,
      corroboratedEntities: ingested.corroborated.entities,
      corroboratedRelationships: ingested.corroborated.relationships,
      uncorroborated: ingested.uncorroborated.length,
    },
  };
}
