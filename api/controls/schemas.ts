/** Controls, assessments and findings. The specification does not declare the no-unknown-properties rule for the assessment schemas. */
import { Type, type Static } from '@sinclair/typebox';
import { EXCEPTION_SCOPES } from '../../domain/controls/exceptions';
import {
  CONTROL_DOMAINS,
  CONTROL_SEVERITIES,
  FINDING_STATUSES,
  REQUIREMENT_STATUSES,
} from '../../domain/contract/values';
import {
  DateTime,
  Decimal,
  LiteralUnion,
  Nullable,
  Open,
  pageFields,
  Strict,
  Uuid,
} from '../schema-kit';
import {
  CursorPage,
  ResourceParams,
  WorkspaceRecord,
  Timestamps,
  Rationale,
} from '../schema-parts';

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

const ids = (description: string) => Type.Array(Type.String(), { description });

export const AssessmentResponse = Open(
  'AssessmentResponse',
  {
    id: Uuid(),
    control_id: Uuid(),
    mapping_version_id: Uuid(),
    control_key: Type.String(),
    title: Type.String(),
    description: Type.String(),
    domain: Type.String(),
    severity: Type.String(),
    status: Type.String({
      description: 'One of pass, fail, partial, not_applicable, insufficient_evidence.',
    }),
    calculation_version: Type.String(),
    input_hash: Type.String({ description: 'Hash of the inputs the assessment used.' }),
    rationale: Type.String(),
    applicability: Type.String(),
    applicability_rationale: Nullable(Type.String()),
    confidence: Decimal({ description: 'Confidence, 0 to 1.' }),
    evidence_ids: ids('Evidence the assessment rests on.'),
    finding_ids: ids('Findings raised.'),
    architecture_relationship_ids: ids('Relationships considered.'),
    stale_evidence_ids: ids('Evidence that is out of date.'),
    conflicting_evidence_ids: ids('Evidence that contradicts other evidence.'),
    missing_requirement_keys: ids('Requirements without evidence.'),
    exception_id: Nullable(Uuid()),
    calculated_at: DateTime(),
    requirements: Type.Array(RequirementResponse),
    overlay_version: Type.Integer(),
  },
  { description: 'Assessment of one control against evidence.' },
);

export const ControlRequirementResponse = Strict(
  'ControlRequirementResponse',
  {
    key: Type.String({ description: 'Requirement key within the control.' }),
    description: Type.String(),
    advisory: Type.Boolean({
      description: 'Advisory requirements are reported but never fail the control.',
    }),
  },
  { description: 'One requirement of a catalog control.' },
);

export const ControlResponse = Strict(
  'ControlResponse',
  {
    id: Uuid({
      description: 'Stable per control and catalog version (the control_id of assessments).',
    }),
    mapping_version_id: Uuid({ description: 'Stable per catalog version.' }),
    catalog_version: Type.String({ description: 'Version of the built-in catalog.' }),
    key: Type.String({ description: 'Stable control key, e.g. ci-actions-pinned.' }),
    title: Type.String(),
    description: Type.String(),
    domain: LiteralUnion(CONTROL_DOMAINS),
    severity: LiteralUnion(CONTROL_SEVERITIES, {
      description: 'Severity of the findings it raises.',
    }),
    requirements: Type.Array(ControlRequirementResponse),
    created_at: DateTime(),
  },
  { description: 'A control of the built-in catalog.' },
);

export const ControlPage = CursorPage('ControlPage', ControlResponse);
export const AssessmentPage = CursorPage('AssessmentPage', AssessmentResponse);

export const FindingLocation = Strict(
  'FindingLocation',
  {
    path: Type.String({ description: 'File path in the audited source.' }),
    start_line: Type.Integer({ minimum: 0 }),
    end_line: Type.Integer({ minimum: 0 }),
  },
  { description: 'Where a finding was observed.' },
);

export const FindingResponse = Strict(
  'FindingResponse',
  {
    ...WorkspaceRecord,
    repository_id: Nullable(
      Uuid({
        description:
          'Null for findings of an upload audit that named no repository (source `upload`).',
      }),
    ),
    source: LiteralUnion(['repository', 'upload'] as const, {
      description:
        "`repository`: a finding of the repository (raised by its audits, or by an upload audit that named it); `upload`: a finding of one upload audit that named no repository, its own (another upload audit's findings are separate ones).",
    }),
    source_label: Type.String({
      description:
        'Where the finding comes from, for lists: the repository name, or `upload <filename> (audit <first 8 characters of its id>)`.',
    }),
    upload_id: Nullable(
      Uuid({ description: 'The upload, for a finding of source `upload`; else null.' }),
    ),
    control_id: Uuid({ description: 'The catalog control (of the version that last raised it).' }),
    control_key: Type.String(),
    severity: LiteralUnion(CONTROL_SEVERITIES),
    title: Type.String(),
    detail: Type.String(),
    fingerprint: Type.String({
      description:
        'sha256 of the control key and the stable subject; the same across audits of unchanged code.',
    }),
    status: LiteralUnion(FINDING_STATUSES),
    note: Nullable(Type.String({ description: 'The note of the last status change by a user.' })),
    entity_key: Nullable(Type.String({ description: 'Canonical key of the entity concerned.' })),
    evidence_ids: Type.Array(Type.String(), {
      description: 'Evidence of the audit that last observed it.',
    }),
    locations: Type.Array(FindingLocation),
    first_seen_audit_id: Uuid(),
    last_seen_audit_id: Uuid(),
    first_seen_at: DateTime(),
    last_seen_at: DateTime(),
    occurrences: Type.Integer({ minimum: 1, description: 'Audits that observed it.' }),
    resolved_audit_id: Nullable(Uuid({ description: 'The audit that no longer observed it.' })),
    resolved_at: Nullable(DateTime()),
    ...Timestamps,
  },
  { description: 'A failing control observation, tracked across audits by fingerprint.' },
);

export const FindingPage = CursorPage('FindingPage', FindingResponse);

export const FindingUpdate = Strict(
  'FindingUpdate',
  {
    status: LiteralUnion(FINDING_STATUSES, {
      description:
        'accepted_risk and false_positive are kept by later audits; resolved only when the latest completed audit no longer observes the finding.',
    }),
    note: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'Why the status changes (kept on the finding and in the audit event).',
    }),
  },
  { description: 'A status change of a finding, with its reason.' },
);

export const FindingParams = ResourceParams('finding_id', 'The finding.');

export const FindingListQuery = Type.Object(
  {
    status: Type.Optional(LiteralUnion(FINDING_STATUSES, { description: 'Only this status.' })),
    severity: Type.Optional(
      LiteralUnion(CONTROL_SEVERITIES, { description: 'Only this severity.' }),
    ),
    repository_id: Type.Optional(Uuid({ description: 'Only findings of this repository.' })),
    source: Type.Optional(
      LiteralUnion(['repository', 'upload'] as const, {
        description: 'Only findings of repositories, or only those of upload audits.',
      }),
    ),
    control_key: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Only findings of this control.' }),
    ),
    ...pageFields(),
  },
  { additionalProperties: false },
);

// Ours: control exceptions.

export const ControlExceptionCreate = Strict(
  'ControlExceptionCreate',
  {
    control_key: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'A control of the catalog (listControls).',
    }),
    scope: Type.Optional(
      LiteralUnion(EXCEPTION_SCOPES, {
        default: 'workspace',
        description:
          '`workspace` (every repository), `repository` (repository_id), or `entity` (one entity or relationship key of repository_id).',
      }),
    ),
    repository_id: Type.Optional(Nullable(Uuid())),
    subject_key: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 1000,
          description: 'Canonical entity or relationship key (scope entity).',
        }),
      ),
    ),
    reason: Rationale(),
    expires_at: DateTime({
      description: 'When the exception stops applying: in the future, at most 366 days ahead.',
    }),
  },
  { description: 'Request to waive a control for a scope until a date.' },
);

export const ControlExceptionResponse = Strict(
  'ControlExceptionResponse',
  {
    ...WorkspaceRecord,
    control_key: Type.String(),
    scope: LiteralUnion(EXCEPTION_SCOPES),
    repository_id: Nullable(Uuid()),
    subject_key: Nullable(Type.String()),
    reason: Type.String(),
    expires_at: DateTime(),
    state: LiteralUnion(['active', 'expired', 'revoked'] as const),
    created_by: Uuid(),
    created_at: DateTime(),
    revoked_at: Nullable(DateTime()),
    revoked_by: Nullable(Uuid()),
  },
  {
    description:
      'A control exception. Assessments of later audits that it covers carry its id in `exception_id`; an expired or revoked exception stops applying at the next audit.',
  },
);

export const ControlExceptionPage = CursorPage('ControlExceptionPage', ControlExceptionResponse);

export const ControlExceptionParams = ResourceParams('exception_id', 'The control exception.');

// The static types of the schemas that code elsewhere names.
export type AssessmentResponse = Static<typeof AssessmentResponse>;
