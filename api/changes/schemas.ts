/** Architecture changes, change gates and change sets (the specification's schemas; no operation uses them yet). */
import { Type, type Static } from '@sinclair/typebox';
import {
  ARCHITECTURE_CHANGE_TYPES,
  CHANGE_CONSEQUENCES,
  CHANGE_GATE_OUTCOMES,
  CHANGE_SET_STATES,
} from '../../domain/contract/values';
import {
  DateTime,
  Decimal,
  FreeObject,
  ItemsPage,
  LiteralUnion,
  Nullable,
  Strict,
  Uuid,
} from '../schema-kit';

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

export const ArchitectureChangeGate = Strict(
  'ArchitectureChangeGate',
  {
    outcome: LiteralUnion(CHANGE_GATE_OUTCOMES, { description: 'Gate decision.' }),
    reasons: Type.Array(Type.String(), { description: 'Why the gate gave this outcome.' }),
    policy_enabled: Type.Boolean({ description: 'Whether a gate policy applied.' }),
  },
  { description: 'Outcome of the change gate.' },
);
export type ArchitectureChangeGate = Static<typeof ArchitectureChangeGate>;

export const ArchitectureChangeItem = Strict(
  'ArchitectureChangeItem',
  {
    change_type: LiteralUnion(ARCHITECTURE_CHANGE_TYPES),
    key: Type.String({ description: 'Canonical key of the entity or relationship.' }),
    label: Type.String(),
    kind: Type.String(),
    consequence: LiteralUnion(CHANGE_CONSEQUENCES, { description: 'Effect on the gate.' }),
    change_fields: Type.Optional(Type.Array(Type.String(), { description: 'Changed fields.' })),
    evidence_ids: Type.Optional(Type.Array(Type.String())),
    owner_hint: Type.Optional(Nullable(Type.String())),
    source_key: Type.Optional(Nullable(Type.String())),
    target_key: Type.Optional(Nullable(Type.String())),
  },
  { description: 'One change between two snapshots.' },
);
export type ArchitectureChangeItem = Static<typeof ArchitectureChangeItem>;

export const ArchitectureChangeResponse = Strict(
  'ArchitectureChangeResponse',
  {
    repository_id: Uuid(),
    coverage_comparable: Type.Boolean({
      description: 'Whether both snapshots saw the same sources.',
    }),
    current_source_coverage: Decimal({ description: 'Source coverage of the current snapshot.' }),
    current_sources: Type.Array(Type.String()),
    previous_sources: Type.Array(Type.String()),
    changes: Type.Array(ArchitectureChangeItem),
    gate: ArchitectureChangeGate,
    current_audit_id: Type.Optional(Nullable(Uuid())),
    current_snapshot_id: Type.Optional(Nullable(Uuid())),
    previous_audit_id: Type.Optional(Nullable(Uuid())),
    previous_snapshot_id: Type.Optional(Nullable(Uuid())),
    current_generated_at: Type.Optional(Nullable(DateTime())),
    previous_generated_at: Type.Optional(Nullable(DateTime())),
  },
  { description: 'Changes between the previous and the current snapshot of a repository.' },
);
export type ArchitectureChangeResponse = Static<typeof ArchitectureChangeResponse>;

export const ArchitectureChangeSetResponse = Strict(
  'ArchitectureChangeSetResponse',
  {
    id: Uuid(),
    workspace_id: Uuid(),
    repository_id: Uuid(),
    state: LiteralUnion(CHANGE_SET_STATES, {
      description: 'Proposed (candidate) or seen (observed).',
    }),
    change_key: Type.String(),
    source_ref: Type.String(),
    trigger: Type.String(),
    reason: Type.String(),
    actor_id: Nullable(Uuid()),
    baseline_snapshot_id: Nullable(Uuid()),
    result_snapshot_id: Nullable(Uuid()),
    reconciled_change_set_id: Nullable(
      Uuid({ description: 'Observed change set a candidate was reconciled with.' }),
    ),
    normalized_changes: Type.Array(NormalizedArchitectureChange),
    candidate_payload: Nullable(FreeObject()),
    impact_result: Nullable(FreeObject()),
    gate_result: Nullable(ArchitectureChangeGate),
    accuracy: Nullable(ChangeSetAccuracy),
    occurred_at: DateTime(),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { description: 'A set of architecture changes, proposed or observed.' },
);
export type ArchitectureChangeSetResponse = Static<typeof ArchitectureChangeSetResponse>;

export const ArchitectureChangeSetPage = ItemsPage(
  'ArchitectureChangeSetPage',
  ArchitectureChangeSetResponse,
);
export type ArchitectureChangeSetPage = Static<typeof ArchitectureChangeSetPage>;

export const ArchitectureChangeSetReconcile = Strict(
  'ArchitectureChangeSetReconcile',
  { observed_change_set_id: Type.Optional(Nullable(Uuid())) },
  { description: 'Request to reconcile a candidate change set with an observed one.' },
);
export type ArchitectureChangeSetReconcile = Static<typeof ArchitectureChangeSetReconcile>;

export const ArchitectureDelta = Strict(
  'ArchitectureDelta',
  {
    subject: Type.String(),
    key: Type.String(),
    name: Type.String(),
    operation: Type.String(),
    evidence_ids: Type.Optional(Type.Array(Type.String())),
    source_key: Type.Optional(Nullable(Type.String())),
    target_key: Type.Optional(Nullable(Type.String())),
  },
  { description: 'One architecture difference between two audits.' },
);
export type ArchitectureDelta = Static<typeof ArchitectureDelta>;
