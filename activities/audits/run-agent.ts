/**
 * One attempt of one agent: a cached artifact, or a run recorded with its timings, tokens and
 * cost, within the audit's budgets.
 */
import { Context } from '@temporalio/activity';
import crypto from 'node:crypto';
import {
  artifactRefsOfAudit,
  artifactsOfAudit,
  artifactTextsOfAudit,
  earlierSuccess,
  setAgentRunContextHash,
  findCachedArtifact,
  finishAgentRun,
  insertArtifact,
  startAgentRun,
} from '../../db/agents';
import { snapshotTextOfAudit } from '../../db/architecture';
import {
  claimStageAttempt,
  getAuditById,
  sourceFiles,
  stagesOf,
  updateAudit,
} from '../../db/audits';
import { isDatabaseUnavailable } from '../../db/errors';
import { costUsd } from '../../domain/audits/pricing';
import {
  artifactOverflow,
  countsOf,
  jsonBytesUpTo,
  timeOverflow,
  type BudgetOverflow,
} from '../../domain/audits/budgets';
import { agentAttempts, agentCost, agentTokens } from '../../platform/metrics';
import { AgentError } from './agents/types';
import type { StageOutcome, StepMarks } from './types';
import { fail, isWorkerShutdown, withHeartbeat, type AuditActivityDeps, type Steps } from './steps';

/** Stages whose deterministic agents count against the analysis-time budget. */
const ANALYSIS_STAGES = new Set<string>(['code', 'cloud', 'cicd', 'reconcile', 'controls']);

export function createRunAgent(deps: AuditActivityDeps, steps: Steps) {
  const { db, blobs, config } = deps;
  const agentsByKey = new Map(deps.agents.map((a) => [a.key, a]));
  const { log, step } = steps;
  return async function runAgent(
    auditId: string,
    agentKey: string,
    marks?: StepMarks,
  ): Promise<StageOutcome> {
    return step(auditId, marks, async () => {
      const agent = agentsByKey.get(agentKey);
      if (!agent)
        fail('unknown_agent', `No agent ${agentKey} is registered in this worker.`, false);
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      const audit = await getAuditById(db, auditId);
      const modelId = agent.modelBacked ? (deps.model?.modelId ?? 'unconfigured') : 'deterministic';
      const identity = {
        audit_id: auditId,
        workspace_id: audit.workspace_id,
        stage: agent.stage,
        agent_key: agent.key,
        agent_version: agent.version,
        model_id: modelId,
        reasoning_effort: agent.reasoningEffort,
        attempt,
        model_backed: agent.modelBacked,
        cost_kind: agent.costKind,
      };
      // This attempt already succeeded, before a database outage made its step run again in
      // place (activities/audits/steps.ts, outageAware): its result stands, recorded once.
      const own = await earlierSuccess(db, auditId, agent.key, attempt + 1);
      if (own?.attempt === attempt && own.artifact_id)
        return { summary: `${agent.key}: result of attempt ${attempt}` };
      // The attempt is on record before any work (its context hash follows once known).
      const run = await startAgentRun(db, { ...identity, context_hash: '' });
      // The stage's attempt is the highest of its agents' attempts (not 1 when they ran twice).
      await claimStageAttempt(db, auditId, agent.stage, attempt);
      const files =
        agent.input === 'all'
          ? await sourceFiles(db, auditId)
          : await sourceFiles(db, auditId, agent.input);
      const inputHash = crypto
        .createHash('sha256')
        .update(
          files
            // Whether the content was read: a result from a partial read is never reused for a
            // full one (a file over MAX_STORED_FILE_BYTES has a hash but was not analysed).
            .map(
              (f) =>
                `${f.path}\t${f.sha256 ?? f.link_target ?? ''}\t${f.source_type ?? ''}\t${f.stored ? 'read' : 'unread'}`,
            )
            .join('\n'),
        )
        .digest('hex');
      const contextHash = crypto
        .createHash('sha256')
        .update(
          JSON.stringify([
            agent.key,
            agent.version,
            modelId,
            agent.reasoningEffort,
            inputHash,
            // The limits under which the files were read (docs/decisions.md, durability).
            { max_stored_file_bytes: config.maxStoredFileBytes },
          ]),
        )
        .digest('hex');

      await setAgentRunContextHash(db, run.id, contextHash);

      /** Ends this attempt with an existing artifact (no run, no cost) and says why. */
      const reuse = async (artifactId: string, level: 'info' | 'warning', message: string) => {
        await finishAgentRun(db, run.id, {
          status: 'succeeded',
          cache_hit: true,
          artifact_id: artifactId,
        });
        agentAttempts.inc({ agent: agent.key, outcome: 'cached' });
        await log(auditId, {
          level,
          source: 'scanner',
          message: `${agent.key}: ${message}`,
          details: { artifact_id: artifactId },
        });
      };

      // An earlier attempt already succeeded and only its report to Temporal was lost: its
      // result stands (no second run, no second cost).
      const done = await earlierSuccess(db, auditId, agent.key, attempt);
      if (done?.artifact_id) {
        await reuse(
          done.artifact_id,
          'warning',
          `attempt ${done.attempt} had succeeded but its completion was lost; its result is kept`,
        );
        return { summary: `${agent.key}: result of attempt ${done.attempt}` };
      }

      if (agent.cacheable) {
        const cached = await findCachedArtifact(db, audit.workspace_id, contextHash);
        if (cached) {
          await reuse(cached.id, 'info', 'reused the artifact of an identical earlier run');
          return { summary: `${agent.key}: cached` };
        }
      }

      // The analysis-time budget runs from the first analysis stage's start; past it this
      // attempt does not start, and a running analysis is aborted (its pool thread ended).
      let budgetSignal: AbortSignal | undefined;
      let overTime: BudgetOverflow | null = null;
      if (!agent.modelBacked && ANALYSIS_STAGES.has(agent.stage)) {
        const stages = (await stagesOf(db, [auditId])).get(auditId) ?? [];
        const started = Math.min(
          Date.now(),
          ...stages
            .filter((st) => ANALYSIS_STAGES.has(st.key) && st.started_at)
            .map((st) => st.started_at!.getTime()),
        );
        const elapsed = Date.now() - started;
        overTime = timeOverflow(elapsed, config.auditBudgets.analysisSeconds);
        if (!overTime)
          budgetSignal = AbortSignal.timeout(config.auditBudgets.analysisSeconds * 1000 - elapsed);
      }

      try {
        if (overTime) throw new AgentError(overTime.code, overTime.message, false);
        const signal = budgetSignal
          ? AbortSignal.any([ctx.cancellationSignal, budgetSignal])
          : ctx.cancellationSignal;
        const result = await withHeartbeat(() =>
          agent.run({
            audit,
            files,
            readFile: (sha) => blobs.get(sha),
            priorArtifactRefs: async () =>
              (await artifactRefsOfAudit(db, auditId)).map((a) => ({
                agentKey: a.agent_key,
                stage: a.stage,
                artifactId: a.id,
                kind: a.kind,
                title: a.title,
              })),
            priorArtifactTexts: async () =>
              (await artifactTextsOfAudit(db, auditId)).map((a) => ({
                agentKey: a.agent_key,
                json: a.json,
              })),
            priorArtifacts: async () =>
              (await artifactsOfAudit(db, auditId)).map((a) => ({
                agentKey: a.agent_key,
                stage: a.stage,
                artifact: a.artifact.artifact,
              })),
            snapshotText: () => snapshotTextOfAudit(db, auditId),
            model: deps.model,
            attempt,
            signal,
            log: (level, message, details) =>
              log(auditId, {
                level,
                source: 'scanner',
                message: `${agent.key}: ${message}`,
                details,
              }),
          }),
        );
        // Budgets on what the step produced: deterministic, so the failure is not retried.
        // An artifact built in the analysis pool arrives as JSON text with its counts: the
        // main thread neither walks nor serialises it (issue 24, fair sharing).
        const overflow =
          'artifactText' in result
            ? artifactOverflow(
                result.artifactText,
                Buffer.byteLength(result.artifactText.json),
                config.auditBudgets,
              )
            : artifactOverflow(
                countsOf(result.artifact),
                jsonBytesUpTo(result.artifact, config.auditBudgets.maxOutputBytes),
                config.auditBudgets,
              );
        if (overflow) throw new AgentError(overflow.code, overflow.message, false);
        const usage = result.usage ?? { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
        const usedModel = result.modelId ?? modelId;
        const cost = agent.modelBacked
          ? costUsd(usage, deps.prices[usedModel] ?? deps.prices[modelId])
          : '0';
        const artifact = await insertArtifact(db, {
          workspace_id: audit.workspace_id,
          kind: result.kind,
          title: result.title,
          artifactJson:
            'artifactText' in result ? result.artifactText.json : JSON.stringify(result.artifact),
          evidence_ids: result.evidenceIds ?? [],
          confidence: result.confidence,
        });
        await finishAgentRun(db, run.id, {
          status: 'succeeded',
          artifact_id: artifact.id,
          input_tokens: usage.inputTokens,
          cached_input_tokens: usage.cachedInputTokens,
          output_tokens: usage.outputTokens,
          cost_usd: cost,
          model_id: usedModel,
        });
        agentAttempts.inc({ agent: agent.key, outcome: 'succeeded' });
        if (agent.modelBacked) {
          agentCost.inc({ agent: agent.key, model: usedModel }, Number(cost));
          agentTokens.inc({ agent: agent.key, kind: 'input' }, usage.inputTokens);
          agentTokens.inc({ agent: agent.key, kind: 'cached_input' }, usage.cachedInputTokens);
          agentTokens.inc({ agent: agent.key, kind: 'output' }, usage.outputTokens);
          await updateAudit(db, auditId, { scanner_only: false });
        }
        return { summary: result.summary };
      } catch (err) {
        // A worker shutting down past its grace cuts the attempt off: not a cancellation of
        // the audit, but a failure to retry elsewhere at once (docs/decisions.md, durability).
        const shutdown = isWorkerShutdown(ctx.cancellationSignal);
        const cancelled = ctx.cancellationSignal.aborted && !shutdown;
        // The database went away under the run: not the agent's failure, and no attempt spent;
        // the step waits for the database and runs again in this attempt (steps.ts).
        if (!cancelled && !shutdown && isDatabaseUnavailable(err)) throw err;
        // The budget's timer ended the analysis: that is the failure, not the abort it caused.
        const timedOut =
          !cancelled && !shutdown && budgetSignal?.aborted === true && !(err instanceof AgentError)
            ? timeOverflow(Infinity, config.auditBudgets.analysisSeconds)
            : null;
        const code = cancelled
          ? 'cancelled'
          : shutdown
            ? 'worker_shutdown'
            : timedOut
              ? timedOut.code
              : err instanceof AgentError
                ? err.code
                : 'agent_crashed';
        const retryable = shutdown
          ? true
          : timedOut
            ? false
            : err instanceof AgentError
              ? err.retryable
              : true;
        const message = timedOut
          ? timedOut.message
          : err instanceof Error
            ? err.message
            : String(err);
        await finishAgentRun(db, run.id, {
          status: cancelled ? 'cancelled' : 'failed',
          error_code: code,
          error_message: message.slice(0, 2000),
        });
        agentAttempts.inc({ agent: agent.key, outcome: cancelled ? 'cancelled' : 'failed' });
        await log(auditId, {
          level: retryable && !cancelled ? 'warning' : 'error',
          source: 'scanner',
          message: `${agent.key} attempt ${attempt} failed: ${code}`,
          details: { error: message.slice(0, 500) },
        });
        if (cancelled) throw err;
        fail(code, message, retryable);
      }
    });
  };
}
