/** Uncertainty cases: the specification's schemas, the types it leaves open (reasons, scopes, states, alternatives, signals) and our parameters. */
import { Type, type Static } from '@sinclair/typebox';
import {
  UNCERTAINTY_REASONS,
  UNCERTAINTY_SCOPES,
  UNCERTAINTY_STATES,
} from '../../domain/contract/values';
import {
  DateTime,
  Decimal,
  LiteralUnion,
  Nullable,
  linkPageFields,
  Strict,
  Uuid,
  NamedUnion,
} from '../schema-kit';
import { ResourceParams, WorkspaceRecord, Timestamps } from '../schema-parts';

export const UncertaintyReason = NamedUnion(
  'UncertaintyReason',
  UNCERTAINTY_REASONS,
  'Why the architecture is uncertain here.',
);

export const UncertaintyScope = NamedUnion(
  'UncertaintyScope',
  UNCERTAINTY_SCOPES,
  'What kind of subject the uncertainty is about.',
);

export const UncertaintyState = NamedUnion(
  'UncertaintyState',
  UNCERTAINTY_STATES,
  'Lifecycle state of an uncertainty case.',
);

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

export const ArchitectureUncertaintyCaseResponse = Strict(
  'ArchitectureUncertaintyCaseResponse',
  {
    ...WorkspaceRecord,
    repository_id: Nullable(Uuid()),
    snapshot_id: Nullable(Uuid()),
    reason: UncertaintyReason,
    scope: UncertaintyScope,
    subject_key: Type.String({ description: 'Canonical key the case is about.' }),
    field: Nullable(Type.String({ description: 'Attribute concerned, if any.' })),
    detail: Type.String(),
    blocking: Type.Boolean(),
    state: UncertaintyState,
    owner_id: Nullable(Uuid()),
    source_keys: Type.Array(Type.String()),
    evidence_ids: Type.Array(Uuid()),
    alternatives: Type.Array(ClaimAlternative),
    detected_at: DateTime(),
    last_observed_at: DateTime(),
    resolved_at: Nullable(DateTime()),
    resolution_summary: Nullable(Type.String()),
    ...Timestamps,
  },
  { description: 'An open question about the architecture.' },
);

export const ArchitectureUncertaintyCaseUpdate = Strict(
  'ArchitectureUncertaintyCaseUpdate',
  {
    owner_id: Type.Optional(Nullable(Uuid())),
    resolution_summary: Type.Optional(Nullable(Type.String({ minLength: 3, maxLength: 2000 }))),
    state: Type.Optional(Nullable(UncertaintyState)),
  },
  { description: 'Request to change an uncertainty case.' },
);

export const ArchitectureUncertaintyCasePage = Strict(
  'ArchitectureUncertaintyCasePage',
  {
    items: Type.Array(ArchitectureUncertaintyCaseResponse),
    open_count: Type.Integer(),
    blocking_count: Type.Integer(),
    unassigned_count: Type.Integer(),
  },
  { description: 'Uncertainty cases with counts.' },
);

export const UncertaintyCaseListQuery = Type.Object(
  {
    state: Type.Optional(
      LiteralUnion(UNCERTAINTY_STATES, { description: 'Only cases in this state.' }),
    ),
    repository_id: Type.Optional(Uuid({ description: 'Only cases about this repository.' })),
    blocking: Type.Optional(
      Type.Boolean({ description: 'Only blocking (true) or only non-blocking (false) cases.' }),
    ),
    ...linkPageFields(),
  },
  { additionalProperties: false },
);

export const UncertaintyCaseParams = ResourceParams('case_id', 'The uncertainty case.');

// The static types of the schemas that code elsewhere names.
export type ArchitectureUncertaintyCaseResponse = Static<
  typeof ArchitectureUncertaintyCaseResponse
>;
