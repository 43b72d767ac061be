/** Architecture changes, change gates, gate policies and change sets. */
import { Type, type Static } from '@sinclair/typebox';
import { GATE_CONDITIONS } from '../../domain/changes/gate';
import {
  ARCHITECTURE_CHANGE_TYPES,
  CHANGE_CONSEQUENCES,
  CHANGE_GATE_OUTCOMES,
  CHANGE_SET_STATES,
  CONTROL_SEVERITIES,
} from '../../domain/contract/values';
import {
  DateTime,
  Decimal,
  FreeObject,
  LiteralUnion,
  Nullable,
  Strict,
  Uuid,
  ExpectedVersion,
} from '../schema-kit';
import { ItemsPage, ResourceParams, WorkspaceRecord, Timestamps } from '../schema-parts';

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

export const ArchitectureChangeGate = Strict(
  'ArchitectureChangeGate',
  {
    outcome: LiteralUnion(CHANGE_GATE_OUTCOMES, { description: 'Gate decision.' }),
    reasons: Type.Array(Type.String(), { description: 'Why the gate gave this outcome.' }),
    policy_enabled: Type.Boolean({ description: 'Whether a gate policy applied.' }),
  },
  { description: 'Outcome of the change gate.' },
);

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

export const ArchitectureChangeSetResponse = Strict(
  'ArchitectureChangeSetResponse',
  {
    ...WorkspaceRecord,
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
    closed_at: Nullable(
      DateTime({
        description:
          'Beyond the spec: when the pull request (GitLab: merge request) of an observed set closed, merged or not; null while it is open and for every other set. A set is closed, not deleted: it keeps its last head, gate and changes, and an audit started after a reopening opens it again.',
      }),
    ),
    closed_reason: Nullable(
      LiteralUnion(['merged', 'closed'] as const, {
        description: 'Beyond the spec: `merged` or `closed` (without merging) while closed.',
      }),
    ),
    occurred_at: DateTime(),
    ...Timestamps,
  },
  { description: 'A set of architecture changes, proposed or observed.' },
);

export const ArchitectureChangeSetPage = ItemsPage(
  'ArchitectureChangeSetPage',
  ArchitectureChangeSetResponse,
);

export const ArchitectureChangeSetReconcile = Strict(
  'ArchitectureChangeSetReconcile',
  { observed_change_set_id: Type.Optional(Nullable(Uuid())) },
  { description: 'Request to reconcile a candidate change set with an observed one.' },
);

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

// Ours: the gate policy of a workspace, and the gate of one audit.

const kindList = (description: string) =>
  Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: 50,
      uniqueItems: true,
      description,
    }),
  );

export const GatePolicyRule = Strict(
  'GatePolicyRule',
  {
    id: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[a-z0-9][a-z0-9_.-]*$',
      description: 'Stable rule id (lower case), named in the gate reasons it produces.',
    }),
    description: Type.String({ minLength: 1, maxLength: 500 }),
    condition: LiteralUnion(GATE_CONDITIONS, {
      description:
        '`change`: the change items the match fields select; `service_cycle_introduced`: an added relationship closes a cycle of service calls the previous snapshot did not have; `shared_datastore_new_client`: a service newly connects to a datastore, queue or bucket another service already used; `control_failure_introduced`: a control at or above `min_severity` fails now and did not before (an active control exception excuses it).',
    }),
    consequence: LiteralUnion(['review', 'blocked'] as const, {
      description: 'What a match does to the gate.',
    }),
    change_types: Type.Optional(
      Type.Array(LiteralUnion(ARCHITECTURE_CHANGE_TYPES), {
        minItems: 1,
        uniqueItems: true,
        description: '`change` rules: the change types that match (default: all).',
      }),
    ),
    kinds: kindList('`change` rules: the entity or relationship kinds that match (default: all).'),
    source_kinds: kindList('`change` rules on relationships: kinds of the source entity.'),
    target_kinds: kindList('`change` rules on relationships: kinds of the target entity.'),
    attributes: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 100 }),
        Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()]),
        { maxProperties: 20, description: '`change` rules: attribute values the item must have.' },
      ),
    ),
    min_confidence: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: '`change` rules: only items at or above this confidence.',
      }),
    ),
    min_severity: Type.Optional(
      LiteralUnion(CONTROL_SEVERITIES, {
        description: '`control_failure_introduced`: the lowest severity that counts.',
      }),
    ),
  },
  { description: 'One rule of a gate policy.' },
);

export const policyFields = {
  enabled: Type.Boolean({
    description: 'When false every change is informational and the gate passes on evidence alone.',
  }),
  confidence_floor: Type.Number({
    minimum: 0,
    maximum: 1,
    description:
      'A reviewed or blocked change whose confidence is below this floor makes the gate insufficient_evidence.',
  }),
  rules: Type.Array(GatePolicyRule, { maxItems: 100 }),
};

export const GatePolicyUpdate = Strict(
  'GatePolicyUpdate',
  {
    ...policyFields,
    expected_version: ExpectedVersion(
      'The policy version the client last read (0 for the default policy).',
    ),
  },
  { description: 'Request to replace the workspace gate policy (every field).' },
);

export const GatePolicyReset = Strict(
  'GatePolicyReset',
  {
    expected_version: ExpectedVersion(
      'The policy version the client last read (0 for the default policy).',
    ),
  },
  { description: 'Request to put the built-in default gate policy back in effect.' },
);

export const GatePolicyResponse = Strict(
  'GatePolicy',
  {
    workspace_id: Uuid(),
    ...policyFields,
    version: Type.Integer({
      minimum: 0,
      description: 'Revision counter; 0 while the workspace runs on the default policy.',
    }),
    is_default: Type.Boolean({
      description:
        'Whether the policy in effect is the built-in default (never replaced, or reset to it).',
    }),
    missing_default_rules: Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 100,
      description:
        'Ids of built-in default rules this policy does not contain (a replacement states every rule; resetGatePolicy restores the defaults).',
    }),
    updated_by: Nullable(Uuid()),
    updated_at: Nullable(DateTime()),
  },
  { description: 'The change gate policy of a workspace.' },
);

export const GateReason = Strict(
  'GateReason',
  {
    code: Type.String({
      description: 'review, blocked, insufficient_evidence, or allowed (a decision covered it).',
    }),
    text: Type.String(),
    rule_id: Nullable(Type.String()),
    key: Nullable(Type.String({ description: 'The change item or control the reason is about.' })),
    evidence_ids: Type.Array(Type.String()),
  },
  { description: 'One reason of a gate, with the rule and the evidence it rests on.' },
);

export const AuditGateResponse = Strict(
  'AuditGateResponse',
  {
    audit_id: Uuid(),
    repository_id: Nullable(Uuid()),
    current_snapshot_id: Uuid(),
    previous_snapshot_id: Nullable(Uuid()),
    outcome: LiteralUnion(CHANGE_GATE_OUTCOMES),
    policy_enabled: Type.Boolean(),
    policy_version: Type.Integer({ minimum: 0 }),
    coverage_comparable: Type.Boolean(),
    reasons: Type.Array(GateReason),
    changes: Type.Array(ArchitectureChangeItem),
    counts: Type.Record(Type.String(), Type.Integer()),
    evaluated_at: DateTime(),
  },
  {
    description:
      "The gate an audit's changes stage computed against the previous completed snapshot of the same repository and branch.",
  },
);

// Ours: declaring a candidate change set.

export const ChangeSetCreate = Strict(
  'ChangeSetCreate',
  {
    change_key: Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Identifies the change (e.g. `pr-123`, a plan id); unique per repository among candidates. A decision whose candidate_change_id equals it allows the change in the gate.',
    }),
    source_ref: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Where the change comes from (a branch, a pull request URL, a plan file).',
    }),
    trigger: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'What declared it: pull_request, iac_plan, manual, ...',
    }),
    reason: Type.String({ minLength: 1, maxLength: 4000 }),
    baseline_snapshot_id: Type.Optional(
      Nullable(
        Uuid({
          description: "The snapshot the change starts from (default: the repository's latest).",
        }),
      ),
    ),
    changes: Type.Array(NormalizedArchitectureChange, { minItems: 1, maxItems: 5000 }),
    candidate_payload: Type.Optional(Nullable(FreeObject())),
  },
  { description: 'A candidate change set: declared changes in canonical form.' },
);

export const ChangeSetParams = ResourceParams('change_set_id', 'The change set.');

// The static types of the schemas that code elsewhere names.
export type ArchitectureChangeSetResponse = Static<typeof ArchitectureChangeSetResponse>;
