/** Architecture decisions: proposals, transitions, success criteria and their verification. */
import { Type, type Static } from '@sinclair/typebox';
import {
  CRITERION_STATUSES,
  DECISION_STATES,
  SUCCESS_CHECK_KINDS,
  VERIFICATION_OUTCOMES,
} from '../../domain/contract/values';
import {
  DateTime,
  LiteralUnion,
  Nullable,
  linkPageFields,
  Strict,
  Uuid,
  Version,
  NamedUnion,
} from '../schema-kit';
import {
  ItemsPage,
  ResourceParams,
  WorkspaceRecord,
  Timestamps,
  ApprovalRecord,
  Rationale,
} from '../schema-parts';
import { UncertaintySignal } from '../uncertainty/schemas';

export const ArchitectureDecisionState = NamedUnion(
  'ArchitectureDecisionState',
  DECISION_STATES,
  'Lifecycle state of an architecture decision.',
);

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

const criterionId = () =>
  Type.String({ minLength: 1, maxLength: 100, description: 'Criterion id, unique per decision.' });
const criterionDescription = () => Type.String({ minLength: 1, maxLength: 2000 });

export const DecisionSuccessCriterionInput = Strict(
  'DecisionSuccessCriterionInput',
  { id: criterionId(), description: criterionDescription(), check: DecisionSuccessCheck },
  { description: 'A success criterion as proposed.' },
);

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

export const ArchitectureDecisionOption = Strict(
  'ArchitectureDecisionOption',
  {
    id: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'Option id within the decision.',
    }),
    title: Type.String({ minLength: 1, maxLength: 500 }),
    description: Type.String({ minLength: 1, maxLength: 4000 }),
    benefits: Type.Optional(Type.Array(Type.String(), { maxItems: 20 })),
    tradeoffs: Type.Optional(Type.Array(Type.String(), { maxItems: 20 })),
    evidence_ids: Type.Optional(Type.Array(Uuid())),
  },
  { description: 'One option considered by a decision.' },
);

export const ArchitectureDecisionProposal = Strict(
  'ArchitectureDecisionProposal',
  {
    title: Type.String({ minLength: 3, maxLength: 500 }),
    question: Type.String({ minLength: 3, maxLength: 1000, description: 'What is being decided.' }),
    context: Type.String({ minLength: 3, maxLength: 6000 }),
    snapshot_id: Uuid({ description: 'Architecture snapshot the decision is based on.' }),
    owner_id: Uuid(),
    options: Type.Array(ArchitectureDecisionOption, { minItems: 2, maxItems: 20 }),
    evidence_ids: Type.Array(Uuid(), { minItems: 1 }),
    uncertainties: Type.Array(UncertaintySignal),
    success_criteria: Type.Array(DecisionSuccessCriterionInput, { minItems: 1, maxItems: 50 }),
    affected_entity_keys: Type.Optional(Type.Array(Type.String(), { maxItems: 500 })),
    affected_relationship_keys: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
    candidate_change_id: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    supersedes_id: Type.Optional(Nullable(Uuid({ description: 'Decision this one replaces.' }))),
  },
  { description: 'Request to propose an architecture decision.' },
);

export const ArchitectureDecisionApprovalResponse = ApprovalRecord(
  'ArchitectureDecisionApprovalResponse',
  'decision',
);

export const ArchitectureDecisionResponse = Strict(
  'ArchitectureDecisionResponse',
  {
    ...WorkspaceRecord,
    repository_id: Nullable(Uuid()),
    snapshot_id: Uuid(),
    candidate_change_id: Nullable(Type.String()),
    title: Type.String(),
    question: Type.String(),
    context: Type.String(),
    status: ArchitectureDecisionState,
    owner_id: Uuid(),
    created_by: Uuid(),
    options: Type.Array(ArchitectureDecisionOption),
    selected_option_id: Nullable(Type.String()),
    evidence_ids: Type.Array(Uuid()),
    uncertainties: Type.Array(UncertaintySignal),
    affected_entity_keys: Type.Array(Type.String()),
    affected_relationship_keys: Type.Array(Type.String()),
    success_criteria: Type.Array(DecisionSuccessCriterion),
    latest_rationale: Nullable(Type.String()),
    approved_by: Nullable(Uuid()),
    approved_at: Nullable(DateTime()),
    implemented_at: Nullable(DateTime()),
    verified_at: Nullable(DateTime()),
    superseded_at: Nullable(DateTime()),
    verification_snapshot_id: Nullable(Uuid()),
    verification_result: Nullable(DecisionOutcomeVerification),
    supersedes_id: Nullable(Uuid()),
    version: Version({ description: 'Revision counter.' }),
    approvals: Type.Array(ArchitectureDecisionApprovalResponse),
    ...Timestamps,
  },
  { description: 'An architecture decision.' },
);

export const ArchitectureDecisionTransition = Strict(
  'ArchitectureDecisionTransition',
  {
    status: ArchitectureDecisionState,
    rationale: Rationale('Why the move is made.'),
    selected_option_id: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  },
  { description: 'Request to move a decision to another state.' },
);

export const ArchitectureDecisionApproval = Strict(
  'ArchitectureDecisionApproval',
  {
    selected_option_id: Type.String({
      maxLength: 100,
      description: 'The option the approver approves (one of the decision options).',
    }),
    rationale: Rationale('Why it is approved.'),
  },
  { description: 'Request to approve a decision in review.' },
);

export const ArchitectureDecisionRejection = Strict(
  'ArchitectureDecisionRejection',
  {
    rationale: Rationale('Why it is rejected.'),
  },
  { description: 'Request to reject a decision in review.' },
);

export const ArchitectureDecisionBriefResponse = Strict(
  'ArchitectureDecisionBriefResponse',
  {
    decision_id: Uuid(),
    filename: Type.String(),
    markdown: Type.String({ description: 'The brief as Markdown.' }),
    generated_at: DateTime(),
  },
  { description: 'A Markdown brief of a decision.' },
);

export const ArchitectureDecisionPage = ItemsPage(
  'ArchitectureDecisionPage',
  ArchitectureDecisionResponse,
);

export const DecisionParams = ResourceParams('decision_id', 'The decision.');

export const DecisionListQuery = Type.Object(
  {
    status: Type.Optional(
      LiteralUnion(DECISION_STATES, { description: 'Only decisions in this state.' }),
    ),
    repository_id: Type.Optional(Uuid({ description: 'Only decisions about this repository.' })),
    ...linkPageFields(),
  },
  { additionalProperties: false },
);

// The static types of the schemas that code elsewhere names.
export type ArchitectureDecisionProposal = Static<typeof ArchitectureDecisionProposal>;
