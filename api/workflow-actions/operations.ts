/**
 * Workflow actions: request a privileged action (starts a WorkflowActionWorkflow
 * `workflow-action-<id>` that waits for approval or expiry), read, list, approve or reject.
 */
import type { Knex } from 'knex';
import { findAudit } from '../../db/audits';
import { findRepository } from '../../db/repositories';
import {
  deleteUnstartedWorkflowAction,
  findWorkflowAction,
  insertWorkflowAction,
  workflowActionsQuery,
  type WorkflowActionRow,
} from '../../db/workflow-actions';
import { findMember } from '../../db/workspaces';
import { policyProblems, type GatePolicy } from '../../domain/changes/gate';
import { workflowActionWorkflowId, WORKFLOW_TYPES } from '../../domain/contract/workflows';
import {
  checkDecision,
  targetProblems,
  type WorkflowActionTarget,
} from '../../domain/workflow-actions/rules';
import { decideUpdate, type WorkflowActionWorkflowInput } from '../../workflows/workflow-actions';
import { ApprovalCreate } from '../remediations/schemas';
import { problems, type FieldError } from '../errors';
import { applyThroughWorkflow, vote, approvalActor, approvalRules } from '../registry/approvals';
import {
  defineOperation,
  type OperationContext,
  created,
  ok,
  operationGroup,
  route,
} from '../registry/operation';
import { WorkspaceParams } from '../schema-kit';
import { isoOrNull } from '../shared';
import {
  WorkflowActionCreate,
  WorkflowActionListQuery,
  WorkflowActionPage,
  WorkflowActionParams,
  WorkflowActionResponse,
} from './schemas';
import { createWorkflowOwned } from '../registry/workflow-owned';
import { found, listOperation } from '../registry/parts';
import { columns, isoColumns } from '../registry/columns';

function presentAction(row: WorkflowActionRow) {
  return {
    ...columns(row, ['id', 'workspace_id', 'kind']),
    target: row.target as WorkflowActionResponse['target'],
    ...columns(row, ['reason', 'status', 'requested_by', 'decided_by', 'decided_by_role']),
    ...columns(row, ['decided_by_scope', 'decided_policy_version']),
    decided_at: isoOrNull(row.decided_at),
    decision_rationale: row.decision_rationale,
    ...isoColumns(row, ['expires_at', 'executed_at']),
    ...columns(row, ['outcome', 'error_code', 'workflow_id']),
    ...isoColumns(row, ['created_at', 'updated_at']),
  };
}

async function loadAction(db: Knex, workspaceId: string, id: string) {
  return found(findWorkflowAction(db, workspaceId, id), `Workflow action ${id}`);
}

/** Problems of a request's target beyond its schema: the fields its kind takes, what they name. */
async function checkTarget(
  db: Knex,
  workspaceId: string,
  body: WorkflowActionCreate,
): Promise<void> {
  const target = body.target as WorkflowActionTarget;
  const errors: FieldError[] = targetProblems(body.kind, target).map((p) => ({
    in: 'body',
    ...p,
  }));
  // Fields that do not belong are named alone: what they point at does not matter.
  if (errors.length) throw problems.validationFailed(errors);
  const missing = (path: string, what: string) =>
    errors.push({ in: 'body', path, message: `no such ${what} in this workspace` });
  if (target.repository_id && !(await findRepository(db, workspaceId, target.repository_id)))
    missing('/target/repository_id', 'repository');
  if (target.audit_id && !(await findAudit(db, workspaceId, target.audit_id)))
    missing('/target/audit_id', 'audit');
  if (target.member_id && !(await findMember(db, workspaceId, target.member_id)))
    missing('/target/member_id', 'member');
  if (target.gate_policy)
    for (const p of policyProblems(target.gate_policy as unknown as GatePolicy))
      errors.push({ in: 'body', path: `/target/gate_policy${p.pointer}`, message: p.message });
  if (errors.length) throw problems.validationFailed(errors);
}

async function decide(
  ctx: OperationContext<{ workspace_id: string; action_id: string }, undefined, ApprovalCreate>,
  outcome: 'approved' | 'rejected',
) {
  const { db, params, principal } = ctx;
  const check = (row: WorkflowActionRow) =>
    checkDecision(
      { status: row.status, requestedBy: row.requested_by, expiresAt: row.expires_at },
      { outcome, actorId: principal.memberId },
      new Date(),
    );
  const row = await applyThroughWorkflow(ctx.services, 'workflow_action', {
    load: () => loadAction(db, params.workspace_id, params.action_id),
    check,
    update: decideUpdate,
    arg: {
      outcome,
      rationale: ctx.body.rationale,
      actor: await approvalActor(db, principal, ctx.requestId),
    },
    // A workflow that ended left its action decided, expired or executed.
    ended: (now) => check(now) ?? { code: 'already_decided', current: now.status },
    otherRefusal: () => problems.internal(),
    resource: { action_id: params.action_id },
  });
  return presentAction(row);
}

const WORKFLOW_ACTIONS = operationGroup('Workflow actions');

export const listWorkflowActions = listOperation({
  operationId: 'listWorkflowActions',
  ...route.get('/v1/workspaces/{workspace_id}/workflow-actions'),
  summary: 'List workflow actions',
  description:
    'Newest first; filter by state or kind (`status=pending` is what waits for approval).',
  ...WORKFLOW_ACTIONS.scope('workflow_actions:read'),
  params: WorkspaceParams,
  query: WorkflowActionListQuery,
  success: ok('A page of workflow actions.', WorkflowActionPage),
  rows: ({ db, params, query }) =>
    workflowActionsQuery(db, params.workspace_id, { status: query.status, kind: query.kind }),
  present: presentAction,
});

export const requestWorkflowAction = defineOperation({
  operationId: 'requestWorkflowAction',
  ...route.post('/v1/workspaces/{workspace_id}/workflow-actions'),
  summary: 'Request a privileged action',
  description:
    'The action waits, `pending`, for another member holding workflow_actions:approve (the requester cannot approve it) until `expires_at` (WORKFLOW_ACTION_TTL_HOURS after the request); then it expires and never executes. Once approved it executes exactly once in its `WorkflowActionWorkflow` (`workflow-action-<id>`) and records the outcome. The target takes the fields of its kind only: delete_repository `repository_id` (the repository and its history: findings, remediations, uncertainty cases and finished audits not cited by a decision); purge_attachments `audit_id` (every available attachment of the audit, before its retention); deep_review_audit `repository_id` and optional `branch_ref` (starts an audit with deep_review); change_gate_policy `gate_policy` (replaces the gate policy); revoke_member_tokens `member_id` (revokes every live token of the member). An unknown kind or a target field that does not apply is 400 validation_failed naming the field.',
  ...WORKFLOW_ACTIONS.scope('workflow_actions:request'),
  params: WorkspaceParams,
  body: WorkflowActionCreate,
  idempotent: true,
  errors: [503],
  success: created('The pending action.', WorkflowActionResponse),
  handler: async (ctx) => {
    const { services, db, params, body, principal } = ctx;
    await checkTarget(db, params.workspace_id, body);
    const row = await createWorkflowOwned(ctx, {
      resource: 'workflow_action',
      collection: 'workflow-actions',
      find: findWorkflowAction,
      insert: (trx, id) =>
        insertWorkflowAction(trx, {
          id,
          workspace_id: params.workspace_id,
          kind: body.kind,
          target: body.target as WorkflowActionTarget,
          reason: body.reason,
          requested_by: principal.memberId,
          workflow_id: workflowActionWorkflowId(id),
          ttlSeconds: services.config.workflowActionTtlSeconds,
        }),
      recorded: (created) => ({
        action: 'workflow_action.requested',
        details: {
          kind: body.kind,
          target: body.target,
          reason: body.reason,
          expires_at: created.expires_at.toISOString(),
        },
      }),
      needsStart: (created) => created.status === 'pending',
      workflow: (created) => {
        const input: WorkflowActionWorkflowInput = {
          actionId: created.id,
          requestedBy: created.requested_by,
          expiresAt: created.expires_at.toISOString(),
        };
        return { type: WORKFLOW_TYPES.workflowAction, args: [input] };
      },
      discard: deleteUnstartedWorkflowAction,
      discardDetails: (created) => ({ kind: created.kind }),
      unavailable:
        'The workflow action could not be started, so the request was discarded. Request it again later.',
    });
    return presentAction(row);
  },
});

export const getWorkflowAction = defineOperation({
  operationId: 'getWorkflowAction',
  ...route.get('/v1/workspaces/{workspace_id}/workflow-actions/{action_id}'),
  summary: 'Get a workflow action',
  ...WORKFLOW_ACTIONS.scope('workflow_actions:read'),
  params: WorkflowActionParams,
  success: ok('The workflow action.', WorkflowActionResponse),
  handler: async ({ db, params }) =>
    presentAction(await loadAction(db, params.workspace_id, params.action_id)),
});

const WORKFLOW_ACTION = {
  path: '/v1/workspaces/{workspace_id}/workflow-actions/{action_id}',
  params: WorkflowActionParams,
};

export const approveWorkflowAction = defineOperation({
  operationId: 'approveWorkflowAction',
  ...vote('workflow_action', WORKFLOW_ACTIONS, WORKFLOW_ACTION, 'approval'),
  summary: 'Approve a workflow action',
  description: `Approves a pending action; it then executes once (read it with getWorkflowAction until \`executed\` or \`failed\`). ${approvalRules('workflow_action')} An expired action is 409 \`approval_expired\`.`,
  body: ApprovalCreate,
  success: ok('The approved action.', WorkflowActionResponse),
  handler: async (ctx) => decide(ctx, 'approved'),
});

export const rejectWorkflowAction = defineOperation({
  operationId: 'rejectWorkflowAction',
  ...vote('workflow_action', WORKFLOW_ACTIONS, WORKFLOW_ACTION, 'rejection'),
  summary: 'Reject a workflow action',
  description:
    'Rejects a pending action, which then never executes. The requester may reject (withdraw) their own request. An expired action is 409 `approval_expired`; one already decided 409 `already_decided`.',
  body: ApprovalCreate,
  success: ok('The rejected action.', WorkflowActionResponse),
  handler: async (ctx) => decide(ctx, 'rejected'),
});
