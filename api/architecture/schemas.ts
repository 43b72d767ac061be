/** Architecture truth: entities, relationships, evidence, dependencies, history and contradictions. */
import { Type, type Static } from '@sinclair/typebox';
import { DEPENDENCY_DIRECTIONS, SOURCE_TYPES } from '../../domain/contract/values';
import { DateTime, Decimal, FreeObject, LiteralUnion, Nullable, Strict, Uuid } from '../schema-kit';

/** Source type of evidence (spec: code, cloud, cicd). Inline, not a named component. */
export const SourceType = LiteralUnion(SOURCE_TYPES, { description: 'Evidence source type.' });

export const ConflictingClaimValue = Strict(
  'ConflictingClaimValue',
  {
    value: Type.Unknown({
      description: 'The value this group of sources claims (any JSON value).',
    }),
    evidence_ids: Type.Array(Type.String(), { description: 'Evidence making the claim.' }),
    sources: Type.Array(Type.String(), { description: 'Source types making the claim.' }),
  },
  { description: 'One of the competing values of a contradiction.' },
);

export const ConflictingClaim = Strict(
  'ConflictingClaim',
  {
    field: Type.String({ description: 'Attribute the sources disagree on.' }),
    claims: Type.Array(ConflictingClaimValue),
  },
  { description: 'Sources claiming different values for one field.' },
);

const confidence = () => Decimal({ description: 'Confidence, 0 to 1.' });
const evidenceIds = () => Type.Array(Type.String(), { description: 'Supporting evidence ids.' });
const sourceList = (description: string) => Type.Array(Type.String(), { description });

/** What a snapshot found: the source types seen and missed, the coverage, the counts, and when. */
const snapshotCoverage = {
  sources: sourceList('Source types found.'),
  missing_sources: sourceList('Source types not found.'),
  source_coverage: Decimal({ description: 'Share of source types found, 0 to 1.' }),
  entity_count: Type.Integer(),
  relationship_count: Type.Integer(),
  generated_at: DateTime(),
};

export const ArchitectureBundleResponse = Strict(
  'ArchitectureBundleResponse',
  {
    audit_id: Uuid(),
    version: Type.String({ description: 'Bundle version.' }),
    architecture_facts: Type.Array(FreeObject()),
    observations: Type.Array(FreeObject()),
    diagrams: Type.Array(FreeObject()),
    threats: Type.Array(FreeObject()),
    status: Type.String(),
    model_id: Nullable(Type.String({ description: 'Model that produced the bundle, if any.' })),
  },
  { description: 'Architecture bundle produced by an audit.' },
);

export const ArchitectureGraphLinks = Strict(
  'ArchitectureGraphLinks',
  {
    decision_ids: Type.Optional(Type.Array(Uuid(), { description: 'Related decisions.' })),
    deployment_evidence_ids: Type.Optional(
      Type.Array(Uuid(), { description: 'Evidence of deployment.' }),
    ),
    finding_ids: Type.Optional(Type.Array(Uuid(), { description: 'Related findings.' })),
    owner_ids: Type.Optional(Type.Array(Uuid(), { description: 'Owners.' })),
    remediation_ids: Type.Optional(Type.Array(Uuid(), { description: 'Related remediations.' })),
  },
  { description: 'Links from a graph element to other records.' },
);

export const ArchitectureEntityResponse = Strict(
  'ArchitectureEntityResponse',
  {
    canonical_key: Type.String({ description: 'Stable key, e.g. service:cartservice.' }),
    kind: Type.String(),
    name: Type.String(),
    attributes: FreeObject(),
    confidence: confidence(),
    evidence_ids: evidenceIds(),
    sources: sourceList('Source types that observed the entity.'),
    contradictions: Type.Array(ConflictingClaim),
    first_observed_at: DateTime(),
    last_observed_at: DateTime(),
    links: Type.Optional(ArchitectureGraphLinks),
  },
  { description: 'An architecture entity (service, datastore, pipeline, ...).' },
);

export const ArchitectureRelationshipResponse = Strict(
  'ArchitectureRelationshipResponse',
  {
    canonical_key: Type.String({ description: 'Stable key, e.g. calls:service:a->service:b.' }),
    source_key: Type.String({ description: 'Canonical key of the source entity.' }),
    target_key: Type.String({ description: 'Canonical key of the target entity.' }),
    kind: Type.String(),
    attributes: FreeObject(),
    confidence: confidence(),
    evidence_ids: evidenceIds(),
    sources: sourceList('Source types that observed the relationship.'),
    contradictions: Type.Array(ConflictingClaim),
    supersedes_id: Nullable(Uuid()),
    superseded_at: Nullable(DateTime()),
    first_observed_at: DateTime(),
    last_observed_at: DateTime(),
    links: Type.Optional(ArchitectureGraphLinks),
  },
  { description: 'A relationship between two entities.' },
);

export const ArchitectureEvidenceResponse = Strict(
  'ArchitectureEvidenceResponse',
  {
    id: Uuid(),
    source_type: SourceType,
    provider: Type.String({ description: 'e.g. kubernetes, terraform, github-actions.' }),
    evidence_kind: Type.String(),
    subject_key: Type.String({ description: 'Canonical key of the subject.' }),
    relationship_kind: Nullable(Type.String()),
    object_key: Nullable(Type.String({ description: 'Canonical key of the object, if any.' })),
    location: Nullable(FreeObject({ description: 'Where the fact was observed.' })),
    source_ref: Type.String({ description: 'Commit SHA or upload SHA-256.' }),
    summary: Type.String(),
    content_sha256: Type.String({ description: 'SHA-256 of the cited content.' }),
    observed_at: DateTime(),
  },
  { description: 'One observed fact at one place.' },
);

export const ArchitectureTruthResponse = Strict(
  'ArchitectureTruthResponse',
  {
    audit_id: Uuid(),
    version: Type.String({ description: 'Snapshot version.' }),
    status: Type.String(),
    ...snapshotCoverage,
    entities: Type.Array(ArchitectureEntityResponse),
    relationships: Type.Array(ArchitectureRelationshipResponse),
    evidence: Type.Array(ArchitectureEvidenceResponse),
  },
  { description: 'The architecture snapshot of an audit.' },
);

export const ArchitectureDependencyPath = Strict(
  'ArchitectureDependencyPath',
  {
    direction: LiteralUnion(DEPENDENCY_DIRECTIONS),
    entity_keys: Type.Array(Type.String(), { description: 'Entities along the path, in order.' }),
    relationship_keys: Type.Array(Type.String(), { description: 'Relationships along the path.' }),
    evidence_ids: evidenceIds(),
    confidence: confidence(),
    contradictions: Type.Optional(Type.Array(ConflictingClaim)),
  },
  { description: 'One dependency path from the root entity.' },
);

export const ArchitectureDependencyResponse = Strict(
  'ArchitectureDependencyResponse',
  {
    repository_id: Uuid(),
    snapshot_id: Uuid(),
    audit_id: Uuid(),
    root: ArchitectureEntityResponse,
    generated_at: DateTime(),
    max_depth: Type.Integer({ description: 'Depth the paths were followed to.' }),
    paths: Type.Array(ArchitectureDependencyPath),
  },
  { description: 'Upstream and downstream dependencies of an entity.' },
);

export const ArchitectureSnapshotHistoryItem = Strict(
  'ArchitectureSnapshotHistoryItem',
  {
    id: Uuid(),
    audit_id: Uuid(),
    version: Type.String(),
    status: Type.String(),
    audit_status: Type.String(),
    audit_type: Type.String(),
    commit_sha: Nullable(Type.String()),
    ...snapshotCoverage,
    completed_at: Nullable(DateTime()),
  },
  { description: 'One architecture snapshot of a repository.' },
);

export const ArchitectureSnapshotHistoryResponse = Strict(
  'ArchitectureSnapshotHistoryResponse',
  { repository_id: Uuid(), items: Type.Array(ArchitectureSnapshotHistoryItem) },
  { description: 'Architecture snapshots of a repository.' },
);

// The static types of the schemas that code elsewhere names.
export type ArchitectureEntityResponse = Static<typeof ArchitectureEntityResponse>;
export type ArchitectureTruthResponse = Static<typeof ArchitectureTruthResponse>;
