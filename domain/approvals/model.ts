/**
 * The one two-person approval model of every family that asks a second member to sign off
 * (decisions, remediations, workflow actions, audit reports): who may approve what (the scope of
 * the family, never the author), the quorum, the outcomes, what an approval records, and the one
 * set of refusals with their codes. Pure and deterministic: the API, the workflows' Update
 * validators and the activities that apply an approval under a row lock all call `checkApproval`.
 * Imports nothing beyond the contract's values (workflows load this module).
 */
import type { ScopeName } from '../contract/values';

export type ApprovalOutcome = 'approved' | 'rejected';

export type ApprovalFamily = 'decision' | 'remediation' | 'workflow_action' | 'report';

/** How a family applies the model: its scope, its words, the outcomes it offers. */
export interface ApprovalPolicy {
  family: ApprovalFamily;
  /** The scope an approver needs; the family's approve/reject operations declare exactly it. */
  scope: ScopeName;
  /** The subject in words ("decision", "audit report"). */
  noun: string;
  /** Its author, in words ("the member who proposed it"). */
  author: string;
  /** The operation that reads the subject (named in hints). */
  readOperation: string;
  /** Outcomes the family offers (a report is only ever approved). */
  outcomes: readonly ApprovalOutcome[];
  /**
   * Where the quorum comes from: `workspace` (the workspace approval policy, versioned, recorded
   * on each approval) or a fixed 1 (one other member decides; no versioned policy applies).
   */
  quorum: 'workspace' | 1;
}

export const APPROVAL_POLICIES: Readonly<Record<ApprovalFamily, ApprovalPolicy>> = {
  decision: {
    family: 'decision',
    scope: 'decisions:approve',
    noun: 'decision',
    author: 'the member who proposed it',
    readOperation: 'getDecision',
    outcomes: ['approved', 'rejected'],
    quorum: 'workspace',
  },
  remediation: {
    family: 'remediation',
    scope: 'remediations:approve',
    noun: 'remediation',
    author: 'the member who created it',
    readOperation: 'getRemediation',
    outcomes: ['approved', 'rejected'],
    quorum: 1,
  },
  workflow_action: {
    family: 'workflow_action',
    scope: 'workflow_actions:approve',
    noun: 'workflow action',
    author: 'the member who requested it',
    readOperation: 'getWorkflowAction',
    outcomes: ['approved', 'rejected'],
    quorum: 1,
  },
  report: {
    family: 'report',
    scope: 'reports:approve',
    noun: 'report',
    author: 'the member who started its audit',
    readOperation: 'getAuditReport',
    outcomes: ['approved'],
    quorum: 1,
  },
};

/**
 * Where a subject stands toward approval: `before` (not submitted yet: a decision still
 * `proposed`), `awaiting` (approvals are taken now), `decided` (approved or rejected, or moved on
 * since), `expired` (its time to be approved ran out).
 */
export type ApprovalPhase = 'before' | 'awaiting' | 'decided' | 'expired';

export interface ApprovalSubject {
  phase: ApprovalPhase;
  /** The subject's own state, named in refusals. */
  status: string;
  /** The member who authored it; null when no member did (a scheduled audit). */
  authorId: string | null;
  /** Members who already approved or rejected it in the current round (quorum above 1). */
  votedThisRound?: readonly string[];
}

/** Why an approval or rejection is refused: the one set of codes of every family. */
export type ApprovalRefusal =
  /** 403: the author approves their own subject (they may reject, i.e. withdraw, it). */
  | { code: 'self_approval' }
  /** 409: this member already voted in this round; other members must reach the quorum. */
  | { code: 'duplicate_vote' }
  /** 409: the subject was already approved or rejected (or has moved on since). */
  | { code: 'already_decided'; current: string }
  /** 409: the subject is not submitted for approval yet. */
  | { code: 'not_awaiting_approval'; current: string }
  /** 409: the subject's time to be approved ran out; it never takes effect. */
  | { code: 'approval_expired' };

export type ApprovalRefusalCode = ApprovalRefusal['code'];

/** The HTTP status of each refusal (the API's problem responses use it). */
export const REFUSAL_STATUS: Readonly<Record<ApprovalRefusalCode, 403 | 409>> = {
  self_approval: 403,
  duplicate_vote: 409,
  already_decided: 409,
  not_awaiting_approval: 409,
  approval_expired: 409,
};

export function isApprovalRefusal(r: { code: string }): r is ApprovalRefusal {
  return Object.prototype.hasOwnProperty.call(REFUSAL_STATUS, r.code);
}

/** The checks every family applies to an approval or rejection, in this order; null when allowed. */
export function checkApproval(
  subject: ApprovalSubject,
  request: { outcome: ApprovalOutcome; actorId: string },
): ApprovalRefusal | null {
  switch (subject.phase) {
    case 'expired':
      return { code: 'approval_expired' };
    case 'decided':
      return { code: 'already_decided', current: subject.status };
    case 'before':
      return { code: 'not_awaiting_approval', current: subject.status };
    case 'awaiting':
      break;
  }
  if (request.outcome === 'approved' && subject.authorId === request.actorId)
    return { code: 'self_approval' };
  if (subject.votedThisRound?.includes(request.actorId)) return { code: 'duplicate_vote' };
  return null;
}

/** Whether the distinct approvers of a round reach the quorum. */
export function quorumReached(approvers: number, quorum: number): boolean {
  return approvers >= quorum;
}

/** Who approves or rejects, as the API authenticated them. */
export interface ApprovalActor {
  id: string;
  login: string;
  /** The member's role in the workspace. */
  role: string;
  tokenId: string | null;
  requestId: string | null;
}

/** What every approval records, whatever its family. */
export interface ApprovalRecord {
  actor_id: string;
  actor_role: string;
  authorization_scope: ScopeName;
  /** The version of the workspace policy that set the quorum; null where none applies. */
  policy_version: number | null;
  outcome: ApprovalOutcome;
  rationale: string;
}

export function approvalRecord(
  family: ApprovalFamily,
  actor: Pick<ApprovalActor, 'id' | 'role'>,
  outcome: ApprovalOutcome,
  rationale: string,
  policyVersion: number | null = null,
): ApprovalRecord {
  const policy = APPROVAL_POLICIES[family];
  return {
    actor_id: actor.id,
    actor_role: actor.role,
    authorization_scope: policy.scope,
    policy_version: policy.quorum === 'workspace' ? policyVersion : null,
    outcome,
    rationale,
  };
}
