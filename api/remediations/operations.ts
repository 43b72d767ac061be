/**
 * Remediations: plan the fix of findings (starts a RemediationWorkflow `remediation-<id>`), read,
 * list, approve (by another member) and move through in_progress and done; a later audit
 * verifies them.
 */
import type { Knex } from 'knex';
import type { FindingRow } from '../../db/controls';
import {
  discardUnstartedRemediation,
  findingIdsOf,
  findingsByIds,
  findRemediation,
  insertRemediation,
  remediationApprovalsOf,
  remediationsQuery,
  type RemediationRow,
} from '../../db/remediations';
import { remediationWorkflowId, WORKFLOW_TYPES } from '../../domain/contract/workflows';
import {
  allowedMoves,
  checkRemediationMove,
  type RemediationRefusal,
  type RemediationStatus,
} from '../../domain/remediations/rules';
import { templatePlan, type PlanFinding } from '../../domain/remediations/templates';
import { moveUpdate, type RemediationWorkflowInput } from '../../workflows/remediations';
import { ApiError, problems, type FieldError } from '../errors';
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
import { presentRemediation } from './present';
import {
  ApprovalCreate,
  RemediationCreate,
  RemediationListQuery,
  RemediationPage,
  RemediationParams,
  RemediationResponse,
  RemediationTransition,
} from './schemas';
import { createWorkflowOwned } from '../registry/workflow-owned';
import { found, listOperation } from '../registry/parts';

async function loadRemediation(db: Knex, workspaceId: string, id: string) {
  return found(findRemediation(db, workspaceId, id), `Remediation ${id}`);
}

async function presentAll(db: Knex, rows: readonly RemediationRow[]) {
  const ids = rows.map((r) => r.id);
  const [findings, approvals] = await Promise.all([
    findingIdsOf(db, ids),
    remediationApprovalsOf(db, ids),
  ]);
  return rows.map((r) =>
    presentRemediation(r, findings.get(r.id) ?? [], approvals.get(r.id) ?? []),
  );
}

async function present(db: Knex, row: RemediationRow) {
  return (await presentAll(db, [row]))[0]!;
}

/** The findings named by a request, checked: all known, none resolved, one repository. */
async function checkFindings(
  db: Knex,
  workspaceId: string,
  ids: readonly string[],
): Promise<FindingRow[]> {
  const rows = await findingsByIds(db, workspaceId, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const unknown: FieldError[] = [];
  ids.forEach((id, i) => {
    if (!byId.has(id))
      unknown.push({ in: 'body', path: `/finding_ids/${i}`, message: `no such finding: ${id}` });
  });
  if (unknown.length)
    throw new ApiError({
      status: 422,
      code: 'unknown_finding',
      title: 'Unknown finding',
      detail: `No such finding in this workspace: ${unknown.map((e) => e.path).join(', ')}.`,
      hint: 'List the findings (listFindings) and name their ids.',
      errors: unknown,
    });
  const findings = ids.map((id) => byId.get(id)!);
  const resolved = findings.filter((f) => f.status === 'resolved');
  if (resolved.length)
    throw problems.unprocessable(
      'finding_resolved',
      `These findings are already resolved: ${resolved.map((f) => f.id).join(', ')}.`,
      'Plan remediations for findings that are still open (or accepted as a risk).',
      { finding_ids: resolved.map((f) => f.id) },
    );
  if (new Set(findings.map((f) => f.scope_key)).size > 1)
    throw problems.unprocessable(
      'findings_span_repositories',
      'A remediation covers findings of one repository (or of one upload audit).',
      'Create one remediation per repository.',
    );
  return findings;
}

/** Sends one move to the remediation's workflow and answers with the stored result. */
async function move(
  ctx: OperationContext<{ workspace_id: string; remediation_id: string }, undefined, unknown>,
  to: RemediationStatus,
  rationale: string,
) {
  const { db, params, principal } = ctx;
  const check = (row: RemediationRow) =>
    checkRemediationMove(
      { status: row.status, createdBy: row.created_by },
      { to, actorId: principal.memberId },
    );
  const row = await applyThroughWorkflow(ctx.services, 'remediation', {
    load: () => loadRemediation(db, params.workspace_id, params.remediation_id),
    check,
    update: moveUpdate,
    arg: { to, rationale, actor: await approvalActor(db, principal, ctx.requestId) },
    ended: (now) =>
      check(now) ?? {
        code: 'invalid_transition',
        current: now.status,
        allowed: allowedMoves(now.status),
      },
    otherRefusal: (r) => {
      const refused = r as Extract<RemediationRefusal, { code: 'invalid_transition' }>;
      return problems.invalidTransition('remediation', refused.current, to, refused.allowed);
    },
    resource: { remediation_id: params.remediation_id },
  });
  return present(db, row);
}

const REMEDIATIONS = operationGroup('Remediations');

export const listRemediations = listOperation({
  operationId: 'listRemediations',
  ...route.get('/v1/workspaces/{workspace_id}/remediations'),
  summary: 'List remediations',
  description:
    'Newest first; filter by state, repository or finding (the remediations of a finding).',
  ...REMEDIATIONS.scope('remediations:read'),
  params: WorkspaceParams,
  query: RemediationListQuery,
  success: ok('A page of remediations.', RemediationPage),
  rows: ({ db, params, query }) =>
    remediationsQuery(db, params.workspace_id, {
      status: query.status,
      repositoryId: query.repository_id,
      findingId: query.finding_id,
    }),
  presentAll: (rows, { db }) => presentAll(db, rows),
});

export const createRemediation = defineOperation({
  operationId: 'createRemediation',
  ...route.post('/v1/workspaces/{workspace_id}/remediations'),
  summary: 'Plan the fix of findings',
  description:
    "Every finding must exist in this workspace (else 422 `unknown_finding` naming each unknown one), be unresolved (422 `finding_resolved`) and belong to one repository (422 `findings_span_repositories`). With `plan` the plan is the caller's (`source: manual`); without it the remediation agent writes one from the template of each control (`source: template`) and, when the worker has a model configured, asks the model to improve it (`source: model`; the call is an agent run of the audit that last observed the findings, and its cost is that audit's `remediation_cost_usd`). The remediation starts `proposed` and is owned by a `RemediationWorkflow` with workflow id `remediation-<id>`.",
  ...REMEDIATIONS.scope('remediations:write'),
  params: WorkspaceParams,
  body: RemediationCreate,
  idempotent: true,
  errors: [422, 503],
  success: created('The proposed remediation.', RemediationResponse),
  handler: async (ctx) => {
    const { db, params, body, principal } = ctx;
    const findings = await checkFindings(db, params.workspace_id, body.finding_ids);
    const template = templatePlan(findings as unknown as PlanFinding[]);
    const plan = body.plan
      ? {
          ...body.plan,
          affected_entity_keys: body.plan.affected_entity_keys ?? template.affected_entity_keys,
        }
      : template;
    const latest = [...findings].sort(
      (a, b) => b.last_seen_at.getTime() - a.last_seen_at.getTime(),
    )[0]!;
    const row = await createWorkflowOwned(ctx, {
      resource: 'remediation',
      collection: 'remediations',
      find: findRemediation,
      insert: (trx, id) =>
        insertRemediation(
          trx,
          {
            id,
            workspace_id: params.workspace_id,
            repository_id: latest.repository_id,
            audit_id: latest.last_seen_audit_id,
            title: body.title ?? template.title,
            summary: plan.summary,
            steps: plan.steps,
            affected_entity_keys: plan.affected_entity_keys,
            risk: plan.risk,
            effort: plan.effort,
            source: body.plan ? 'manual' : 'template',
            created_by: principal.memberId,
            workflow_id: remediationWorkflowId(id),
          },
          body.finding_ids,
        ),
      recorded: (created) => ({
        action: 'remediation.created',
        details: {
          title: created.title,
          source: created.source,
          finding_ids: body.finding_ids,
          repository_id: created.repository_id,
        },
      }),
      workflow: (created) => {
        const input: RemediationWorkflowInput = {
          remediationId: created.id,
          createdBy: principal.memberId,
          draft: !body.plan,
        };
        return {
          type: WORKFLOW_TYPES.remediation,
          args: [input],
          repositoryId: latest.repository_id,
        };
      },
      // No state says "never started": the remediation is removed, its audit events tell why.
      discard: discardUnstartedRemediation,
      discardDetails: (created) => ({ title: created.title }),
      unavailable:
        'The remediation workflow could not be started, so the remediation was discarded. Create it again later.',
    });
    return present(db, row);
  },
});

export const getRemediation = defineOperation({
  operationId: 'getRemediation',
  ...route.get('/v1/workspaces/{workspace_id}/remediations/{remediation_id}'),
  summary: 'Get a remediation',
  ...REMEDIATIONS.scope('remediations:read'),
  params: RemediationParams,
  success: ok('The remediation.', RemediationResponse),
  handler: async ({ db, params }) =>
    present(db, await loadRemediation(db, params.workspace_id, params.remediation_id)),
});

const REMEDIATION = {
  path: '/v1/workspaces/{workspace_id}/remediations/{remediation_id}',
  params: RemediationParams,
};

export const approveRemediation = defineOperation({
  operationId: 'approveRemediation',
  ...vote('remediation', REMEDIATIONS, REMEDIATION, 'approval'),
  body: ApprovalCreate,
  summary: 'Approve a remediation',
  description: `Moves a proposed remediation to approved, recording the approver, role, scope and rationale. ${approvalRules('remediation')} A plan still being written by the model is approved once it is written.`,
  success: ok('The approved remediation.', RemediationResponse),
  handler: async (ctx) => move(ctx, 'approved', ctx.body.rationale),
});

export const rejectRemediation = defineOperation({
  operationId: 'rejectRemediation',
  ...vote('remediation', REMEDIATIONS, REMEDIATION, 'rejection'),
  body: ApprovalCreate,
  summary: 'Reject a remediation',
  description:
    'Moves a proposed remediation to rejected (terminal), recording the rejection like an approval. Its creator may reject (withdraw) it. One already approved or rejected is 409 `already_decided`.',
  success: ok('The rejected remediation.', RemediationResponse),
  handler: async (ctx) => move(ctx, 'rejected', ctx.body.rationale),
});

export const transitionRemediation = defineOperation({
  operationId: 'transitionRemediation',
  ...route.post('/v1/workspaces/{workspace_id}/remediations/{remediation_id}/transitions'),
  summary: 'Move a remediation',
  description:
    'Moves: approved -> in_progress; in_progress -> done; not_verified -> in_progress. Approving and rejecting are approvals, made through approveRemediation and rejectRemediation (scope remediations:approve); `status: rejected` is not a transition (400 validation_failed). Once done, the next completed audit of the repository verifies it: every finding resolved -> verified; any still observed -> not_verified; an audit that looked at too little (a narrowed scope) decides nothing and the remediation waits for the next. Any other move is 409 `invalid_transition` naming the current state and the allowed moves.',
  ...REMEDIATIONS.scope('remediations:write'),
  params: RemediationParams,
  body: RemediationTransition,
  errors: [409, 503],
  success: ok('The moved remediation.', RemediationResponse),
  handler: async (ctx) => move(ctx, ctx.body.status, ctx.body.rationale),
});
