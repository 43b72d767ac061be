/**
 * Activities of the DecisionWorkflow: apply a transition (state, approvals, supersession, write
 * records) in one transaction, read the approval policy, record review reminders, and verify an
 * implemented decision against the repository's next completed snapshot. Each is safe to retry:
 * a transition carries the key of the workflow Update that asked for it and is applied once.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import { recordWrite, writtenBy } from '../../db/activity';
import { approvalRecord, quorumReached } from '../../domain/approvals/model';
import { latestSnapshotCompletedSince, type SnapshotRow } from '../../db/architecture';
import { snapshotPlaceOfAudit } from '../../db/changes';
import {
  getDecisionById,
  implementedDecisionWorkflows,
  insertApproval,
  insertTransition,
  policyOf,
  updateDecision,
  votersOfRound,
  type DecisionRow,
} from '../../db/decisions';
import {
  checkMove,
  SUPERSEDABLE,
  verify,
  type DecisionStatus,
  type MoveRefusal,
  type TransitionRequest,
} from '../../domain/decisions/rules';

export interface DecisionActivityDeps {
  db: Knex;
  log: Logger;
}

export interface TransitionOutcome {
  status: DecisionStatus;
  version: number;
  reviewRound: number;
  /** Members who voted in the current review round. */
  voted: string[];
  /** Workflow of the decision this approval superseded, to be told. */
  supersededWorkflowId: string | null;
}

/** A refused move as a non-retryable failure the API turns into its problem response. */
export function refusal(r: MoveRefusal | { code: 'version_mismatch'; current: number }): never {
  const messages: Record<string, string> = {
    invalid_transition: 'the move is not allowed from the current state',
    self_approval: 'the proposer cannot approve their own decision',
    unknown_option: 'selected_option_id must name one of the options',
    duplicate_vote: 'this member has already voted in the current review',
    version_mismatch: 'the decision changed since the given version',
  };
  throw ApplicationFailure.create({
    type: r.code,
    message: messages[r.code] ?? r.code,
    nonRetryable: true,
    details: [r],
  });
}

const votesOf = (db: Knex, decision: DecisionRow): Promise<string[]> =>
  votersOfRound(db, decision.id, decision.review_round);

/** The newest snapshot of the decision's repository whose audit completed after implementation. */
async function snapshotAfterImplementation(
  db: Knex,
  decision: DecisionRow,
): Promise<SnapshotRow | undefined> {
  if (!decision.repository_id || !decision.implemented_at) return undefined;
  return latestSnapshotCompletedSince(
    db,
    decision.workspace_id,
    decision.repository_id,
    decision.implemented_at,
  );
}

export function createDecisionActivities(deps: DecisionActivityDeps) {
  const { db } = deps;

  const system = (decision: DecisionRow, action: string, details: Record<string, unknown>) =>
    recordWrite(db, {
      workspaceId: decision.workspace_id,
      actorId: null,
      actorLogin: 'system',
      tokenId: null,
      requestId: null,
      action,
      resourceType: 'decision',
      resourceId: decision.id,
      details: { title: decision.title, ...details },
    });

  return {
    /**
     * Applies one requested move: checks the version and the state machine again under a row
     * lock, records approvals (quorum from the workspace policy), moves the state, supersedes the
     * decision named by supersedes_id on final approval, and writes the audit event and activity.
     */
    async applyDecisionTransition(
      decisionId: string,
      requestKey: string,
      req: TransitionRequest,
    ): Promise<TransitionOutcome> {
      return db.transaction(async (trx) => {
        const decision = await getDecisionById(trx, decisionId, true);
        const outcome = async (
          row: DecisionRow,
          supersededWorkflowId: string | null,
        ): Promise<TransitionOutcome> => ({
          status: row.status,
          version: row.version,
          reviewRound: row.review_round,
          voted: await votesOf(trx, row),
          supersededWorkflowId,
        });
        if (decision.last_request_key === requestKey) {
          // A retry of a move already applied: answer as the first attempt did.
          const superseded = decision.supersedes_id
            ? await getDecisionById(trx, decision.supersedes_id)
            : null;
          return outcome(
            decision,
            superseded?.status === 'superseded' ? superseded.workflow_id : null,
          );
        }
        if (req.expectedVersion !== null && req.expectedVersion !== decision.version)
          refusal({ code: 'version_mismatch', current: decision.version });
        const voted = await votesOf(trx, decision);
        const refused = checkMove(
          {
            status: decision.status,
            createdBy: decision.created_by,
            optionIds: decision.options.map((o) => o.id),
            votedThisRound: voted,
          },
          { to: req.to, selectedOptionId: req.selectedOptionId, actorId: req.actor.id },
        );
        if (refused) refusal(refused);

        const now = new Date();
        const from = decision.status;
        const changes: Partial<DecisionRow> = {
          latest_rationale: req.rationale,
          last_request_key: requestKey,
        };
        let to: DecisionStatus = req.to;
        let supersededWorkflowId: string | null = null;
        const details: Record<string, unknown> = { title: decision.title, from };

        if (req.to === 'approved' || req.to === 'rejected') {
          const policy = await policyOf(trx, decision.workspace_id);
          const approval = await insertApproval(trx, {
            decision_id: decision.id,
            ...approvalRecord('decision', req.actor, req.to, req.rationale, policy.version),
            review_round: decision.review_round,
          });
          details.approval_id = approval.id;
          details.outcome = req.to;
          details.policy_version = policy.version;
          details.quorum = policy.quorum;
          if (req.to === 'approved') {
            const approvers = new Set(
              await votersOfRound(trx, decision.id, decision.review_round, 'approved'),
            );
            details.approvals = approvers.size;
            if (!quorumReached(approvers.size, policy.quorum)) {
              to = 'in_review';
            } else {
              changes.approved_by = req.actor.id;
              changes.approved_at = now;
              changes.selected_option_id = req.selectedOptionId;
              if (decision.supersedes_id) {
                const old = await getDecisionById(trx, decision.supersedes_id, true);
                if (!SUPERSEDABLE.includes(old.status)) {
                  refusal({
                    code: 'invalid_transition',
                    current: old.status,
                    allowed: [],
                  });
                }
                await updateDecision(trx, old.id, {
                  status: 'superseded',
                  superseded_at: now,
                  latest_rationale: `Superseded by decision ${decision.id}: ${req.rationale}`,
                });
                await insertTransition(trx, {
                  decision_id: old.id,
                  from_status: old.status,
                  to_status: 'superseded',
                  actor_id: req.actor.id,
                  actor_login: req.actor.login,
                  rationale: `Superseded by decision ${decision.id} (${decision.title})`,
                });
                await recordWrite(trx, {
                  workspaceId: decision.workspace_id,
                  ...writtenBy(req.actor),
                  action: 'decision.superseded',
                  resourceType: 'decision',
                  resourceId: old.id,
                  details: { title: old.title, from: old.status, superseded_by: decision.id },
                });
                supersededWorkflowId = old.workflow_id;
              }
            }
          }
        } else if (req.to === 'in_review') {
          changes.review_round = decision.review_round + 1;
          changes.review_started_at = now;
        } else if (req.to === 'implemented') {
          changes.implemented_at = now;
        }
        changes.status = to;
        const after = await updateDecision(trx, decision.id, changes);
        if (to !== from) {
          await insertTransition(trx, {
            decision_id: decision.id,
            from_status: from,
            to_status: to,
            actor_id: req.actor.id,
            actor_login: req.actor.login,
            rationale: req.rationale,
          });
        }
        details.to = to;
        await recordWrite(trx, {
          workspaceId: decision.workspace_id,
          ...writtenBy(req.actor),
          action:
            req.to === 'approved' || req.to === 'rejected'
              ? `decision.${req.to}${to === 'in_review' ? '_partially' : ''}`
              : 'decision.transitioned',
          resourceType: 'decision',
          resourceId: decision.id,
          details,
        });
        return outcome(after, supersededWorkflowId);
      });
    },

    /** The reminder interval of the decision's workspace policy, in seconds. */
    async decisionReviewPolicy(decisionId: string): Promise<{ reminderSeconds: number }> {
      const decision = await getDecisionById(db, decisionId);
      const policy = await policyOf(db, decision.workspace_id);
      return { reminderSeconds: policy.reminder_interval_seconds };
    },

    /** Notes in the activity feed that a review has waited longer than the policy's interval. */
    async recordDecisionReminder(decisionId: string, reviewRound: number): Promise<boolean> {
      const decision = await getDecisionById(db, decisionId);
      if (decision.status !== 'in_review' || decision.review_round !== reviewRound) return false;
      const policy = await policyOf(db, decision.workspace_id);
      const approvers = await votersOfRound(db, decisionId, reviewRound, 'approved');
      const waited = decision.review_started_at
        ? Math.round((Date.now() - decision.review_started_at.getTime()) / 1000)
        : null;
      await system(decision, 'decision.review_reminder', {
        waited_seconds: waited,
        approvals: approvers.length,
        quorum: policy.quorum,
        reminder_interval_seconds: policy.reminder_interval_seconds,
      });
      return true;
    },

    /**
     * Evaluates an implemented decision's success criteria against the newest snapshot of its
     * repository completed after implementation (if any, and not already evaluated). All met ->
     * verified; otherwise the decision stays implemented with the result recorded.
     */
    async verifyDecision(
      decisionId: string,
    ): Promise<{ status: DecisionStatus; evaluated: string | null }> {
      return db.transaction(async (trx) => {
        const decision = await getDecisionById(trx, decisionId, true);
        if (decision.status !== 'implemented') return { status: decision.status, evaluated: null };
        const snapshot = await snapshotAfterImplementation(trx, decision);
        if (!snapshot || snapshot.id === decision.verification_snapshot_id)
          return { status: decision.status, evaluated: null };
        const result = verify(
          decision.success_criteria,
          {
            id: snapshot.id,
            entities: snapshot.entities as never,
            relationships: snapshot.relationships as never,
          },
          new Date(),
        );
        const verified = result.outcome === 'verified';
        const after = await updateDecision(trx, decision.id, {
          success_criteria: result.criteria,
          verification_snapshot_id: snapshot.id,
          verification_result: result,
          ...(verified ? { status: 'verified' as const, verified_at: new Date() } : {}),
        });
        if (verified) {
          await insertTransition(trx, {
            decision_id: decision.id,
            from_status: 'implemented',
            to_status: 'verified',
            actor_id: null,
            actor_login: 'system',
            rationale: `All ${result.criteria.length} success criteria met in snapshot ${snapshot.id}.`,
          });
        }
        await recordWrite(trx, {
          workspaceId: decision.workspace_id,
          actorId: null,
          actorLogin: 'system',
          tokenId: null,
          requestId: null,
          action: verified ? 'decision.verified' : 'decision.verification_failed',
          resourceType: 'decision',
          resourceId: decision.id,
          details: {
            title: decision.title,
            snapshot_id: snapshot.id,
            outcome: result.outcome,
            met: result.criteria.filter((c) => c.status === 'met').map((c) => c.id),
            unmet: result.criteria.filter((c) => c.status !== 'met').map((c) => c.id),
          },
        });
        return { status: after.status, evaluated: snapshot.id };
      });
    },

    /** Workflow ids of the implemented decisions of a completed audit's repository. */
    async implementedDecisionsOfAudit(auditId: string): Promise<string[]> {
      // Its place only: a large snapshot's graph, parsed here, held the worker for 100-230 ms.
      const snapshot = await snapshotPlaceOfAudit(db, auditId);
      if (!snapshot?.repository_id) return [];
      return implementedDecisionWorkflows(db, snapshot.workspace_id, snapshot.repository_id);
    },
  };
}

export type DecisionActivities = ReturnType<typeof createDecisionActivities>;
