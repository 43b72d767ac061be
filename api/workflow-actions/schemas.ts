/** Workflow actions: privileged requests that wait for a second member, then execute once. */
import { Type, type Static } from '@sinclair/typebox';
import { WORKFLOW_ACTION_KINDS, WORKFLOW_ACTION_STATES } from '../../domain/contract/values';
import { policyFields } from '../changes/schemas';
import {
  DateTime,
  FreeObject,
  LiteralUnion,
  Nullable,
  pageFields,
  Strict,
  Uuid,
} from '../schema-kit';
import { CursorPage, ResourceParams, WorkspaceRecord, Timestamps } from '../schema-parts';

const kind = (description: string) => LiteralUnion(WORKFLOW_ACTION_KINDS, { description });

export const WorkflowActionGatePolicy = Strict('WorkflowActionGatePolicy', policyFields, {
  description: 'The gate policy a change_gate_policy action puts in place (as updateGatePolicy).',
});

export const WorkflowActionTarget = Strict(
  'WorkflowActionTarget',
  {
    repository_id: Type.Optional(
      Uuid({ description: 'delete_repository and deep_review_audit: the repository.' }),
    ),
    audit_id: Type.Optional(Uuid({ description: 'purge_attachments: the audit.' })),
    member_id: Type.Optional(Uuid({ description: 'revoke_member_tokens: the member.' })),
    branch_ref: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description: 'deep_review_audit: the branch (default: the repository default branch).',
      }),
    ),
    gate_policy: Type.Optional(WorkflowActionGatePolicy),
  },
  { description: 'What the action acts on; each kind takes its own fields and no others.' },
);

export const WorkflowActionCreate = Strict(
  'WorkflowActionCreate',
  {
    kind: kind(
      'delete_repository (with its history), purge_attachments (of an audit, before their retention), deep_review_audit (an audit with deep_review), change_gate_policy, revoke_member_tokens (every live token of a member).',
    ),
    target: WorkflowActionTarget,
    reason: Type.String({
      minLength: 3,
      maxLength: 2000,
      description: 'Why it is needed (shown to the approver).',
    }),
  },
  { description: 'Request a privileged action that another member must approve.' },
);

export const WorkflowActionResponse = Strict(
  'WorkflowActionResponse',
  {
    ...WorkspaceRecord,
    kind: kind('What the action does.'),
    target: WorkflowActionTarget,
    reason: Type.String(),
    status: LiteralUnion(WORKFLOW_ACTION_STATES, {
      description:
        'pending -> approved -> executed | failed; pending -> rejected; pending -> expired.',
    }),
    requested_by: Uuid(),
    decided_by: Nullable(Uuid({ description: 'Who approved or rejected it.' })),
    decided_by_role: Nullable(Type.String()),
    decided_by_scope: Nullable(
      Type.String({ description: 'The scope the decision was made under.' }),
    ),
    decided_policy_version: Nullable(
      Type.Integer({ description: 'Null: one approval decides (no versioned policy).' }),
    ),
    decided_at: Nullable(DateTime()),
    decision_rationale: Nullable(Type.String()),
    expires_at: DateTime({ description: 'Pending past this instant, it expires.' }),
    executed_at: Nullable(DateTime()),
    outcome: Nullable(FreeObject({ description: 'What the execution did.' })),
    error_code: Nullable(Type.String({ description: 'Why an approved action failed.' })),
    workflow_id: Type.String({
      description: 'The WorkflowActionWorkflow, `workflow-action-<id>`.',
    }),
    ...Timestamps,
  },
  { description: 'A privileged action, who asked, who decided, and what happened.' },
);

export const WorkflowActionPage = CursorPage('WorkflowActionPage', WorkflowActionResponse);

export const WorkflowActionParams = ResourceParams('action_id', 'The workflow action.');

export const WorkflowActionListQuery = Type.Object(
  {
    status: Type.Optional(
      LiteralUnion(WORKFLOW_ACTION_STATES, { description: 'Only actions in this state.' }),
    ),
    kind: Type.Optional(kind('Only actions of this kind.')),
    ...pageFields(),
  },
  { additionalProperties: false },
);

// The static types of the schemas that code elsewhere names.
export type WorkflowActionCreate = Static<typeof WorkflowActionCreate>;
export type WorkflowActionResponse = Static<typeof WorkflowActionResponse>;
