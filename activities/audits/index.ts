/**
 * Activities of the audit workflow: bookkeeping (audit and stage rows, logs), source
 * acquisition, and agent runs. Every function is safe to retry: each writes absolute states,
 * keyed by the audit, stage, agent and attempt.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import crypto from 'node:crypto';
import fs from 'node:fs';
import type {
  Entity,
  IdentityConflict,
  Relationship,
  StoredEvidence,
} from '../../analysis/reconcile';
import { architectureStatus } from '../../analysis/uncertainty';
import type { VariantChoice } from '../../analysis/variants';
import {
  artifactsOfAudit,
  earlierSuccess,
  closeRunningAgentRuns,
  recordInterruptedAttempt,
  setAgentRunContextHash,
  findCachedArtifact,
  finishAgentRun,
  insertArtifact,
  startAgentRun,
} from '../../db/agents';
import {
  allocateSnapshotVersion,
  evidenceOf,
  insertEvidence,
  insertSnapshot,
  latestSnapshot,
  snapshotOfAudit,
} from '../../db/architecture';
import {
  appendLog,
  claimStageAttempt,
  endRunningStages,
  getAuditById,
  lockAuditStatus,
  markStageEnded,
  markStageRunning,
  replaceSourceFiles,
  skipPendingStages,
  sourceFiles,
  stagesOf,
  markAuditRunning,
  updateAudit,
  type AuditRow,
  type LogInput,
  type SourceFileRow,
} from '../../db/audits';
import { ingestedEvidenceOf } from '../../db/ingestion';
import { findRepository } from '../../db/repositories';
import { findUpload } from '../../db/uploads';
import { findWorkspace } from '../../db/workspaces';
import { classifyPath, type SourceType } from '../../domain/audits/classify';
import { isDatabaseUnavailable } from '../../db/errors';
import { costUsd } from '../../domain/audits/pricing';
import { SourceError } from '../../domain/audits/source-error';
import { isOtherBranch } from '../../domain/repositories/git-ref';
import { scopeFilter } from '../../domain/audits/source-scope';
import {
  artifactOverflow,
  budgetCut,
  filesBudgetGap,
  jsonBytesUpTo,
  timeOverflow,
  type BudgetOverflow,
} from '../../domain/audits/budgets';
import { STAGE_KEYS, type StageKeyName } from '../../domain/contract/values';
import { applyIngested, localIngestedId, NO_LOCATION } from '../../domain/architecture/ingested';
import { DEFAULT_ARCHIVE_LIMITS, readArchive } from '../../platform/archive';
import type { BlobStore } from '../../platform/blob-store';
import { agentAttempts, agentCost, agentTokens, stageDuration } from '../../platform/metrics';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { sourcePolicyOf } from '../../platform/source-access';
import { recordChangeGate } from '../changes';
import { auditFinished, ensureBaselineAudit } from '../changes/baseline';
import type { AuditStart } from '../../domain/workflow-starts';
import { persistControls, settleFindings } from '../controls';
import { rideOutDatabaseOutage } from '../outage';
import { recordUncertainty } from '../uncertainty';
import type { ModelProvider } from './agents/model';
import { type ModelPrice } from '../../domain/audits/pricing';
import type { Agent } from './agents/types';
import { AgentError } from './agents/types';
import { attemptFolder, attemptGuard } from './attempts';
import { fetchCommit, listTree, readBlobs } from './source/git';
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
/** Stages whose deterministic agents count against the analysis-time budget. */
const ANALYSIS_STAGES = new Set<string>(['code', 'cloud', 'cicd', 'reconcile', 'controls']);

function fail(code: string, message: string, retryable: boolean, details?: unknown): never {
  throw ApplicationFailure.create({
    type: code,
    message,
    nonRetryable: !retryable,
    details: details ? [details] : [],
  });
}

function requestedTypes(audit: AuditRow): SourceType[] {
  const types = (audit.source_scope as { source_types?: SourceType[] }).source_types;
  return types?.length ? types : ALL_TYPES;
}

/** Whether `signal` was aborted because this worker is shutting down (not by the workflow). */
function isWorkerShutdown(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as Error | undefined)?.message === 'WORKER_SHUTDOWN';
}

/** Heartbeats every few seconds while `work` runs, so a lost worker is noticed quickly. */
async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), 2000);
  try {
    ctx.heartbeat();
    return await work();
  } finally {
    clearInterval(timer);
  }
}

export function createAuditActivities(deps: AuditActivityDeps) {
  const { db, blobs, config } = deps;
  const agentsByKey = new Map(deps.agents.map((a) => [a.key, a]));
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

  /** Runs `work`; when the database is unreachable, waits for it before failing the attempt. */
  const outageAware = async <T>(
    work: () => Promise<T>,
    afterOutage?: () => Promise<void>,
  ): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      await rideOutDatabaseOutage(err, {
        db,
        log: deps.log,
        boundSeconds: config.dependencyOutageBoundSeconds,
      });
      // The database answers again (or the error was another): what the outage kept from being
      // written goes on record before the attempt fails.
      if (afterOutage && isDatabaseUnavailable(err)) {
        await afterOutage().catch((e: unknown) =>
          deps.log.warn({ err: e }, 'could not record the attempt the outage interrupted'),
        );
      }
      throw err;
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
    ...rest:
      | [work: () => Promise<StageOutcome>]
      | [afterOutage: () => Promise<void>, work: () => Promise<StageOutcome>]
  ): Promise<StageOutcome> => {
    // `afterOutage` (before the work, so the work's function stays the last argument): what to
    // record once the database is back, when an outage interrupted the work.
    const [afterOutage, work] = rest.length === 1 ? [undefined, rest[0]] : rest;
    return outageAware(async () => {
      if (marks?.before?.length) await applyMarks(auditId, marks.before, null);
      const outcome = await work();
      if (marks?.after?.length) await applyMarks(auditId, marks.after, outcome.summary);
      if (marks?.finishAudit) await finish(auditId, 'completed', null);
      return outcome;
    }, afterOutage);
  };

  return {
    async stageFinished(auditId: string, key: StageKeyName, outcome: StageEnd): Promise<void> {
      await markFinished(auditId, key, outcome);
    },

    /** Stage marks the workflow could not hand to a step (e.g. an empty last stage). */
    async applyStageMarks(auditId: string, marks: StageMark[]): Promise<void> {
      await applyMarks(auditId, marks, null);
    },

    /** Stage `source`: fetch the exact commit (or unpack the upload), store files by content. */
    async acquireSource(
      auditId: string,
      marks?: StepMarks,
    ): Promise<StageOutcome & { plan?: AuditPlan }> {
      let plan: AuditPlan | undefined;
      // A stale attempt (paused past its heartbeat timeout, then resumed) stops before writing.
      const guard = attemptGuard(db, deps.log, {
        auditId,
        stage: 'source',
        attempt: Context.current().info.attempt,
        heartbeatTimeoutSeconds:
          (Context.current().info.heartbeatTimeoutMs ??
            config.agentHeartbeatTimeoutSeconds * 1000) / 1000,
      });
      await outageAware(() => guard.claim());
      if (marks?.beginAudit) {
        plan = await outageAware(async () => {
          const planned = await begin(auditId);
          const skipped = planned.stages.filter((s) => s.skip !== null);
          await applyMarks(
            auditId,
            skipped.map((s) => ({ key: s.key, status: 'skipped', summary: s.skip! })),
            null,
          );
          return planned;
        });
      }
      const outcome = await step(auditId, marks, async () => {
        const audit = await getAuditById(db, auditId);
        const scope = scopeFilter(
          audit.source_scope as { include?: string[]; exclude?: string[]; max_files?: number },
        );
        const rows: SourceFileRow[] = [];
        let truncated = 0;
        let overBudget = 0;
        // Paths accepted so far: a git tree is filtered before any row is read, so the bounds
        // count acceptances, not rows.
        let accepted = 0;
        const accept = (p: string) => {
          if (!scope.accepts(p)) return false;
          if (scope.maxFiles !== null && accepted >= scope.maxFiles) {
            truncated += 1;
            return false;
          }
          if (accepted >= config.auditBudgets.maxFiles) {
            overBudget += 1;
            return false;
          }
          accepted += 1;
          return true;
        };
        const addFile = async (p: string, data: Buffer | null, size: number) => {
          const stored = data !== null && size <= config.maxStoredFileBytes;
          const sha256 = data
            ? await (stored
                ? blobs.put(data)
                : Promise.resolve(crypto.createHash('sha256').update(data).digest('hex')))
            : null;
          const head =
            data && /\.ya?ml$/i.test(p) ? data.subarray(0, 4096).toString('utf8') : undefined;
          rows.push({
            audit_id: auditId,
            path: p,
            kind: 'file',
            size,
            sha256,
            link_target: null,
            source_type: classifyPath(p, head),
            stored,
          });
        };

        let source: Record<string, unknown>;
        try {
          if (audit.audit_type === 'repository') {
            const repo = await findRepository(db, audit.workspace_id, audit.repository_id!);
            if (!repo)
              fail(
                'repository_not_found',
                `Repository ${audit.repository_id} no longer exists.`,
                false,
              );
            const workspace = await findWorkspace(db, audit.workspace_id);
            const folder = await attemptFolder(
              config.workDir,
              auditId,
              Context.current().info.attempt,
            );
            const workDir = folder.dir;
            try {
              const branchRef = audit.commit_sha
                ? audit.branch_ref
                : (audit.branch_ref ?? repo.default_branch);
              // Another branch than the default is gated against the default branch at the
              // merge-base (docs/decisions.md, pull requests gated end to end).
              const baseRef = isOtherBranch(branchRef, repo.default_branch)
                ? repo.default_branch
                : null;
              const fetched = await withHeartbeat(() =>
                fetchCommit({
                  baseRef,
                  url: repo.url,
                  branchRef,
                  commitSha: audit.commit_sha,
                  workDir,
                  workspace: { id: audit.workspace_id, slug: workspace?.slug ?? '' },
                  policy: sourcePolicyOf(config),
                  timeoutMs: config.gitTimeoutMs,
                }),
              );
              await guard.check();
              await log(auditId, {
                level: 'info',
                source: 'stage',
                message: `fetched ${fetched.ref ?? 'commit'} at ${fetched.commitSha}`,
                details: { url: repo.url, commit_sha: fetched.commitSha, ref: fetched.ref },
              });
              const tree = await listTree(workDir, fetched.commitSha);
              const wanted = tree.filter((e) => e.kind !== 'submodule' && accept(e.path));
              const byId = new Map<string, typeof wanted>();
              for (const e of wanted) {
                const same = byId.get(e.objectId);
                if (same) same.push(e);
                else byId.set(e.objectId, [e]);
              }
              await withHeartbeat(() =>
                readBlobs(workDir, [...byId.keys()], async (objectId, data) => {
                  for (const e of byId.get(objectId) ?? []) {
                    if (e.kind === 'symlink') {
                      rows.push({
                        audit_id: auditId,
                        path: e.path,
                        kind: 'symlink',
                        size: 0,
                        sha256: null,
                        link_target: data.toString('utf8'),
                        source_type: null,
                        stored: false,
                      });
                    } else {
                      await addFile(e.path, data, e.size);
                    }
                  }
                }),
              );
              await guard.check();
              await updateAudit(db, auditId, {
                commit_sha: fetched.commitSha,
                branch_ref: branchRef ?? fetched.ref,
              });
              source = {
                kind: 'repository',
                repository_id: repo.id,
                upload_id: null,
                url: repo.url,
                branch_ref: branchRef ?? fetched.ref,
                commit_sha: fetched.commitSha,
                ...(baseRef
                  ? { base: { ref: baseRef, merge_base_sha: fetched.mergeBase ?? null } }
                  : {}),
              };
            } catch (err) {
              // git failing because its folder vanished under it says nothing about the source:
              // retried, never a final `commit_not_found`.
              if (err instanceof SourceError && !fs.existsSync(workDir))
                fail('work_dir_lost', `The scratch folder vanished: ${err.message}`, true);
              throw err;
            } finally {
              await folder.remove();
            }
          } else {
            const upload = await findUpload(db, audit.workspace_id, audit.upload_id!);
            if (!upload)
              fail('upload_not_found', `Upload ${audit.upload_id} does not exist.`, false);
            await withHeartbeat(() =>
              readArchive(
                blobs.pathOf(upload.sha256),
                upload.format,
                DEFAULT_ARCHIVE_LIMITS,
                async (entry) => {
                  if (!accept(entry.path)) return;
                  if (entry.kind === 'symlink') {
                    rows.push({
                      audit_id: auditId,
                      path: entry.path,
                      kind: 'symlink',
                      size: 0,
                      sha256: null,
                      link_target: entry.target,
                      source_type: null,
                      stored: false,
                    });
                  } else {
                    await addFile(entry.path, entry.data, entry.size);
                  }
                },
              ),
            );
            source = {
              kind: 'upload',
              repository_id: null,
              upload_id: upload.id,
              url: null,
              branch_ref: null,
              commit_sha: null,
            };
          }
        } catch (err) {
          if (err instanceof SourceError) {
            await guard.check();
            await log(auditId, {
              level: 'error',
              source: 'stage',
              message: err.message,
              details: { error_code: err.code, ...err.details },
            });
            fail(err.code, err.message, false);
          }
          throw err;
        }

        rows.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
        const manifestText = rows
          .map((r) => `${r.path}\t${r.kind}\t${r.size}\t${r.sha256 ?? r.link_target ?? ''}`)
          .join('\n');
        const manifestSha256 = crypto.createHash('sha256').update(manifestText).digest('hex');
        const bytes = rows.reduce((n, r) => n + r.size, 0);
        const bySourceType: Record<string, number> = {};
        for (const r of rows)
          bySourceType[r.source_type ?? 'other'] =
            (bySourceType[r.source_type ?? 'other'] ?? 0) + 1;

        // Written whole, and only while this attempt is the current one (a stale attempt that
        // resumed after a later one began must not replace its manifest).
        await guard.whileCurrent(async (trx) => {
          await replaceSourceFiles(trx, auditId, rows);
          const fresh = await getAuditById(trx, auditId);
          const gaps = [
            // The gaps this step writes are written afresh (a retried attempt must not repeat them).
            ...fresh.coverage_gaps.filter(
              (g) =>
                !['source_type', 'truncated', 'large_files', 'budget'].includes(g.kind as string),
            ),
          ];
          for (const type of requestedTypes(fresh)) {
            if (!bySourceType[type])
              gaps.push({
                kind: 'source_type',
                source_type: type,
                reason: 'no_files',
                message: `no ${type} files found in the source`,
              });
          }
          if (truncated > 0)
            gaps.push({
              kind: 'truncated',
              reason: 'max_files',
              message: `${truncated} files beyond source_scope.max_files were not read`,
            });
          if (overBudget > 0) gaps.push(filesBudgetGap(config.auditBudgets.maxFiles, overBudget));
          const unstored = rows.filter((r) => r.kind === 'file' && !r.stored).length;
          if (unstored > 0)
            gaps.push({
              kind: 'large_files',
              reason: 'size_limit',
              message: `${unstored} files over ${config.maxStoredFileBytes} bytes were listed but not read`,
            });

          const contextHash = crypto
            .createHash('sha256')
            .update(
              JSON.stringify([
                manifestSha256,
                fresh.source_scope,
                fresh.deep_review,
                // What was read, not only what was listed.
                { max_stored_file_bytes: config.maxStoredFileBytes, unread: unstored },
              ]),
            )
            .digest('hex');
          await updateAudit(trx, auditId, {
            source: {
              ...source,
              file_count: rows.length,
              byte_count: bytes,
              manifest_sha256: manifestSha256,
            },
            source_manifest: {
              sha256: manifestSha256,
              file_count: rows.length,
              byte_count: bytes,
              by_source_type: bySourceType,
              truncated_files: truncated,
            },
            coverage_gaps: gaps,
            context_hash: contextHash,
          });
        });
        const base = (source as { base?: { merge_base_sha: string | null } }).base;
        return {
          summary: `${rows.length} files, ${bytes} bytes, manifest ${manifestSha256.slice(0, 12)}`,
          ...(base?.merge_base_sha ? { baseline: true } : {}),
        };
      });
      return plan ? { ...outcome, plan } : outcome;
    },

    /** One attempt of one agent: cached artifact, or a run recorded with timings, tokens and cost. */
    async runAgent(auditId: string, agentKey: string, marks?: StepMarks): Promise<StageOutcome> {
      /** Who this attempt is, once the audit was read: what an outage's record needs. */
      let identity: Parameters<typeof recordInterruptedAttempt>[1] | undefined;
      /** The database went away under this attempt and is back: the attempt goes on record. */
      const afterOutage = async () => {
        const attempt = Context.current().info.attempt;
        const agent = agentsByKey.get(agentKey);
        if (!agent) return;
        identity ??= {
          audit_id: auditId,
          workspace_id: (await getAuditById(db, auditId)).workspace_id,
          stage: agent.stage,
          agent_key: agent.key,
          agent_version: agent.version,
          model_id: agent.modelBacked ? (deps.model?.modelId ?? 'unconfigured') : 'deterministic',
          reasoning_effort: agent.reasoningEffort,
          attempt,
          model_backed: agent.modelBacked,
          cost_kind: agent.costKind,
        };
        await recordInterruptedAttempt(
          db,
          identity,
          'database_unavailable',
          `Attempt ${attempt} lost the database while it ran; the next attempt runs it again.`,
        );
      };
      return step(auditId, marks, afterOutage, async () => {
        const agent = agentsByKey.get(agentKey);
        if (!agent)
          fail('unknown_agent', `No agent ${agentKey} is registered in this worker.`, false);
        const ctx = Context.current();
        const attempt = ctx.info.attempt;
        const audit = await getAuditById(db, auditId);
        const modelId = agent.modelBacked
          ? (deps.model?.modelId ?? 'unconfigured')
          : 'deterministic';
        identity = {
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
            budgetSignal = AbortSignal.timeout(
              config.auditBudgets.analysisSeconds * 1000 - elapsed,
            );
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
              priorArtifacts: async () =>
                (await artifactsOfAudit(db, auditId)).map((a) => ({
                  agentKey: a.agent_key,
                  stage: a.stage,
                  artifact: a.artifact.artifact,
                })),
              snapshot: async () => {
                const snap = await snapshotOfAudit(db, auditId);
                if (!snap) return null;
                const rows = await evidenceOf(db, snap.id);
                return {
                  entities: snap.entities as unknown as Entity[],
                  relationships: snap.relationships as unknown as Relationship[],
                  evidence: rows.map((e) => ({
                    id: e.id,
                    source_type: e.source_type as StoredEvidence['source_type'],
                    provider: e.provider,
                    evidence_kind: e.evidence_kind,
                    subject_key: e.subject_key,
                    relationship_kind: e.relationship_kind,
                    object_key: e.object_key,
                    // Ingested evidence may have no location (a runtime trace).
                    location: (e.location ?? {
                      ...NO_LOCATION,
                    }) as unknown as StoredEvidence['location'],
                    summary: e.summary,
                    content_sha256: e.content_sha256,
                    attributes: e.attributes,
                  })),
                };
              },
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
          const overflow = artifactOverflow(
            result.artifact,
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
            artifact: result.artifact,
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
          // The budget's timer ended the analysis: that is the failure, not the abort it caused.
          const timedOut =
            !cancelled &&
            !shutdown &&
            budgetSignal?.aborted === true &&
            !(err instanceof AgentError)
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
    },

    /**
     * Writes the audit's architecture snapshot from the reconcile artifact, once: evidence gets
     * stable uuids, entities and relationships keep the first time the repository's earlier
     * snapshots observed them. One transaction, so a snapshot is whole or absent.
     */
    async persistArchitecture(auditId: string, marks?: StepMarks): Promise<StageOutcome> {
      // Heartbeats while it writes: a 50,000-evidence snapshot takes longer than the heartbeat
      // timeout, and a silent step would be timed out and run again. (Only the long writes do:
      // elsewhere a step that stops making progress must still time out and be retried.)
      return step(auditId, marks, () =>
        withHeartbeat(async () => {
          const audit = await getAuditById(db, auditId);
          const existing = await snapshotOfAudit(db, auditId);
          if (existing) return { summary: `snapshot ${existing.version} already stored` };
          const produced = (await artifactsOfAudit(db, auditId, 'reconcile')).find(
            (a) => a.agent_key === 'reconcile',
          );
          if (!produced) fail('reconcile_missing', 'The reconcile stage produced no graph.', false);
          const graph = produced.artifact.artifact as unknown as {
            entities: Entity[];
            relationships: Relationship[];
            evidence: StoredEvidence[];
            gaps?: Array<{ path: string; reason: string; message: string }>;
            conflicts?: IdentityConflict[];
            variants?: VariantChoice[];
          };
          const uuidOf = (local: string) => {
            const h = crypto.createHash('sha256').update(`${auditId}:${local}`).digest('hex');
            return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
          };
          const ids = (list: string[]) => list.map(uuidOf);
          const previous = audit.repository_id
            ? await latestSnapshot(db, audit.workspace_id, audit.repository_id, auditId)
            : undefined;
          // Evidence from outside the repository (ingestEvidence) corroborates or contradicts what
          // the files declare (domain/architecture/ingested.ts); coverage stays the files' own.
          const ingestedUntil = new Date();
          const ingestedRecords = audit.repository_id
            ? await ingestedEvidenceOf(
                db,
                audit.repository_id,
                new Date(ingestedUntil.getTime() - config.ingestedEvidenceWindowDays * 86_400_000),
                ingestedUntil,
              )
            : [];
          const ingested = applyIngested(graph, ingestedRecords);
          const ingestedAt = new Map(
            ingestedRecords.map((r) => [localIngestedId(r.id), r] as const),
          );
          const allEvidence = [...graph.evidence, ...ingested.evidence];
          const firstSeen = new Map<string, string>();
          for (const item of [...(previous?.entities ?? []), ...(previous?.relationships ?? [])]) {
            firstSeen.set(item.canonical_key as string, item.first_observed_at as string);
          }
          const now = new Date().toISOString();
          const withIds = <
            T extends {
              canonical_key: string;
              evidence_ids: string[];
              contradictions: Array<{ field: string; claims: Array<{ evidence_ids: string[] }> }>;
            },
          >(
            x: T,
          ) => ({
            ...x,
            evidence_ids: ids(x.evidence_ids),
            contradictions: x.contradictions.map((c) => ({
              ...c,
              claims: c.claims.map((cl) => ({ ...cl, evidence_ids: ids(cl.evidence_ids) })),
            })),
            first_observed_at: firstSeen.get(x.canonical_key) ?? now,
            last_observed_at: now,
          });
          const requested = requestedTypes(audit);
          const sources = requested.filter((t) => graph.evidence.some((e) => e.source_type === t));
          const missing = requested.filter((t) => !sources.includes(t));
          const snapshotId = crypto.randomUUID();
          const sourceRef =
            audit.commit_sha ??
            (audit.source as { manifest_sha256?: string } | null)?.manifest_sha256 ??
            'unknown';
          // What the analyzers could not read becomes coverage gaps of the audit, with why.
          const analyzerGaps = (graph.gaps ?? []).map((g) => ({
            kind: 'analyzer',
            path: g.path,
            reason: g.reason,
            message: g.message,
          }));
          // Identity conflicts (deployables reconcile kept apart) are gaps too: the graph guessed.
          const conflicts = (graph.conflicts ?? []).map((c) => ({
            ...c,
            evidence_ids: ids(c.evidence_ids),
          }));
          const byLocalId = new Map(graph.evidence.map((e) => [e.id, e]));
          const reconcileGaps = (graph.conflicts ?? []).map((c) => ({
            kind: 'reconcile',
            path: byLocalId.get(c.evidence_ids[0] ?? '')?.location.path ?? '',
            reason: 'identity_conflict',
            message: c.detail,
          }));
          // A choice between deployment variants is said: a guess keeps the snapshot partial.
          for (const v of graph.variants ?? []) {
            reconcileGaps.push({
              kind: 'reconcile',
              path: v.primary,
              reason: v.guessed ? 'deployment_variant_guessed' : 'deployment_variant_chosen',
              message: v.detail,
            });
          }
          const status = architectureStatus({
            missingSources: missing,
            conflicts,
            gaps: analyzerGaps,
            guessedVariant: (graph.variants ?? []).some((v) => v.guessed),
            budgetCut: budgetCut(audit.coverage_gaps),
          });
          let cases = { observed: 0, opened: 0, updated: 0 };
          let version = '';
          await db.transaction(async (trx) => {
            version = await allocateSnapshotVersion(trx, audit.repository_id);
            if (analyzerGaps.length || reconcileGaps.length) {
              const current = await getAuditById(trx, auditId);
              await updateAudit(trx, auditId, {
                coverage_gaps: [
                  ...current.coverage_gaps.filter(
                    (g) => g.kind !== 'analyzer' && g.kind !== 'reconcile',
                  ),
                  ...analyzerGaps,
                  ...reconcileGaps,
                ],
              });
            }
            await insertSnapshot(trx, {
              id: snapshotId,
              audit_id: auditId,
              workspace_id: audit.workspace_id,
              repository_id: audit.repository_id,
              version,
              status,
              sources,
              missing_sources: missing,
              source_coverage: (sources.length / requested.length).toFixed(4),
              entity_count: ingested.entities.length,
              relationship_count: ingested.relationships.length,
              entities: ingested.entities.map(withIds),
              relationships: ingested.relationships.map((r) => ({
                ...withIds(r),
                supersedes_id: null,
                superseded_at: null,
              })),
              generated_at: now,
            });
            await insertEvidence(
              trx,
              allEvidence.map((e, position) => ({
                id: uuidOf(e.id),
                snapshot_id: snapshotId,
                workspace_id: audit.workspace_id,
                source_type: e.source_type,
                provider: e.provider,
                evidence_kind: e.evidence_kind,
                subject_key: e.subject_key,
                relationship_kind: e.relationship_kind,
                object_key: e.object_key,
                location: ingestedAt.has(e.id) ? ingestedAt.get(e.id)!.location : e.location,
                source_ref: ingestedAt.has(e.id)
                  ? `ingestion:${ingestedAt.get(e.id)!.ingestion_id}`
                  : sourceRef,
                summary: e.summary,
                content_sha256: e.content_sha256,
                attributes: e.attributes ?? {},
                observed_at: ingestedAt.get(e.id)?.observed_at ?? now,
                position,
              })),
            );
            cases = await recordUncertainty(trx, {
              auditId,
              workspaceId: audit.workspace_id,
              repositoryId: audit.repository_id,
              snapshotId,
              observedAt: now,
              entities: ingested.entities.map(withIds),
              relationships: ingested.relationships.map(withIds),
              evidence: allEvidence.map((e) => ({
                ...e,
                id: uuidOf(e.id),
                location: ingestedAt.get(e.id)?.location === null ? null : e.location,
              })),
              missingSources: missing,
              conflicts,
              variants: (graph.variants ?? []).map((v) => ({
                ...v,
                evidence_ids: ids(v.evidence_ids),
              })),
              undeclaredCalls: ingested.uncorroborated.map((c) => ({
                ...c,
                evidence_ids: ids(c.evidence_ids),
              })),
            });
          });
          await log(auditId, {
            level: 'info',
            source: 'architecture',
            message: `architecture snapshot ${version}: ${graph.entities.length} entities, ${graph.relationships.length} relationships, ${graph.evidence.length} evidence${ingestedRecords.length ? ` (+${ingestedRecords.length} ingested: ${ingested.corroborated.relationships} relationships and ${ingested.corroborated.entities} entities corroborated, ${ingested.uncorroborated.length} undeclared calls)` : ''}; sources ${sources.join(', ') || 'none'}${missing.length ? `; missing ${missing.join(', ')}` : ''}; uncertainty cases: ${cases.opened} opened, ${cases.updated} updated`,
          });
          return { summary: `snapshot ${version} stored (${graph.evidence.length} evidence)` };
        }),
      );
    },

    /** Stage `controls`: stores the controls agent's assessments and findings. */
    async persistControls(auditId: string, marks?: StepMarks): Promise<StageOutcome> {
      return step(auditId, marks, () =>
        withHeartbeat(() =>
          persistControls(db, auditId, { staleAfterDays: config.evidenceStaleAfterDays }),
        ),
      );
    },

    /**
     * Before the `changes` stage of an audit of another branch: the default branch's audit at
     * the merge-base to run first, or null (activities/changes/baseline.ts).
     */
    async ensureBaselineAudit(auditId: string): Promise<AuditStart | null> {
      return ensureBaselineAudit(db, auditId, {
        heartbeatTimeoutSeconds: config.agentHeartbeatTimeoutSeconds,
        maxAttempts: config.agentMaxAttempts,
      });
    },

    /** Whether an audit has ended (the baseline a gate waits for). */
    async auditFinished(auditId: string): Promise<boolean> {
      return auditFinished(db, auditId);
    },

    /** Stage `changes`: the gate against the previous snapshot of the repository and branch. */
    async evaluateChanges(auditId: string, marks?: StepMarks): Promise<StageOutcome> {
      return step(auditId, marks, () => recordChangeGate(db, blobs, auditId));
    },

    /** Ends the audit: final status, pending stages skipped, running ones cancelled. */
    async finishAudit(
      auditId: string,
      status: AuditFinalStatus,
      errorCode: string | null,
    ): Promise<void> {
      await finish(auditId, status, errorCode);
    },
  };
}

export type AuditActivities = ReturnType<typeof createAuditActivities>;
