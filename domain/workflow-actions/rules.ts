/**
 * Workflow actions, pure logic shared by the API, the WorkflowActionWorkflow and its activities:
 * which target each kind needs, and who may decide a pending request.
 */
import { checkApproval, type ApprovalActor, type ApprovalRefusal } from '../approvals/model';
import type { WORKFLOW_ACTION_KINDS, WORKFLOW_ACTION_STATES } from '../contract/values';

export type WorkflowActionKind = (typeof WORKFLOW_ACTION_KINDS)[number];
export type WorkflowActionStatus = (typeof WORKFLOW_ACTION_STATES)[number];

/** What an action acts on; each kind reads its own fields (TARGET_FIELDS). */
export interface WorkflowActionTarget {
  repository_id?: string;
  audit_id?: string;
  member_id?: string;
  branch_ref?: string;
  gate_policy?: { enabled: boolean; confidence_floor: number; rules: unknown[] };
}

type TargetField = keyof WorkflowActionTarget;

/** The target fields of each kind: `required` must be given, nothing outside `allowed` may be. */
export const TARGET_FIELDS: Readonly<
  Record<WorkflowActionKind, { required: readonly TargetField[]; allowed: readonly TargetField[] }>
> = {
  delete_repository: { required: ['repository_id'], allowed: ['repository_id'] },
  purge_attachments: { required: ['audit_id'], allowed: ['audit_id'] },
  deep_review_audit: { required: ['repository_id'], allowed: ['repository_id', 'branch_ref'] },
  change_gate_policy: { required: ['gate_policy'], allowed: ['gate_policy'] },
  revoke_member_tokens: { required: ['member_id'], allowed: ['member_id'] },
};

/** Problems of a target for its kind, as JSON pointers under `/target`. */
export function targetProblems(
  kind: WorkflowActionKind,
  target: WorkflowActionTarget,
): Array<{ path: string; message: string }> {
  const { required, allowed } = TARGET_FIELDS[kind];
  const out: Array<{ path: string; message: string }> = [];
  for (const field of required)
    if (target[field] === undefined)
      out.push({ path: `/target/${field}`, message: `is required for ${kind}` });
  for (const field of Object.keys(target) as TargetField[])
    if (!allowed.includes(field))
      out.push({ path: `/target/${field}`, message: `does not apply to ${kind}` });
  return out;
}

export type DecisionRefusal = ApprovalRefusal;

/** Who decides a pending action, as the API authenticated them. */
export type WorkflowActionActor = ApprovalActor;

export interface WorkflowActionDecision {
  outcome: 'approved' | 'rejected';
  rationale: string;
  actor: WorkflowActionActor;
}

/**
 * Why a decision on an action is refused, or null: only a pending, unexpired action is decided,
 * and its requester can reject (withdraw) it but never approve it.
 */
export function checkDecision(
  facts: { status: WorkflowActionStatus; requestedBy: string; expiresAt: Date },
  req: { outcome: 'approved' | 'rejected'; actorId: string },
  now: Date,
): DecisionRefusal | null {
  const expired =
    facts.status === 'expired' ||
    (facts.status === 'pending' && facts.expiresAt.getTime() <= now.getTime());
  return checkApproval(
    {
      phase: expired ? 'expired' : facts.status === 'pending' ? 'awaiting' : 'decided',
      status: facts.status,
      authorId: facts.requestedBy,
    },
    { outcome: req.outcome, actorId: req.actorId },
  );
}
