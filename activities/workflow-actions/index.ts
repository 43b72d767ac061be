/**
 * Activities of the WorkflowActionWorkflow: record a decision (approval or rejection) on a
 * pending action, expire it, and execute it exactly once. Execution is keyed by the action id:
 * the effect and the `executed` state are written in one transaction under the action's row lock,
 * so a retried activity (a lost completion, a worker crash) finds the action executed and returns
 * the recorded outcome instead of acting twice.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Knex } from 'knex';
import { recordWrite, writtenBy, type WriteActor } from '../../db/activity';
import { releaseBlobs } from '../../db/attachments';
import { createAuditRecord, failQueuedAudit, findAudit } from '../../db/audits';
import { gatePolicyOf, replaceGatePolicy } from '../../db/changes';
import { findRepository, softDeleteRepository } from '../../db/repositories';
import { findMember, memberLogins } from '../../db/workspaces';
import {
  getWorkflowActionById,
  purgeAuditAttachments,
  purgeRepositoryHistory,
  revokeMemberTokens,
  updateWorkflowAction,
  type WorkflowActionRow,
} from '../../db/workflow-actions';
import { auditWorkflowId } from '../../domain/contract/workflows';
import { approvalRecord } from '../../domain/approvals/model';
import type { GatePolicy } from '../../domain/changes/gate';
import {
  checkDecision,
  type WorkflowActionDecision,
  type WorkflowActionStatus,
} from '../../domain/workflow-actions/rules';
import type { AuditStart } from '../../domain/workflow-starts';
import type { BlobStore } from '../../platform/blob-store';
import { admissionOn, type Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { refusal } from '../refusal';

export interface WorkflowActionActivityDeps {
  db: Knex;
  log: Logger;
  blobs: BlobStore;
  config: Config;
}

/** An effect that cannot happen (its target is gone): the action ends `failed` with this code. */
class EffectRefused extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

export interface ExecutionResult {
  status: WorkflowActionStatus;
  /** The audit a deep_review_audit action created, for the workflow to start. */
  audit: AuditStart | null;
}

export function createWorkflowActionActivities(deps: WorkflowActionActivityDeps) {
  const { db, config } = deps;

  const requesterLogin = async (trx: Knex, row: WorkflowActionRow) =>
    (await memberLogins(trx, [row.requested_by])).get(row.requested_by) ?? null;

  const auditStart = (row: WorkflowActionRow, auditId: string): AuditStart => ({
    auditId,
    workflowId: auditWorkflowId(auditId),
    workspaceId: row.workspace_id,
    repositoryId: row.target.repository_id ?? null,
    heartbeatTimeoutSeconds: config.agentHeartbeatTimeoutSeconds,
    maxAttempts: config.agentMaxAttempts,
    admission: admissionOn(config),
  });

  /** The effect of an approved action, inside the transaction that marks it executed. */
  async function effect(
    trx: Knex,
    row: WorkflowActionRow,
  ): Promise<{ outcome: Record<string, unknown>; blobs: string[] }> {
    const ws = row.workspace_id;
    const t = row.target;
    switch (row.kind) {
      case 'delete_repository': {
        const repo = await softDeleteRepository(trx, ws, t.repository_id!);
        if (!repo) throw new EffectRefused('repository_not_found');
        const { blob_shas, ...purged } = await purgeRepositoryHistory(trx, ws, repo.id);
        return {
          outcome: { repository_id: repo.id, name: repo.name, ...purged },
          blobs: blob_shas,
        };
      }
      case 'purge_attachments': {
        if (!(await findAudit(trx, ws, t.audit_id!))) throw new EffectRefused('audit_not_found');
        const rows = await purgeAuditAttachments(trx, ws, t.audit_id!);
        return {
          outcome: { audit_id: t.audit_id, attachment_ids: rows.map((r) => r.id) },
          blobs: rows.map((r) => r.sha256),
        };
      }
      case 'deep_review_audit': {
        if (!(await findRepository(trx, ws, t.repository_id!)))
          throw new EffectRefused('repository_not_found');
        const audit = await createAuditRecord(
          trx,
          {
            workspace_id: ws,
            repository_id: t.repository_id!,
            upload_id: null,
            created_by: row.requested_by,
            audit_type: 'repository',
            branch_ref: t.branch_ref ?? null,
            commit_sha: null,
            deep_review: true,
            source_scope: {},
            origin: 'workflow_action',
            origin_ref: row.id,
            trigger_reason: row.reason,
            profile_snapshot: null,
          },
          {
            actorId: row.requested_by,
            actorLogin: await requesterLogin(trx, row),
            tokenId: null,
            requestId: null,
          },
        );
        return { outcome: { audit_id: audit.id, deep_review: true }, blobs: [] };
      }
      case 'change_gate_policy': {
        const before = await gatePolicyOf(trx, ws);
        const after = await replaceGatePolicy(
          trx,
          ws,
          before.version,
          t.gate_policy as unknown as GatePolicy,
          row.requested_by,
        );
        if (!after) throw new Error('the gate policy changed during the action; retrying');
        return { outcome: { before_version: before.version, version: after.version }, blobs: [] };
      }
      case 'revoke_member_tokens': {
        if (!(await findMember(trx, ws, t.member_id!))) throw new EffectRefused('member_not_found');
        const ids = await revokeMemberTokens(trx, ws, t.member_id!);
        return { outcome: { member_id: t.member_id, revoked_token_ids: ids }, blobs: [] };
      }
    }
  }

  const record = (
    trx: Knex,
    row: WorkflowActionRow,
    action: string,
    actor: WriteActor,
    details: Record<string, unknown>,
  ) =>
    recordWrite(trx, {
      workspaceId: row.workspace_id,
      ...writtenBy(actor),
      action,
      resourceType: 'workflow_action',
      resourceId: row.id,
      details: { kind: row.kind, target: row.target, ...details },
    });
  const SYSTEM = { id: null, login: 'system', tokenId: null, requestId: null };

  return {
    /** Records an approval or rejection of a pending action (checked again under its lock). */
    async decideWorkflowAction(
      actionId: string,
      requestKey: string,
      req: WorkflowActionDecision,
    ): Promise<{ status: WorkflowActionStatus }> {
      return db.transaction(async (trx) => {
        const row = await getWorkflowActionById(trx, actionId, true);
        if (row.last_request_key === requestKey) return { status: row.status };
        const refused = checkDecision(
          { status: row.status, requestedBy: row.requested_by, expiresAt: row.expires_at },
          { outcome: req.outcome, actorId: req.actor.id },
          new Date(),
        );
        if (refused) refusal(refused);
        const approval = approvalRecord('workflow_action', req.actor, req.outcome, req.rationale);
        const after = await updateWorkflowAction(trx, row.id, {
          status: req.outcome,
          decided_by: req.actor.id,
          decided_by_role: req.actor.role,
          decided_by_scope: approval.authorization_scope,
          decided_policy_version: approval.policy_version,
          decided_at: new Date(),
          decision_rationale: req.rationale,
          last_request_key: requestKey,
        });
        await record(trx, row, `workflow_action.${req.outcome}`, req.actor, {
          requested_by: row.requested_by,
          rationale: req.rationale,
        });
        return { status: after.status };
      });
    },

    /** The action's time ran out while pending: it is expired and never executes. */
    async expireWorkflowAction(actionId: string): Promise<{ status: WorkflowActionStatus }> {
      return db.transaction(async (trx) => {
        const row = await getWorkflowActionById(trx, actionId, true);
        if (row.status !== 'pending') return { status: row.status };
        const after = await updateWorkflowAction(trx, row.id, { status: 'expired' });
        await record(trx, row, 'workflow_action.expired', SYSTEM, {
          requested_by: row.requested_by,
          expires_at: row.expires_at.toISOString(),
        });
        return { status: after.status };
      });
    },

    /**
     * Executes an approved action once: the effect, the `executed` state, the outcome and the
     * write records in one transaction; then releases blobs nothing holds any more. An effect
     * whose target is gone ends the action `failed` with a stable error code.
     */
    async executeWorkflowAction(actionId: string): Promise<ExecutionResult> {
      const done = await db.transaction(async (trx) => {
        const row = await getWorkflowActionById(trx, actionId, true);
        const auditOf = (r: WorkflowActionRow) =>
          typeof r.outcome?.audit_id === 'string' ? auditStart(r, r.outcome.audit_id) : null;
        if (row.status === 'executed' || row.status === 'failed')
          return { result: { status: row.status, audit: auditOf(row) }, blobs: [] as string[] };
        if (row.status !== 'approved')
          throw ApplicationFailure.nonRetryable(`action ${row.id} is ${row.status}, not approved`);
        try {
          const { outcome, blobs } = await trx.transaction(async (inner) => effect(inner, row));
          const after = await updateWorkflowAction(trx, row.id, {
            status: 'executed',
            executed_at: new Date(),
            outcome,
          });
          await record(trx, row, 'workflow_action.executed', SYSTEM, {
            requested_by: row.requested_by,
            approved_by: row.decided_by,
            outcome,
          });
          return { result: { status: after.status, audit: auditOf(after) }, blobs };
        } catch (err) {
          if (!(err instanceof EffectRefused)) throw err;
          const after = await updateWorkflowAction(trx, row.id, {
            status: 'failed',
            executed_at: new Date(),
            error_code: err.code,
            outcome: null,
          });
          await record(trx, row, 'workflow_action.failed', SYSTEM, {
            requested_by: row.requested_by,
            approved_by: row.decided_by,
            error_code: err.code,
          });
          return { result: { status: after.status, audit: null }, blobs: [] as string[] };
        }
      });
      if (done.blobs.length) await releaseBlobs(db, deps.blobs, done.blobs);
      return done.result;
    },

    /** The audit a deep_review_audit action created could not be started: it is failed. */
    async failWorkflowActionAudit(auditId: string, cause: string): Promise<void> {
      await failQueuedAudit(db, auditId, cause);
    },
  };
}

export type WorkflowActionActivities = ReturnType<typeof createWorkflowActionActivities>;
