/**
 * Activities of the RemediationWorkflow: draft a plan with the model (an agent run whose cost is
 * the audit's remediation cost), apply a requested move (approval, rejection, start, done) in one
 * transaction keyed by the workflow Update that asked for it, and verify a done remediation
 * against the repository's next completed audit.
 */
import crypto from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { recordWrite, writtenBy } from '../../db/activity';
import { finishAgentRun, startAgentRun } from '../../db/agents';
import {
  auditPlace,
  doneRemediationWorkflows,
  findingsOfRemediation,
  getRemediationById,
  insertRemediationApproval,
  latestAuditCompletedSince,
  updateRemediation,
  type RemediationRow,
} from '../../db/remediations';
import { costUsd, type ModelPrice } from '../../domain/audits/pricing';
import { approvalRecord } from '../../domain/approvals/model';
import {
  checkRemediationMove,
  verifyFindings,
  type RemediationMoveRequest,
  type RemediationPlan,
  type RemediationStatus,
} from '../../domain/remediations/rules';
import { parseModelPlan, planPrompt } from '../../domain/remediations/model-plan';
import type { Logger } from '../../platform/logger';
import { refusal } from '../refusal';
import type { ModelProvider } from '../audits/agents/model';

export interface RemediationActivityDeps {
  db: Knex;
  log: Logger;
  model: ModelProvider | null;
  prices: Record<string, ModelPrice>;
}

/** The agent key of the remediation agent's runs (one per remediation and attempt). */
export const REMEDIATION_AGENT = 'remediation';

const ACTIONS: Partial<Record<RemediationStatus, string>> = {
  approved: 'remediation.approved',
  rejected: 'remediation.rejected',
  in_progress: 'remediation.started',
  done: 'remediation.done',
};

export function createRemediationActivities(deps: RemediationActivityDeps) {
  const { db } = deps;

  const system = (row: RemediationRow, action: string, details: Record<string, unknown>) =>
    recordWrite(db, {
      workspaceId: row.workspace_id,
      actorId: null,
      actorLogin: 'system',
      tokenId: null,
      requestId: null,
      action,
      resourceType: 'remediation',
      resourceId: row.id,
      details: { title: row.title, ...details },
    });

  return {
    /**
     * Rewrites a template plan with the configured model: one agent run (cost kind
     * `remediation`) on the audit that last observed the findings. Without a model, or when the
     * model's answer is not a plan, the template plan stays and the run records why.
     */
    async draftRemediationPlan(remediationId: string): Promise<{ source: string }> {
      const row = await getRemediationById(db, remediationId);
      if (!deps.model || row.source !== 'template' || row.status !== 'proposed' || !row.audit_id)
        return { source: row.source };
      const model = deps.model;
      const findings = await findingsOfRemediation(db, remediationId);
      const current: RemediationPlan = {
        summary: row.summary,
        steps: row.steps,
        affected_entity_keys: row.affected_entity_keys,
        risk: row.risk,
        effort: row.effort,
      };
      const messages = planPrompt(findings, current);
      const attempt = Context.current().info.attempt;
      const run = await startAgentRun(db, {
        audit_id: row.audit_id,
        workspace_id: row.workspace_id,
        stage: 'report',
        agent_key: `${REMEDIATION_AGENT}:${row.id}`,
        agent_version: '1',
        model_id: model.modelId,
        reasoning_effort: 'medium',
        attempt,
        model_backed: true,
        cost_kind: 'remediation',
        context_hash: crypto.createHash('sha256').update(JSON.stringify(messages)).digest('hex'),
      });
      let result;
      try {
        result = await model.complete({
          messages,
          maxOutputTokens: 2000,
          reasoningEffort: 'medium',
          timeoutMs: 120_000,
          signal: Context.current().cancellationSignal,
        });
      } catch (err) {
        const e = err as { code?: unknown; retryable?: unknown; message?: string };
        const code = typeof e.code === 'string' ? e.code : 'agent_crashed';
        await finishAgentRun(db, run.id, {
          status: 'failed',
          error_code: code,
          error_message: String(e.message ?? err).slice(0, 2000),
        });
        // A transient model failure is retried; anything else leaves the template plan.
        if (e.retryable === true) throw err;
        return { source: row.source };
      }
      const cost = costUsd(result.usage, deps.prices[result.modelId] ?? deps.prices[model.modelId]);
      const plan = parseModelPlan(result.text, current);
      await finishAgentRun(db, run.id, {
        status: plan ? 'succeeded' : 'failed',
        error_code: plan ? null : 'model_bad_response',
        error_message: plan ? null : 'the answer was not a remediation plan',
        input_tokens: result.usage.inputTokens,
        cached_input_tokens: result.usage.cachedInputTokens,
        output_tokens: result.usage.outputTokens,
        cost_usd: cost,
        model_id: result.modelId,
      });
      if (!plan) return { source: row.source };
      return db.transaction(async (trx) => {
        const locked = await getRemediationById(trx, remediationId, true);
        // Approved (or moved) while the model was thinking: the approved plan stands.
        if (locked.status !== 'proposed' || locked.source !== 'template')
          return { source: locked.source };
        await updateRemediation(trx, remediationId, {
          ...plan,
          source: 'model',
          agent_run_id: run.id,
        });
        await recordWrite(trx, {
          workspaceId: row.workspace_id,
          actorId: null,
          actorLogin: 'system',
          tokenId: null,
          requestId: null,
          action: 'remediation.drafted',
          resourceType: 'remediation',
          resourceId: row.id,
          details: {
            title: row.title,
            agent_run_id: run.id,
            model_id: result.modelId,
            cost_usd: cost,
          },
        });
        return { source: 'model' };
      });
    },

    /**
     * Applies one requested move under a row lock: checks the state machine again, records the
     * approval or rejection, stamps the time of the move, and writes the audit event and
     * activity item. A retry with the same request key answers as the first attempt did.
     */
    async applyRemediationMove(
      remediationId: string,
      requestKey: string,
      req: RemediationMoveRequest,
    ): Promise<{ status: RemediationStatus; version: number }> {
      return db.transaction(async (trx) => {
        const row = await getRemediationById(trx, remediationId, true);
        if (row.last_request_key === requestKey)
          return { status: row.status, version: row.version };
        const refused = checkRemediationMove(
          { status: row.status, createdBy: row.created_by },
          { to: req.to, actorId: req.actor.id },
        );
        if (refused) refusal(refused);
        const now = new Date();
        const changes: Partial<RemediationRow> = {
          status: req.to,
          latest_rationale: req.rationale,
          last_request_key: requestKey,
        };
        const details: Record<string, unknown> = { title: row.title, from: row.status, to: req.to };
        if (req.to === 'approved' || req.to === 'rejected') {
          const approval = await insertRemediationApproval(trx, {
            remediation_id: row.id,
            ...approvalRecord('remediation', req.actor, req.to, req.rationale),
          });
          details.approval_id = approval.id;
          if (req.to === 'approved') {
            changes.approved_by = req.actor.id;
            changes.approved_at = now;
          } else changes.rejected_at = now;
        } else if (req.to === 'in_progress') {
          changes.started_at = now;
          // Work restarted after a failed verification: the next audit verifies afresh.
          changes.done_at = null;
        } else if (req.to === 'done') changes.done_at = now;
        const after = await updateRemediation(trx, row.id, changes);
        await recordWrite(trx, {
          workspaceId: row.workspace_id,
          ...writtenBy(req.actor),
          action: ACTIONS[req.to] ?? 'remediation.transitioned',
          resourceType: 'remediation',
          resourceId: row.id,
          details,
        });
        return { status: after.status, version: after.version };
      });
    },

    /**
     * Checks a done remediation's findings against the newest audit of its repository completed
     * since it was marked done (once per audit): all resolved -> verified; any still observed ->
     * not_verified; an audit that looked at too little to say -> stays done.
     */
    async verifyRemediation(remediationId: string): Promise<{ status: RemediationStatus }> {
      return db.transaction(async (trx) => {
        const row = await getRemediationById(trx, remediationId, true);
        if (row.status !== 'done' || !row.repository_id || !row.done_at)
          return { status: row.status };
        const audit = await latestAuditCompletedSince(
          trx,
          row.workspace_id,
          row.repository_id,
          row.done_at,
        );
        if (!audit || audit.id === row.verification_audit_id) return { status: row.status };
        const findings = await findingsOfRemediation(trx, row.id);
        const result = verifyFindings(findings, audit.id, new Date());
        if (!result) {
          await updateRemediation(trx, row.id, { verification_audit_id: audit.id });
          await system(row, 'remediation.verification_inconclusive', { audit_id: audit.id });
          return { status: row.status };
        }
        const verified = result.outcome === 'verified';
        const after = await updateRemediation(trx, row.id, {
          status: result.outcome,
          verification: result,
          verification_audit_id: audit.id,
          ...(verified ? { verified_at: new Date() } : {}),
        });
        await system(row, verified ? 'remediation.verified' : 'remediation.not_verified', {
          audit_id: audit.id,
          resolved_finding_ids: result.resolved_finding_ids,
          open_finding_ids: result.open_finding_ids,
        });
        return { status: after.status };
      });
    },

    /** Workflow ids of the done remediations of a completed audit's repository. */
    async doneRemediationsOfAudit(auditId: string): Promise<string[]> {
      const place = await auditPlace(db, auditId);
      // An upload audit (even one naming the repository) verifies nothing: no signal.
      if (!place?.repository_id || place.audit_type !== 'repository') return [];
      return doneRemediationWorkflows(db, place.workspace_id, place.repository_id);
    },
  };
}

export type RemediationActivities = ReturnType<typeof createRemediationActivities>;
