/**
 * The API side of the one approval model (domain/approvals/model.ts): the access of an approval
 * operation (the family's approve scope, so the scope the contract declares is the one checked),
 * the problem of each refusal (one set of codes for every family), the approving actor, and the
 * shape every Update-applied approval shares (check early, send the Update, answer what is
 * stored).
 */
import { Type, type TObject } from '@sinclair/typebox';
import type { UpdateDefinition } from '@temporalio/common';
import type { Knex } from 'knex';
import type { ApprovalRow } from '../../db/approvals';
import { memberById } from '../../db/workspaces';
import { APPROVAL_OUTCOMES } from '../../domain/contract/values';
import {
  APPROVAL_POLICIES,
  isApprovalRefusal,
  type ApprovalActor,
  type ApprovalFamily,
  type ApprovalRefusal,
} from '../../domain/approvals/model';
import { problems, type ApiError } from '../errors';
import { DateTime, LiteralUnion, Nullable, Uuid } from '../schema-kit';
import { iso, runWorkflowUpdate } from '../shared';
import type { AppServices } from '../services';
import { auditTokenId, route, type Access, type operationGroup, type Principal } from './operation';

/** The access of every approve or reject operation of `family`. */
export function approvalAccess(family: ApprovalFamily): Access {
  return { kind: 'scope', scope: APPROVAL_POLICIES[family].scope };
}

/**
 * The parts every Update-applied approve or reject operation of `family` shares: its tag and
 * access (the family's approve scope), its path (`<item>/approval` or `<item>/rejection`), the
 * item's params, and 409 (refused) / 503 (the item's workflow unreachable).
 */
export function vote<P extends TObject>(
  family: ApprovalFamily,
  group: ReturnType<typeof operationGroup>,
  item: { path: string; params: P },
  outcome: 'approval' | 'rejection',
) {
  return {
    ...route.post(`${item.path}/${outcome}`),
    ...group.access(approvalAccess(family)),
    params: item.params,
    errors: [409, 503],
  };
}

/** The refusal codes, for operation descriptions. */
export function approvalRules(family: ApprovalFamily): string {
  const p = APPROVAL_POLICIES[family];
  return `A ${p.noun} cannot be approved by ${p.author} (403 \`self_approval\`); a ${p.noun} already approved or rejected is 409 \`already_decided\`${p.quorum === 'workspace' ? '; a second vote by the same member in one review is 409 `duplicate_vote`' : ''}.`;
}

/** The problem response of a refused approval or rejection. */
export function approvalProblem(family: ApprovalFamily, refusal: ApprovalRefusal): ApiError {
  const p = APPROVAL_POLICIES[family];
  switch (refusal.code) {
    case 'self_approval':
      return problems.forbidden(
        'self_approval',
        `The ${p.noun} cannot be approved by ${p.author}.`,
        `Ask another member holding ${p.scope} to approve it.`,
      );
    case 'duplicate_vote':
      return problems.conflict(
        'duplicate_vote',
        `This member has already approved or rejected the ${p.noun} in the current review.`,
        `Another member holding ${p.scope} must vote to reach the quorum.`,
      );
    case 'already_decided':
      return problems.conflict(
        'already_decided',
        `The ${p.noun} is ${refusal.current}; it was already approved or rejected.`,
        `Read it (${p.readOperation}) to see who decided and what followed.`,
        { current_status: refusal.current },
      );
    case 'not_awaiting_approval':
      return problems.conflict(
        'not_awaiting_approval',
        `The ${p.noun} is ${refusal.current}; it does not await approval yet.`,
        `Submit it for review first, then ask a member holding ${p.scope}.`,
        { current_status: refusal.current },
      );
    case 'approval_expired':
      return problems.conflict(
        'approval_expired',
        `The ${p.noun} expired before it was approved; it will never take effect.`,
        'Request it again if it is still needed.',
      );
  }
}

/** The approving member as the model records them (their role read now). */
export async function approvalActor(
  db: Knex,
  principal: Principal,
  requestId: string,
): Promise<ApprovalActor> {
  return {
    id: principal.memberId,
    login: principal.memberLogin,
    role: (await memberById(db, principal.memberId))?.role ?? 'member',
    tokenId: auditTokenId(principal),
    requestId,
  };
}

/**
 * An approval (or any move) a family's workflow applies as an Update: `check` refuses early from
 * the row, the Update carries the request, and a workflow that has ended is answered from the
 * state stored since. Refusals that are the approval model's become its problems; the family's
 * own (a state-machine move, a version) go through `otherRefusal`.
 */
export async function applyThroughWorkflow<Row extends { workflow_id: string }, Arg>(
  services: AppServices,
  family: ApprovalFamily,
  steps: {
    load: () => Promise<Row>;
    check: (row: Row) => { code: string } | null | Promise<{ code: string } | null>;
    update: UpdateDefinition<unknown, [Arg]>;
    arg: Arg;
    /** The refusal a request meets once the workflow ended, read from the stored row. */
    ended: (row: Row) => { code: string };
    otherRefusal: (refusal: { code: string }) => ApiError;
    resource: Record<string, string>;
  },
): Promise<Row> {
  const problem = (r: { code: string }) =>
    isApprovalRefusal(r) ? approvalProblem(family, r) : steps.otherRefusal(r);
  const row = await steps.load();
  const early = await steps.check(row);
  if (early) throw problem(early);
  await runWorkflowUpdate(services, row.workflow_id, steps.update, steps.arg, {
    refused: problem,
    ended: async () => problem(steps.ended(await steps.load())),
    resource: steps.resource,
  });
  return steps.load();
}

/** The fields every approval answers with (each family names its own schema of them). */
export function approvalRecordFields(subject: string) {
  return {
    id: Uuid(),
    actor_id: Uuid({ description: `The member who approved or rejected the ${subject}.` }),
    actor_role: Type.String({ description: "The approver's role in the workspace." }),
    authorization_scope: Type.String({ description: 'The scope the approval was made under.' }),
    policy_version: Nullable(
      Type.Integer({
        description:
          'The version of the workspace approval policy that set the quorum; null where a fixed quorum of 1 applies.',
      }),
    ),
    outcome: LiteralUnion(APPROVAL_OUTCOMES),
    rationale: Type.String(),
    created_at: DateTime(),
  };
}

/** An approval row as answered. */
export function presentApprovalRecord(a: ApprovalRow) {
  return {
    id: a.id,
    actor_id: a.actor_id,
    actor_role: a.actor_role,
    authorization_scope: a.authorization_scope,
    policy_version: a.policy_version,
    outcome: a.outcome,
    rationale: a.rationale,
    created_at: iso(a.created_at),
  };
}
