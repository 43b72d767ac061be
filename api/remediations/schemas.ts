/** Remediations: plans for findings, their approvals and verification by a later audit. */
import { Type, type Static } from '@sinclair/typebox';
import {
  REMEDIATION_EFFORTS,
  REMEDIATION_RISKS,
  REMEDIATION_SOURCES,
  REMEDIATION_STATES,
} from '../../domain/contract/values';
import {
  DateTime,
  LiteralUnion,
  Nullable,
  pageFields,
  Strict,
  Uuid,
  Version,
  NamedUnion,
} from '../schema-kit';
import {
  CursorPage,
  ResourceParams,
  WorkspaceRecord,
  Timestamps,
  ApprovalRecord,
  Rationale,
} from '../schema-parts';

export const RemediationState = NamedUnion(
  'RemediationState',
  REMEDIATION_STATES,
  'Lifecycle state of a remediation.',
);

export const RemediationStep = Strict(
  'RemediationStep',
  {
    title: Type.String({ minLength: 1, maxLength: 500 }),
    detail: Type.String({ minLength: 1, maxLength: 4000 }),
  },
  { description: 'One ordered step of a remediation plan.' },
);

export const RemediationPlan = Strict(
  'RemediationPlan',
  {
    summary: Type.String({ minLength: 3, maxLength: 4000, description: 'What the fix achieves.' }),
    steps: Type.Array(RemediationStep, { minItems: 1, maxItems: 50 }),
    affected_entity_keys: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
        maxItems: 500,
        uniqueItems: true,
        description:
          'Canonical keys of the entities the fix changes (default: the entities of the findings).',
      }),
    ),
    risk: LiteralUnion(REMEDIATION_RISKS, { description: 'Risk of leaving it unfixed.' }),
    effort: LiteralUnion(REMEDIATION_EFFORTS, { description: 'Expected size of the work.' }),
  },
  { description: 'A remediation plan written by a person.' },
);

export const RemediationCreate = Strict(
  'RemediationCreate',
  {
    finding_ids: Type.Array(Uuid(), {
      minItems: 1,
      maxItems: 50,
      uniqueItems: true,
      description: 'The findings the plan fixes, all of one repository (or of one upload audit).',
    }),
    title: Type.Optional(Type.String({ minLength: 3, maxLength: 500 })),
    plan: Type.Optional(RemediationPlan),
  },
  {
    description:
      'Request to plan the fix of findings. Without `plan` the remediation agent writes it: from a template per control, then (when a model is configured) rewritten by the model.',
  },
);

export const ApprovalCreate = Strict(
  'ApprovalCreate',
  { rationale: Rationale('Why it is approved (kept with the approval).') },
  { description: 'Request to approve or reject a remediation or a workflow action.' },
);

export const RemediationTransition = Strict(
  'RemediationTransition',
  {
    status: LiteralUnion(['in_progress', 'done'] as const, {
      description:
        'in_progress (from approved or not_verified), done (from in_progress). Rejecting is rejectRemediation.',
    }),
    rationale: Rationale('Why the move is made.'),
  },
  { description: 'Request to move a remediation.' },
);

export const RemediationApprovalResponse = ApprovalRecord(
  'RemediationApprovalResponse',
  'remediation',
);

export const RemediationVerification = Strict(
  'RemediationVerification',
  {
    audit_id: Uuid({ description: 'The completed audit the findings were checked against.' }),
    outcome: LiteralUnion(['verified', 'not_verified'] as const),
    resolved_finding_ids: Type.Array(Uuid()),
    open_finding_ids: Type.Array(Uuid(), { description: 'Findings that audit still observed.' }),
    evaluated_at: DateTime(),
  },
  { description: 'Result of checking a done remediation against a later audit.' },
);

export const RemediationResponse = Strict(
  'RemediationResponse',
  {
    ...WorkspaceRecord,
    repository_id: Nullable(Uuid({ description: 'Null for findings of an upload audit.' })),
    audit_id: Nullable(
      Uuid({ description: 'The audit that last observed the findings when the plan was made.' }),
    ),
    finding_ids: Type.Array(Uuid()),
    title: Type.String(),
    summary: Type.String(),
    steps: Type.Array(RemediationStep),
    affected_entity_keys: Type.Array(Type.String()),
    risk: LiteralUnion(REMEDIATION_RISKS),
    effort: LiteralUnion(REMEDIATION_EFFORTS),
    source: LiteralUnion(REMEDIATION_SOURCES, {
      description: 'Who wrote the plan: a person, a template, or the model.',
    }),
    agent_run_id: Nullable(Uuid({ description: 'The model run that wrote the plan.' })),
    status: RemediationState,
    created_by: Uuid(),
    approved_by: Nullable(Uuid()),
    approved_at: Nullable(DateTime()),
    rejected_at: Nullable(DateTime()),
    started_at: Nullable(DateTime()),
    done_at: Nullable(DateTime()),
    verified_at: Nullable(DateTime()),
    verification: Nullable(RemediationVerification),
    latest_rationale: Nullable(Type.String()),
    approvals: Type.Array(RemediationApprovalResponse),
    workflow_id: Type.String({ description: 'The RemediationWorkflow, `remediation-<id>`.' }),
    version: Version({ description: 'Revision counter.' }),
    ...Timestamps,
  },
  { description: 'A plan to fix one or more findings, and where it stands.' },
);

export const RemediationPage = CursorPage('RemediationPage', RemediationResponse);

export const RemediationParams = ResourceParams('remediation_id', 'The remediation.');

export const RemediationListQuery = Type.Object(
  {
    status: Type.Optional(
      LiteralUnion(REMEDIATION_STATES, { description: 'Only remediations in this state.' }),
    ),
    repository_id: Type.Optional(Uuid({ description: 'Only remediations of this repository.' })),
    finding_id: Type.Optional(Uuid({ description: 'Only remediations that fix this finding.' })),
    ...pageFields(),
  },
  { additionalProperties: false },
);

// The static types of the schemas that code elsewhere names.
export type ApprovalCreate = Static<typeof ApprovalCreate>;
