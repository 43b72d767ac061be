/**
 * What the audit activities share: their dependencies, stage bookkeeping (stage rows and marks,
 * the audit's begin and end, logs) and the step wrapper that rides out a database outage.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { closeRunningAgentRuns } from '../../db/agents';
import {
  appendLog,
  endRunningStages,
  getAuditById,
  lockAuditStatus,
  markStageEnded,
  markStageRunning,
  skipPendingStages,
  markAuditRunning,
  updateAudit,
  type AuditRow,
  type LogInput,
} from '../../db/audits';
import { type SourceType } from '../../domain/audits/classify';
import { isDatabaseUnavailable } from '../../db/errors';
import { STAGE_KEYS, type StageKeyName } from '../../domain/contract/values';
import type { BlobStore } from '../../platform/blob-store';
import { stageDuration } from '../../platform/metrics';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { settleFindings } from '../controls';
import { rideOutDatabaseOutage } from '../outage';
import type { ModelProvider } from './agents/model';
import { type ModelPrice } from '../../domain/audits/pricing';
import type { Agent } from './agents/types';
import type {
  AuditFinalStatus,
  AuditPlan,
  StageEnd,
  StageMark,
  StageOutcome,
  StepMarks,
} from './types';

export interface AuditActivityDeps {
  db: Knex;
  log: Logger;
  config: Config;
  blobs: BlobStore;
  agents: readonly Agent[];
  model: ModelProvider | null;
  prices: Record<string, ModelPrice>;
}

const ALL_TYPES: SourceType[] = ['code', 'cloud', 'cicd'];

export function fail(code: string, message: string, retryable: boolean, details?: unknown): never {
  throw ApplicationFailure.create({
    type: code,
    message,
    nonRetryable: !retryable,
    details: details ? [details] : [],
  });
}

export function requestedTypes(audit: AuditRow): SourceType[] {
  const types = (audit.source_scope as { source_types?: SourceType[] }).source_types;
  return types?.length ? types : ALL_TYPES;
}

/** Whether `signal` was aborted because this worker is shutting down (not by the workflow). */
export function isWorkerShutdown(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as Error | undefined)?.message === 'WORKER_SHUTDOWN';
}

/** Heartbeats every few seconds while `work` runs, so a lost worker is noticed quickly. */
export async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), 2000);
  try {
    ctx.heartbeat();
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * The bookkeeping every step shares: stage marks, the audit's begin and end, and riding out a
 * database outage.
 */
export function createSteps(deps: AuditActivityDeps) {
  const { db, config } = deps;
  const log = (auditId: string, entry: LogInput) => appendLog(db, auditId, entry);
  /**
   * Marks a pending stage running. Stages move pending -> running -> ended once: a retried step
   * that marks them again changes and logs nothing.
   */
  const markStarted = async (auditId: string, key: StageKeyName): Promise<void> => {
    await markStageRunning(db, auditId, key, { level: 'info', message: `stage ${key} started` });
  };

  /**
   * Ends a pending or running stage, logged once. An ended stage stays as it is: a retried step
   * changes nothing, and a step finishing after the audit was cancelled cannot undo `cancelled`.
   */
  const markFinished = async (auditId: string, key: StageKeyName, outcome: StageEnd) => {
    const level =
      outcome.status === 'failed' ? 'error' : outcome.status === 'completed' ? 'info' : 'warning';
    const message = `stage ${key} ${outcome.status}${outcome.errorCode ? ` (${outcome.errorCode})` : ''}${outcome.summary ? `: ${outcome.summary}` : ''}`;
    const move = await markStageEnded(db, auditId, key, outcome, { level, message });
    if (move.moved && move.seconds !== null)
      stageDuration.observe({ stage: key, status: outcome.status }, move.seconds);
  };

  /** Applies stage marks in order; `own` is the summary of the step that just succeeded. */
  const applyMarks = async (auditId: string, marks: StageMark[], own: string | null) => {
    for (const mark of marks) {
      if (mark.status === 'running') await markStarted(auditId, mark.key);
      else if (mark.status === 'skipped')
        await markFinished(auditId, mark.key, {
          status: 'skipped',
          summary: mark.summary,
          errorCode: null,
        });
      else
        await markFinished(auditId, mark.key, {
          status: 'completed',
          summary:
            [...mark.summaries, ...(own === null ? [] : [own])].join('; ') || 'nothing to do',
          errorCode: null,
        });
    }
  };

  /** Marks the audit running and decides which stages and agents run. */
  const begin = async (auditId: string): Promise<AuditPlan> => {
    const audit = await getAuditById(db, auditId);
    if (audit.status === 'queued' && (await markAuditRunning(db, auditId))) {
      await log(auditId, { level: 'info', source: 'stage', message: 'audit started' });
    }
    const types = requestedTypes(audit);
    const gaps: Array<Record<string, unknown>> = [];
    const stages = STAGE_KEYS.map((key) => {
      let skip: string | null = null;
      if ((key === 'code' || key === 'cloud' || key === 'cicd') && !types.includes(key)) {
        skip = `not in source_scope.source_types`;
      }
      const agents = deps.agents
        .filter((a) => a.stage === key)
        .filter((a) => {
          if (!a.modelBacked) return true;
          if (!audit.deep_review) return false;
          if (!deps.model) {
            gaps.push({
              kind: 'deep_review',
              reason: 'no_model_provider',
              message: `deep_review was requested but no model provider is configured (MODEL_BASE_URL, MODEL_ID); ${a.key} did not run`,
            });
            return false;
          }
          return true;
        })
        .map((a) => a.key);
      return { key, skip, agents };
    });
    if (gaps.length) await updateAudit(db, auditId, { coverage_gaps: gaps });
    return {
      auditId,
      workspaceId: audit.workspace_id,
      repositoryId: audit.repository_id,
      stages,
    };
  };

  const finish = async (
    auditId: string,
    status: AuditFinalStatus,
    errorCode: string | null,
  ): Promise<void> => {
    const ended = await db.transaction(async (trx) => {
      // Once only: a retried step (or local activity) that ends the audit again changes nothing.
      const current = await lockAuditStatus(trx, auditId);
      if (['completed', 'failed', 'cancelled'].includes(current as string)) return false;
      await skipPendingStages(trx, auditId);
      if (status !== 'completed') {
        await endRunningStages(
          trx,
          auditId,
          status === 'cancelled' ? 'cancelled' : 'failed',
          status === 'cancelled' ? 'cancelled' : errorCode,
        );
        await closeRunningAgentRuns(
          trx,
          auditId,
          status === 'cancelled'
            ? { status: 'cancelled', errorCode: 'cancelled', message: 'The audit was cancelled.' }
            : {
                status: 'abandoned',
                errorCode: 'audit_failed',
                message: `The audit failed (${errorCode ?? 'unknown'}) while this attempt was running; it was abandoned.`,
              },
        );
      }
      await updateAudit(trx, auditId, {
        status,
        error_code: errorCode,
        completed_at: trx.fn.now(),
      });
      if (status === 'completed') await settleFindings(trx, auditId);
      return true;
    });
    if (!ended) return;
    await log(auditId, {
      level: status === 'completed' ? 'info' : status === 'cancelled' ? 'warning' : 'error',
      source: 'stage',
      message: `audit ${status}${errorCode ? ` (${errorCode})` : ''}`,
    });
  };

  /**
   * Runs `work`; when the database is unreachable, waits for it and runs `work` again in the same
   * attempt: an outage spends no attempt of the step (its agents' attempts stay truthful). Every
   * step is safe to run again (absolute writes keyed by audit, stage, agent and attempt).
   */
  const outageAware = async <T>(work: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await work();
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        // Returns once the database answers; past DEPENDENCY_OUTAGE_BOUND_SECONDS it throws.
        await rideOutDatabaseOutage(err, {
          db,
          log: deps.log,
          boundSeconds: config.dependencyOutageBoundSeconds,
        });
      }
    }
  };

  /**
   * One step of a stage with its stage marks: the `before` marks, the work, then the `after`
   * marks and, for the last step of a successful audit, the audit's end. Done here rather than in
   * separate local activities so that a workflow task between two steps has no database work.
   */
  const step = async (
    auditId: string,
    marks: StepMarks | undefined,
    work: () => Promise<StageOutcome>,
  ): Promise<StageOutcome> =>
    outageAware(async () => {
      if (marks?.before?.length) await applyMarks(auditId, marks.before, null);
      const outcome = await work();
      if (marks?.after?.length) await applyMarks(auditId, marks.after, outcome.summary);
      if (marks?.finishAudit) await finish(auditId, 'completed', null);
      return outcome;
    });

  return { log, markFinished, applyMarks, begin, finish, outageAware, step };
}

export type Steps = ReturnType<typeof createSteps>;
