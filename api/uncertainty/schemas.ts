/** Spec 2.7: uncertainty cases. */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, Strict, Uuid } from '../schema-kit';
import { ClaimAlternative, UncertaintyReason, UncertaintyScope, UncertaintyState } from '../schemas/spec/gaps';

export const ArchitectureUncertaintyCaseResponse = Strict(
  'ArchitectureUncertaintyCaseResponse',
  {
    id: Uuid(),
    workspace_id: Uuid(),
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
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { description: 'An open question about the architecture.' },
);
export type ArchitectureUncertaintyCaseResponse = Static<
  typeof ArchitectureUncertaintyCaseResponse
>;

export const ArchitectureUncertaintyCaseUpdate = Strict(
  'ArchitectureUncertaintyCaseUpdate',
  {
    owner_id: Type.Optional(Nullable(Uuid())),
    resolution_summary: Type.Optional(Nullable(Type.String({ minLength: 3, maxLength: 2000 }))),
    state: Type.Optional(Nullable(UncertaintyState)),
  },
  { description: 'Request to change an uncertainty case.' },
);
export type ArchitectureUncertaintyCaseUpdate = Static<typeof ArchitectureUncertaintyCaseUpdate>;

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
export type ArchitectureUncertaintyCasePage = Static<typeof ArchitectureUncertaintyCasePage>;
