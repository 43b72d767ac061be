/**
 * Architecture decisions: propose (starts a DecisionWorkflow `decision-<id>`), read, list, move
 * (a workflow Update the workflow validates against the state machine) and a Markdown brief.
 */
import type { Knex } from 'knex';
import { evidenceByIds, evidenceIdsIn, findSnapshotRef } from '../../db/architecture';
import {
  approvalsOf,
  decisionsQuery,
  discardUnstartedDecision,
  findDecision,
  insertDecision,
  insertTransition,
  transitionsOf,
  votersOfRound,
  type DecisionRow,
} from '../../db/decisions';
import { keysetPage } from '../../db/paginate';
import { findMember, memberLogins } from '../../db/workspaces';
import { decisionWorkflowId, WORKFLOW_TYPES } from '../../domain/contract/workflows';
import { adrEvidenceIds, adrMemberIds, renderAdr } from '../../domain/decisions/adr';
import {
  APPROVAL_MOVES,
  briefFilename,
  checkMove,
  pendingCriteria,
  proposalProblems,
  type DecisionStatus,
  type MoveRefusal,
  type TransitionRequest,
} from '../../domain/decisions/rules';
import { transitionUpdate, type DecisionWorkflowInput } from '../../workflows/decisions';
import { problems, type ApiError, type FieldError } from '../errors';
import {
  vote,
  approvalActor,
  approvalProblem,
  approvalRules,
  applyThroughWorkflow,
} from '../registry/approvals';
import {
  defineOperation,
  type OperationContext,
  created,
  ok,
  operationGroup,
  route,
} from '../registry/operation';
import { WorkspaceParams } from '../schema-kit';
import { pageRequest } from '../shared';
import { presentDecision } from './present';
import {
  ArchitectureDecisionApproval,
  ArchitectureDecisionBriefResponse,
  ArchitectureDecisionPage,
  ArchitectureDecisionRejection,
  ArchitectureDecisionProposal,
  ArchitectureDecisionResponse,
  ArchitectureDecisionTransition,
  DecisionListQuery,
  DecisionParams,
  type ArchitectureDecisionProposal as Proposal,
} from './schemas';
import { createWorkflowOwned } from '../registry/workflow-owned';
import { found, ifMatchVersion, versionMismatch } from '../registry/parts';

async function loadDecision(db: Knex, workspaceId: string, id: string): Promise<DecisionRow> {
  return found(findDecision(db, workspaceId, id), `Decision ${id}`);
}

async function present(db: Knex, row: DecisionRow) {
  return presentDecision(row, (await approvalsOf(db, [row.id])).get(row.id) ?? []);
}

/** Checks a proposal beyond its schema; returns the snapshot's repository. */
async function checkProposal(
  db: Knex,
  workspaceId: string,
  body: Proposal,
): Promise<{ repositoryId: string | null }> {
  const errors: FieldError[] = proposalProblems(body).map((p) => ({ in: 'body', ...p }));
  const err = (path: string, message: string) => errors.push({ in: 'body', path, message });
  const snapshot = await findSnapshotRef(db, workspaceId, body.snapshot_id);
  if (!snapshot)
    err('/snapshot_id', `no such architecture snapshot in this workspace: ${body.snapshot_id}`);
  if (!(await findMember(db, workspaceId, body.owner_id)))
    err('/owner_id', `no such member in this workspace: ${body.owner_id}`);

  const evidenceIds = [...body.evidence_ids, ...body.options.flatMap((o) => o.evidence_ids ?? [])];
  const known = await evidenceIdsIn(db, workspaceId, evidenceIds);
  body.evidence_ids.forEach((id, i) => {
    if (!known.has(id)) err(`/evidence_ids/${i}`, `no such evidence in this workspace: ${id}`);
  });
  body.options.forEach((o, i) =>
    (o.evidence_ids ?? []).forEach((id, j) => {
      if (!known.has(id))
        err(`/options/${i}/evidence_ids/${j}`, `no such evidence in this workspace: ${id}`);
    }),
  );
  if (body.supersedes_id) {
    const old = await findDecision(db, workspaceId, body.supersedes_id);
    if (!old) err('/supersedes_id', `no such decision in this workspace: ${body.supersedes_id}`);
  }
  if (errors.length) throw problems.validationFailed(errors);
  return { repositoryId: snapshot!.repository_id };
}

/** The problem for a move refused by the state machine, an option or a version (not an approval rule). */
function refusedMove(
  refused: { code: string },
  to: DecisionStatus,
  expected: number | null,
): ApiError {
  const r = refused as MoveRefusal | { code: 'version_mismatch'; current: number };
  switch (r.code) {
    case 'invalid_transition':
      return problems.invalidTransition('decision', r.current, to, r.allowed);
    case 'unknown_option':
      return problems.validationFailed([
        {
          in: 'body',
          path: '/selected_option_id',
          message: `approving needs selected_option_id naming one of the options: ${r.optionIds.join(', ')}`,
        },
      ]);
    case 'version_mismatch':
      return versionMismatch('decision', r.current, expected ?? -1, 'getDecision');
    default:
      return approvalProblem('decision', r);
  }
}

/**
 * Sends one move to the decision's workflow (which checks it again and persists it) and answers
 * with the stored decision. Approvals and rejections come only from approveDecision and
 * rejectDecision, whose declared scope is decisions:approve.
 */
async function requestMove(
  ctx: OperationContext<{ workspace_id: string; decision_id: string }, undefined, unknown>,
  to: DecisionStatus,
  rationale: string,
  selectedOptionId: string | null,
) {
  const { services, db, params, principal, requestId, koa } = ctx;
  const expected = ifMatchVersion(koa.get('If-Match'), 'decision');
  const load = () => loadDecision(db, params.workspace_id, params.decision_id);
  const request: TransitionRequest = {
    to,
    rationale,
    selectedOptionId,
    expectedVersion: expected,
    actor: { ...(await approvalActor(db, principal, requestId)), scopes: [...principal.scopes] },
  };
  const row = await applyThroughWorkflow(services, 'decision', {
    load,
    check: async (decision) => {
      if (expected !== null && expected !== decision.version)
        return { code: 'version_mismatch', current: decision.version };
      const voted = await votersOfRound(db, decision.id, decision.review_round);
      return checkMove(
        {
          status: decision.status,
          createdBy: decision.created_by,
          optionIds: decision.options.map((o) => o.id),
          votedThisRound: voted,
        },
        { to, selectedOptionId, actorId: principal.memberId },
      );
    },
    update: transitionUpdate,
    arg: request,
    // The workflow ended (rejected or superseded decisions end theirs).
    ended: (now) =>
      checkMove(
        { status: now.status, createdBy: now.created_by, optionIds: [], votedThisRound: [] },
        { to, selectedOptionId, actorId: principal.memberId },
      ) ?? { code: 'invalid_transition', current: now.status, allowed: [] },
    otherRefusal: (r) => refusedMove(r, to, expected),
    resource: { decision_id: params.decision_id },
  });
  return present(db, row);
}

const DECISIONS = operationGroup('Decisions');

export const listDecisions = defineOperation({
  operationId: 'listDecisions',
  ...route.get('/v1/workspaces/{workspace_id}/decisions'),
  summary: 'List architecture decisions',
  description:
    'Newest first. When more decisions remain, the response carries `Link: <...>; rel="next"` with the cursor of the next page.',
  ...DECISIONS.scope('decisions:read'),
  params: WorkspaceParams,
  query: DecisionListQuery,
  success: {
    status: 200,
    description: 'A page of decisions, newest first.',
    schema: ArchitectureDecisionPage,
    headers: {
      Link: {
        description:
          'RFC 8288 link to the next page (`rel="next"`), present only when more items follow.',
      },
    },
  },
  handler: async ({ db, params, query, koa }) => {
    const page = await keysetPage(
      decisionsQuery(db, params.workspace_id, {
        status: query.status,
        repositoryId: query.repository_id,
      }),
      pageRequest(query),
    );
    if (page.next_cursor) {
      const next = new URLSearchParams();
      if (query.status) next.set('status', query.status);
      if (query.repository_id) next.set('repository_id', query.repository_id);
      next.set('limit', String(query.limit ?? 50));
      next.set('cursor', page.next_cursor);
      koa.set('Link', `</v1/workspaces/${params.workspace_id}/decisions?${next}>; rel="next"`);
    }
    const approvals = await approvalsOf(
      db,
      page.items.map((d) => d.id),
    );
    return { items: page.items.map((d) => presentDecision(d, approvals.get(d.id) ?? [])) };
  },
});

export const proposeDecision = defineOperation({
  operationId: 'proposeDecision',
  ...route.post('/v1/workspaces/{workspace_id}/decisions'),
  summary: 'Propose an architecture decision',
  description:
    'snapshot_id, owner_id, every evidence id and supersedes_id must exist in this workspace. The decision starts `proposed`, version 1, and is owned by a `DecisionWorkflow` with workflow id `decision-<id>`, started once the decision is stored. When the workflow cannot be started the proposal is discarded and the answer is 503 workflow_engine_unavailable (with its decision_id).',
  ...DECISIONS.scope('decisions:write'),
  params: WorkspaceParams,
  body: ArchitectureDecisionProposal,
  idempotent: true,
  errors: [503],
  success: created('The proposed decision.', ArchitectureDecisionResponse),
  handler: async (ctx) => {
    const { services, db, params, body, principal } = ctx;
    const { repositoryId } = await checkProposal(db, params.workspace_id, body);
    const row = await createWorkflowOwned(ctx, {
      resource: 'decision',
      collection: 'decisions',
      find: findDecision,
      insert: async (trx, id) => {
        const created = await insertDecision(trx, {
          id,
          workspace_id: params.workspace_id,
          repository_id: repositoryId,
          snapshot_id: body.snapshot_id,
          candidate_change_id: body.candidate_change_id ?? null,
          title: body.title,
          question: body.question,
          context: body.context,
          owner_id: body.owner_id,
          created_by: principal.memberId,
          options: body.options,
          evidence_ids: body.evidence_ids,
          uncertainties: body.uncertainties,
          affected_entity_keys: body.affected_entity_keys ?? [],
          affected_relationship_keys: body.affected_relationship_keys ?? [],
          success_criteria: pendingCriteria(body.success_criteria),
          supersedes_id: body.supersedes_id ?? null,
          workflow_id: decisionWorkflowId(id),
        });
        await insertTransition(trx, {
          decision_id: id,
          from_status: null,
          to_status: 'proposed',
          actor_id: principal.memberId,
          actor_login: principal.memberLogin,
          rationale: null,
        });
        return created;
      },
      recorded: (created) => ({
        action: 'decision.proposed',
        details: {
          title: body.title,
          number: created.number,
          snapshot_id: body.snapshot_id,
          repository_id: repositoryId,
        },
      }),
      workflow: (created) => {
        const input: DecisionWorkflowInput = {
          decisionId: created.id,
          createdBy: principal.memberId,
          optionIds: body.options.map((o) => o.id),
          historyLimit: services.config.decisionHistoryLimit,
        };
        return { type: WORKFLOW_TYPES.decision, args: [input], repositoryId };
      },
      // No decision state says "never started": the proposal is removed, and its audit events
      // (decision.proposed, then decision.discarded) tell what happened.
      discard: discardUnstartedDecision,
      discardDetails: (created) => ({ title: created.title, number: created.number }),
      unavailable:
        'The decision workflow could not be started, so the proposal was discarded. Propose it again later.',
    });
    return presentDecision(row, []);
  },
});

export const getDecision = defineOperation({
  operationId: 'getDecision',
  ...route.get('/v1/workspaces/{workspace_id}/decisions/{decision_id}'),
  summary: 'Get an architecture decision',
  ...DECISIONS.scope('decisions:read'),
  params: DecisionParams,
  success: {
    status: 200,
    description: 'The decision with its approvals.',
    schema: ArchitectureDecisionResponse,
    headers: {
      ETag: {
        description:
          'The decision version as `"<version>"`; send it back as If-Match on transitionDecision.',
      },
    },
  },
  handler: async ({ db, params, koa }) => {
    const row = await loadDecision(db, params.workspace_id, params.decision_id);
    koa.set('ETag', `"${row.version}"`);
    return present(db, row);
  },
});

export const transitionDecision = defineOperation({
  operationId: 'transitionDecision',
  ...route.post('/v1/workspaces/{workspace_id}/decisions/{decision_id}/transitions'),
  summary: 'Move an architecture decision',
  description:
    'Moves: proposed -> in_review; in_review -> proposed (withdrawn); approved -> implemented. Approving and rejecting are approvals, made through approveDecision and rejectDecision (scope decisions:approve): a transition to approved or rejected is 400 validation_failed naming /status. `verified` is reached only through verification against a later snapshot; `superseded` only when a decision naming this one in supersedes_id is approved. Any other move is 409 `invalid_transition` naming the current state and the allowed moves.',
  ...DECISIONS.scope('decisions:write'),
  params: DecisionParams,
  body: ArchitectureDecisionTransition,
  conditional: true,
  errors: [409, 503],
  success: ok('The moved decision.', ArchitectureDecisionResponse),
  handler: async (ctx) => {
    const to = ctx.body.status;
    if (APPROVAL_MOVES.includes(to))
      throw problems.validationFailed([
        {
          in: 'body',
          path: '/status',
          message: `a decision is ${to} through ${to === 'approved' ? 'approveDecision' : 'rejectDecision'} (scope decisions:approve), not through a transition`,
        },
      ]);
    return requestMove(ctx, to, ctx.body.rationale, ctx.body.selected_option_id ?? null);
  },
});

const DECISION = {
  path: '/v1/workspaces/{workspace_id}/decisions/{decision_id}',
  params: DecisionParams,
};

export const approveDecision = defineOperation({
  operationId: 'approveDecision',
  ...vote('decision', DECISIONS, DECISION, 'approval'),
  conditional: true,
  summary: 'Approve an architecture decision in review',
  description: `Records an approval of a decision in review with the approver's role, the scope decisions:approve and the version of the workspace approval policy. With a quorum above 1 the decision stays in_review until that many distinct members approved; the last approval moves it to approved with selected_option_id (which must name one of its options). ${approvalRules('decision')} A decision not yet in review is 409 \`not_awaiting_approval\`. With If-Match, a stale version is 409 version_mismatch.`,
  body: ArchitectureDecisionApproval,
  success: ok('The decision.', ArchitectureDecisionResponse),
  handler: async (ctx) =>
    requestMove(ctx, 'approved', ctx.body.rationale, ctx.body.selected_option_id),
});

export const rejectDecision = defineOperation({
  operationId: 'rejectDecision',
  ...vote('decision', DECISIONS, DECISION, 'rejection'),
  conditional: true,
  summary: 'Reject an architecture decision in review',
  description: `Records a rejection (with the same role, scope and policy version as an approval) and ends the decision: rejected is terminal. The proposer may reject their own decision. A decision already approved or rejected is 409 \`already_decided\`; one not yet in review 409 \`not_awaiting_approval\`; a second vote by the same member in one review 409 \`duplicate_vote\`.`,
  body: ArchitectureDecisionRejection,
  success: ok('The decision.', ArchitectureDecisionResponse),
  handler: async (ctx) => requestMove(ctx, 'rejected', ctx.body.rationale, null),
});

/** The decision's ADR, with the members and evidence it names read here. */
async function renderBrief(db: Knex, row: DecisionRow): Promise<string> {
  const approvals = (await approvalsOf(db, [row.id])).get(row.id) ?? [];
  const history = await transitionsOf(db, row.id);
  const logins = await memberLogins(db, adrMemberIds(row, approvals, history));
  const evidence = await evidenceByIds(db, adrEvidenceIds(row));
  return renderAdr({
    decision: row,
    approvals,
    history,
    logins,
    evidence: new Map(evidence.map((e) => [e.id, e])),
  });
}

export const getDecisionBrief = defineOperation({
  operationId: 'getDecisionBrief',
  ...route.get('/v1/workspaces/{workspace_id}/decisions/{decision_id}/brief'),
  summary: 'A Markdown ADR of a decision',
  description:
    'Context, question, options with benefits and tradeoffs, the selected option and rationale, evidence with file locations, success criteria and their verification, approvals and status history.',
  ...DECISIONS.scope('decisions:read'),
  params: DecisionParams,
  success: ok('The brief.', ArchitectureDecisionBriefResponse),
  handler: async ({ db, params }) => {
    const row = await loadDecision(db, params.workspace_id, params.decision_id);
    return {
      decision_id: row.id,
      filename: briefFilename(row.number, row.title),
      markdown: await renderBrief(db, row),
      generated_at: new Date().toISOString(),
    };
  },
});
