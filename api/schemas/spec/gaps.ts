/**
 * Types the spec references but leaves undefined (spec 2.15), shaped as DESIGN.md section 5
 * chooses. Where DESIGN.md is silent (ComparisonAuditSide, FindingDelta, RequirementResponse) the
 * shape is our own small, explicit choice. Every object and enum here is a named component.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Decimal, named, Nullable, Strict, Uuid } from '../../schema-kit';
import {
  AUDIT_STATUSES,
  AUDIT_TYPES,
  ARCHITECTURE_CHANGE_TYPES,
  CRITERION_STATUSES,
  DECISION_STATES,
  FINDING_CHANGES,
  LiteralUnion,
  REQUIREMENT_STATUSES,
  SOURCE_TYPES,
  STAGE_KEYS,
  STAGE_STATUSES,
  SUCCESS_CHECK_KINDS,
  UNCERTAINTY_REASONS,
  UNCERTAINTY_SCOPES,
  UNCERTAINTY_STATES,
  VERIFICATION_OUTCOMES,
} from '../../../domain/contract/values';

/** Source type of evidence (spec: code, cloud, cicd). Inline, not a named component. */
export const SourceType = LiteralUnion(SOURCE_TYPES, { description: 'Evidence source type.' });
export type SourceType = Static<typeof SourceType>;

/** Commit SHA: exactly 40 hexadecimal characters (spec 2.11). */
export const COMMIT_SHA_PATTERN = '^[0-9a-fA-F]{40}$';
export const CommitSha = (options: { description?: string } = {}) =>
  Type.String({ pattern: COMMIT_SHA_PATTERN, ...options });

// ---------------------------------------------------------------------------------------------
// Enums

export const AuditType = named(
  'AuditType',
  LiteralUnion(AUDIT_TYPES, {
    description: 'What an audit runs against: a repository (branch or commit) or an upload.',
  }),
);
export type AuditType = Static<typeof AuditType>;

export const AuditStatus = named(
  'AuditStatus',
  LiteralUnion(AUDIT_STATUSES, { description: 'Lifecycle status of an audit.' }),
);
export type AuditStatus = Static<typeof AuditStatus>;

export const ArchitectureDecisionState = named(
  'ArchitectureDecisionState',
  LiteralUnion(DECISION_STATES, { description: 'Lifecycle state of an architecture decision.' }),
);
export type ArchitectureDecisionState = Static<typeof ArchitectureDecisionState>;

export const UncertaintyReason = named(
  'UncertaintyReason',
  LiteralUnion(UNCERTAINTY_REASONS, { description: 'Why the architecture is uncertain here.' }),
);
export type UncertaintyReason = Static<typeof UncertaintyReason>;

export const UncertaintyScope = named(
  'UncertaintyScope',
  LiteralUnion(UNCERTAINTY_SCOPES, {
    description: 'What kind of subject the uncertainty is about.',
  }),
);
export type UncertaintyScope = Static<typeof UncertaintyScope>;

export const UncertaintyState = named(
  'UncertaintyState',
  LiteralUnion(UNCERTAINTY_STATES, { description: 'Lifecycle state of an uncertainty case.' }),
);
export type UncertaintyState = Static<typeof UncertaintyState>;

/** Stage key and status: inline enums of AuditStageResponse (not named components). */
export const AuditStageKey = LiteralUnion(STAGE_KEYS, {
  description: 'Stage of the audit pipeline.',
});
export type AuditStageKey = Static<typeof AuditStageKey>;
export const AuditStageStatus = LiteralUnion(STAGE_STATUSES, {
  description: 'Status of the stage.',
});
export type AuditStageStatus = Static<typeof AuditStageStatus>;

// ---------------------------------------------------------------------------------------------
// Audits

export const AuditSourceScope = Strict(
  'AuditSourceScope',
  {
    include: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
        maxItems: 200,
        description: 'Glob patterns of paths to include (default: everything).',
      }),
    ),
    exclude: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
        maxItems: 200,
        description: 'Glob patterns of paths to exclude.',
      }),
    ),
    source_types: Type.Optional(
      Type.Array(SourceType, {
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        description: 'Source types to analyze (default: all three).',
      }),
    ),
    max_files: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100000, description: 'Maximum number of files read.' }),
    ),
  },
  { description: 'Which part of the source an audit reads.' },
);
export type AuditSourceScope = Static<typeof AuditSourceScope>;

export const AuditSourceResponse = Strict(
  'AuditSourceResponse',
  {
    kind: AuditType,
    repository_id: Nullable(Uuid({ description: 'Repository read, for repository audits.' })),
    upload_id: Nullable(Uuid({ description: 'Upload read, for upload audits.' })),
    url: Nullable(Type.String({ description: 'Location the source was fetched from.' })),
    branch_ref: Nullable(Type.String({ description: 'Branch or ref requested.' })),
    commit_sha: Nullable(CommitSha({ description: 'Commit the ref resolved to.' })),
    file_count: Type.Integer({ minimum: 0, description: 'Files in the source manifest.' }),
    byte_count: Type.Integer({ minimum: 0, description: 'Bytes in the source manifest.' }),
    manifest_sha256: Type.String({ description: 'SHA-256 of the source manifest.' }),
  },
  { description: 'The resolved source an audit read.' },
);
export type AuditSourceResponse = Static<typeof AuditSourceResponse>;

export const AuditStageResponse = Strict(
  'AuditStageResponse',
  {
    key: AuditStageKey,
    status: AuditStageStatus,
    attempt: Type.Integer({ minimum: 0, description: 'Attempt number (0 before the first run).' }),
    started_at: Nullable(DateTime()),
    completed_at: Nullable(DateTime()),
    error_code: Nullable(Type.String({ description: 'Stable error code when the stage failed.' })),
    summary: Nullable(Type.String({ description: 'Short human-readable outcome of the stage.' })),
  },
  { description: 'One stage of an audit run.' },
);
export type AuditStageResponse = Static<typeof AuditStageResponse>;

// ---------------------------------------------------------------------------------------------
// Comparisons

export const ComparisonAuditSide = Strict(
  'ComparisonAuditSide',
  {
    audit_id: Uuid(),
    status: Type.String({ description: 'Audit status at comparison time.' }),
    commit_sha: Nullable(Type.String({ description: 'Commit the audit read, if any.' })),
    completed_at: Nullable(DateTime()),
    source_coverage: Decimal({ description: 'Share of source types found, 0 to 1.' }),
  },
  { description: 'One side (baseline or candidate) of an audit comparison.' },
);
export type ComparisonAuditSide = Static<typeof ComparisonAuditSide>;

export const FindingDelta = Strict(
  'FindingDelta',
  {
    change: LiteralUnion(FINDING_CHANGES, {
      description: 'How the finding differs from baseline to candidate.',
    }),
    fingerprint: Type.String({ description: 'Stable finding fingerprint across audits.' }),
    control_key: Nullable(Type.String({ description: 'Control that raised the finding.' })),
    severity: Type.String(),
    title: Type.String(),
    baseline_finding_id: Nullable(Uuid()),
    candidate_finding_id: Nullable(Uuid()),
  },
  { description: 'A finding difference between two audits.' },
);
export type FindingDelta = Static<typeof FindingDelta>;

// ---------------------------------------------------------------------------------------------
// Architecture truth: contradictions and alternatives

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
export type ConflictingClaimValue = Static<typeof ConflictingClaimValue>;

export const ConflictingClaim = Strict(
  'ConflictingClaim',
  {
    field: Type.String({ description: 'Attribute the sources disagree on.' }),
    claims: Type.Array(ConflictingClaimValue),
  },
  { description: 'Sources claiming different values for one field.' },
);
export type ConflictingClaim = Static<typeof ConflictingClaim>;

export const ClaimAlternative = Strict(
  'ClaimAlternative',
  {
    value: Type.Unknown({ description: 'A candidate value (any JSON value).' }),
    confidence: Decimal({ description: 'Confidence in this value, 0 to 1.' }),
    evidence_ids: Type.Array(Uuid(), { description: 'Evidence supporting this value.' }),
    sources: Type.Array(Type.String(), { description: 'Source types supporting this value.' }),
  },
  { description: 'A candidate answer to an uncertainty case.' },
);
export type ClaimAlternative = Static<typeof ClaimAlternative>;

// ---------------------------------------------------------------------------------------------
// Change sets

export const ChangeSetAccuracy = Strict(
  'ChangeSetAccuracy',
  {
    matched: Type.Integer({ minimum: 0, description: 'Candidate changes that were observed.' }),
    missed: Type.Integer({ minimum: 0, description: 'Observed changes the candidate lacked.' }),
    unexpected: Type.Integer({ minimum: 0, description: 'Candidate changes not observed.' }),
    precision: Decimal({ description: 'matched / (matched + unexpected).' }),
    recall: Decimal({ description: 'matched / (matched + missed).' }),
  },
  { description: 'How well a candidate change set matched the observed one.' },
);
export type ChangeSetAccuracy = Static<typeof ChangeSetAccuracy>;

export const NormalizedArchitectureChange = Strict(
  'NormalizedArchitectureChange',
  {
    change_type: LiteralUnion(ARCHITECTURE_CHANGE_TYPES),
    key: Type.String({ description: 'Canonical key of the entity or relationship.' }),
    kind: Type.String({ description: 'Entity or relationship kind.' }),
    field: Nullable(Type.String({ description: 'Changed attribute, for field-level changes.' })),
    before: Type.Unknown({ description: 'Value before the change (null when absent).' }),
    after: Type.Unknown({ description: 'Value after the change (null when absent).' }),
  },
  { description: 'One change in canonical form.' },
);
export type NormalizedArchitectureChange = Static<typeof NormalizedArchitectureChange>;

// ---------------------------------------------------------------------------------------------
// Control assessment

export const RequirementResponse = Strict(
  'RequirementResponse',
  {
    key: Type.String({ description: 'Requirement key within the control.' }),
    description: Type.String(),
    status: LiteralUnion(REQUIREMENT_STATUSES),
    evidence_ids: Type.Array(Type.String(), { description: 'Evidence the status rests on.' }),
    rationale: Nullable(Type.String()),
  },
  { description: 'One requirement of a control and whether the evidence meets it.' },
);
export type RequirementResponse = Static<typeof RequirementResponse>;

// ---------------------------------------------------------------------------------------------
// Decisions

export const DecisionSuccessCheck = Strict(
  'DecisionSuccessCheck',
  {
    kind: LiteralUnion(SUCCESS_CHECK_KINDS, { description: 'What is checked in a snapshot.' }),
    key: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Canonical key of the entity or relationship checked.',
    }),
    field: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Attribute (attribute_equals).' }),
    ),
    value: Type.Optional(Type.Unknown({ description: 'Expected value (attribute_equals).' })),
  },
  { description: 'A machine-checkable condition on an architecture snapshot.' },
);
export type DecisionSuccessCheck = Static<typeof DecisionSuccessCheck>;

const criterionId = () =>
  Type.String({ minLength: 1, maxLength: 100, description: 'Criterion id, unique per decision.' });
const criterionDescription = () => Type.String({ minLength: 1, maxLength: 2000 });

export const DecisionSuccessCriterionInput = Strict(
  'DecisionSuccessCriterionInput',
  { id: criterionId(), description: criterionDescription(), check: DecisionSuccessCheck },
  { description: 'A success criterion as proposed.' },
);
export type DecisionSuccessCriterionInput = Static<typeof DecisionSuccessCriterionInput>;

export const DecisionSuccessCriterion = Strict(
  'DecisionSuccessCriterion',
  {
    id: criterionId(),
    description: criterionDescription(),
    check: DecisionSuccessCheck,
    status: LiteralUnion(CRITERION_STATUSES, { description: 'Result of the latest evaluation.' }),
    evaluated_at: Nullable(DateTime()),
    evidence_ids: Type.Array(Uuid(), { description: 'Evidence the status rests on.' }),
  },
  { description: 'A success criterion with its evaluation.' },
);
export type DecisionSuccessCriterion = Static<typeof DecisionSuccessCriterion>;

export const DecisionOutcomeVerification = Strict(
  'DecisionOutcomeVerification',
  {
    snapshot_id: Uuid({ description: 'Snapshot the criteria were evaluated against.' }),
    outcome: LiteralUnion(VERIFICATION_OUTCOMES),
    criteria: Type.Array(DecisionSuccessCriterion),
    evaluated_at: DateTime(),
  },
  { description: 'Result of checking an implemented decision against a snapshot.' },
);
export type DecisionOutcomeVerification = Static<typeof DecisionOutcomeVerification>;

export const UncertaintySignal = Strict(
  'UncertaintySignal',
  {
    subject_key: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Canonical key the uncertainty is about.',
    }),
    description: Type.String({ minLength: 1, maxLength: 2000 }),
    blocking: Type.Boolean({ description: 'Whether the uncertainty blocks the decision.' }),
  },
  { description: 'An open question recorded with a decision.' },
);
export type UncertaintySignal = Static<typeof UncertaintySignal>;
