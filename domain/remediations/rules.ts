/**
 * Remediations, pure logic shared by the API, the RemediationWorkflow and its activities: the
 * state machine (who may move a remediation where), and the verification of its findings against
 * a later audit.
 */
import { checkApproval, type ApprovalActor, type ApprovalRefusal } from '../approvals/model';
import type {
  REMEDIATION_EFFORTS,
  REMEDIATION_RISKS,
  REMEDIATION_STATES,
} from '../contract/values';

export type RemediationStatus = (typeof REMEDIATION_STATES)[number];
export type RemediationRisk = (typeof REMEDIATION_RISKS)[number];
export type RemediationEffort = (typeof REMEDIATION_EFFORTS)[number];

export interface RemediationStep {
  title: string;
  detail: string;
}

/** What a plan says: the same fields whether a person, a template or a model wrote it. */
export interface RemediationPlan {
  summary: string;
  steps: RemediationStep[];
  affected_entity_keys: string[];
  risk: RemediationRisk;
  effort: RemediationEffort;
}

/**
 * Moves a person may request. `approved` only through approveRemediation; `verified` and
 * `not_verified` only through verification by a later audit. rejected and verified are terminal;
 * not_verified may go back to in_progress (the work was not finished).
 */
const REQUESTABLE: Readonly<Record<RemediationStatus, readonly RemediationStatus[]>> = {
  proposed: ['approved', 'rejected'],
  approved: ['in_progress'],
  rejected: [],
  in_progress: ['done'],
  done: [],
  verified: [],
  not_verified: ['in_progress'],
};

export const TERMINAL: readonly RemediationStatus[] = ['rejected', 'verified'];

export function allowedMoves(from: RemediationStatus): readonly RemediationStatus[] {
  return REQUESTABLE[from];
}

export type RemediationRefusal =
  | {
      code: 'invalid_transition';
      current: RemediationStatus;
      allowed: readonly RemediationStatus[];
    }
  | ApprovalRefusal;

/**
 * Why a requested move is refused, or null when it may go ahead. Approving and rejecting follow
 * the approval model (domain/approvals): only a proposed remediation awaits them.
 */
export function checkRemediationMove(
  facts: { status: RemediationStatus; createdBy: string },
  req: { to: RemediationStatus; actorId: string },
): RemediationRefusal | null {
  if (req.to === 'approved' || req.to === 'rejected')
    return checkApproval(
      {
        phase: facts.status === 'proposed' ? 'awaiting' : 'decided',
        status: facts.status,
        authorId: facts.createdBy,
      },
      { outcome: req.to, actorId: req.actorId },
    );
  if (!REQUESTABLE[facts.status].includes(req.to))
    return {
      code: 'invalid_transition',
      current: facts.status,
      allowed: REQUESTABLE[facts.status],
    };
  return null;
}

/** Who asks for a move, as the API authenticated them. */
export type RemediationActor = ApprovalActor;

/** A requested move as the API hands it to the RemediationWorkflow and its activity. */
export interface RemediationMoveRequest {
  to: RemediationStatus;
  rationale: string;
  actor: RemediationActor;
}

/** A finding as verification sees it. */
export interface VerifiedFinding {
  id: string;
  status: string;
  last_seen_audit_id: string;
}

export interface RemediationVerification {
  audit_id: string;
  outcome: 'verified' | 'not_verified';
  resolved_finding_ids: string[];
  open_finding_ids: string[];
  evaluated_at: string;
}

/**
 * The findings of a done remediation against a later completed audit: every finding resolved ->
 * verified; any still observed by that audit -> not_verified; otherwise (the audit did not look
 * everywhere, so it resolved nothing and observed none of them) -> null, inconclusive: wait for
 * the next audit.
 */
export function verifyFindings(
  findings: readonly VerifiedFinding[],
  auditId: string,
  now: Date,
): RemediationVerification | null {
  const resolved = findings.filter((f) => f.status === 'resolved').map((f) => f.id);
  const open = findings
    .filter((f) => f.status !== 'resolved' && f.last_seen_audit_id === auditId)
    .map((f) => f.id);
  if (open.length === 0 && resolved.length < findings.length) return null;
  return {
    audit_id: auditId,
    outcome: open.length === 0 ? 'verified' : 'not_verified',
    resolved_finding_ids: resolved,
    open_finding_ids: open,
    evaluated_at: now.toISOString(),
  };
}
