/** Audits and what they accumulate: stages, logs, source manifest rows. */
import { storableJson, storableText } from '../domain/text';
import { auditWorkflowId } from '../domain/contract/workflows';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';
import { recordWrite, type WriteRecord } from './activity';
import {
  STAGE_KEYS,
  type AUDIT_LOG_LEVELS,
  type AUDIT_LOG_SOURCES,
} from '../domain/contract/values';

export interface AuditRow {
  id: string;
  workspace_id: string;
  repository_id: string | null;
  upload_id: string | null;
  created_by: string | null;
  audit_type: 'repository' | 'upload';
  status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  branch_ref: string | null;
  commit_sha: string | null;
  requested_branch_ref: string | null;
  requested_commit_sha: string | null;
  deep_review: boolean;
  scanner_only: boolean;
  workflow_id: string | null;
  source_scope: Record<string, unknown>;
  source: Record<string, unknown> | null;
  source_manifest: Record<string, unknown>;
  coverage_gaps: Array<Record<string, unknown>>;
  context_hash: string | null;
  error_code: string | null;
  origin: string;
  origin_ref: string | null;
  trigger_reason: string | null;
  profile_snapshot: Record<string, unknown> | null;
  structural_gate_result: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface StageRow {
  audit_id: string;
  key: string;
  position: number;
  status: string;
  attempt: number;
  started_at: Date | null;
  completed_at: Date | null;
  error_code: string | null;
  summary: string | null;
}

export type NewAudit = Pick<
  AuditRow,
  | 'workspace_id'
  | 'repository_id'
  | 'upload_id'
  | 'created_by'
  | 'audit_type'
  | 'branch_ref'
  | 'commit_sha'
  | 'deep_review'
  | 'source_scope'
  | 'origin'
  | 'origin_ref'
  | 'trigger_reason'
  | 'profile_snapshot'
>;

/**
 * Inserts a queued audit with its nine pending stages; the workflow id is `audit-<id>`. With
 * `id` given and taken already, inserts nothing and returns undefined (the caller reads the row).
 */
async function insertAudit(
  db: Knex,
  input: NewAudit,
  id: string = crypto.randomUUID(),
): Promise<AuditRow | undefined> {
  const [row] = await db<AuditRow>('audits')
    .insert({
      ...input,
      id,
      status: 'queued',
      workflow_id: auditWorkflowId(id),
      requested_branch_ref: input.branch_ref,
      requested_commit_sha: input.commit_sha,
      source_scope: JSON.stringify(input.source_scope) as never,
      profile_snapshot: input.profile_snapshot
        ? (JSON.stringify(input.profile_snapshot) as never)
        : null,
    })
    .onConflict('id')
    .ignore()
    .returning('*');
  if (!row) return undefined;
  await db('audit_stages').insert(
    STAGE_KEYS.map((key, position) => ({ audit_id: id, key, position, status: 'pending' })),
  );
  return row;
}

/** Who starts an audit: a member through a token, or the scheduler acting for its owner. */
export type AuditActor = Pick<WriteRecord, 'actorId' | 'actorLogin' | 'tokenId' | 'requestId'>;

/**
 * Inserts a queued audit and its `audit.created` event and activity item (in the caller's
 * transaction). Shared by the API (createAudit, retryAudit) and scheduled dispatch. With `id`
 * (reserved by an Idempotency-Key), an audit that already has it in the workspace is returned as
 * it is: a retry of a request that died after its commit finds the audit it made.
 */
export async function createAuditRecord(
  db: Knex,
  input: NewAudit,
  actor: AuditActor,
  id?: string,
): Promise<AuditRow> {
  const audit = await insertAudit(db, input, id);
  if (!audit) {
    const existing = await findAudit(db, input.workspace_id, id!);
    if (!existing) throw new Error(`audit id ${id} is taken in another workspace`);
    return existing;
  }
  await recordWrite(db, {
    ...actor,
    workspaceId: audit.workspace_id,
    action: 'audit.created',
    resourceType: 'audit',
    resourceId: audit.id,
    details: {
      audit_type: audit.audit_type,
      repository_id: audit.repository_id,
      upload_id: audit.upload_id,
      branch_ref: audit.branch_ref,
      commit_sha: audit.commit_sha,
      origin: audit.origin,
      ...(audit.origin_ref ? { origin_ref: audit.origin_ref } : {}),
    },
  });
  return audit;
}

export async function findAudit(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<AuditRow | undefined> {
  return db<AuditRow>('audits').where({ workspace_id: workspaceId, id }).first();
}

export async function getAuditById(db: Knex, id: string): Promise<AuditRow> {
  const row = await db<AuditRow>('audits').where({ id }).first();
  if (!row) throw new Error(`audit ${id} does not exist`);
  return row;
}

/** An audit's status, or undefined when it no longer exists. */
export async function auditStatusById(db: Knex, id: string): Promise<string | undefined> {
  const row = await db<AuditRow>('audits').where({ id }).first('status');
  return row?.status;
}

export async function stagesOf(db: Knex, auditIds: string[]): Promise<Map<string, StageRow[]>> {
  const rows = auditIds.length
    ? await db<StageRow>('audit_stages')
        .whereIn('audit_id', auditIds)
        .orderBy(['audit_id', 'position'])
    : [];
  const map = new Map<string, StageRow[]>();
  for (const row of rows) {
    const list = map.get(row.audit_id) ?? [];
    list.push(row);
    map.set(row.audit_id, list);
  }
  return map;
}

export interface AuditFilter {
  repositoryId?: string;
  status?: AuditRow['status'];
  /** Completed audits whose report is a draft (no approval yet) or approved. */
  report?: 'draft' | 'approved';
}

/** Audits of a workspace, optionally of one repository and status, for keyset paging. */
export function auditsQuery(db: Knex, workspaceId: string, f: AuditFilter = {}): Keyset<AuditRow> {
  const q = db('audits').select('*').where('audits.workspace_id', workspaceId);
  if (f.repositoryId) q.andWhere('audits.repository_id', f.repositoryId);
  if (f.status) q.andWhere('audits.status', f.status);
  if (f.report) {
    const approval = db('report_approvals')
      .select(db.raw('1'))
      .whereRaw('report_approvals.audit_id = audits.id');
    q.andWhere('audits.status', 'completed');
    if (f.report === 'draft') q.whereNotExists(approval);
    else q.whereExists(approval);
  }
  return keyset(q, 'audits');
}

/**
 * queued -> running. False when the audit has left `queued` meanwhile: a cancel that landed
 * between reading the audit and this write must not be turned back into `running`.
 */
export async function markAuditRunning(db: Knex, id: string): Promise<boolean> {
  const n = await db('audits')
    .where({ id, status: 'queued' })
    .update({ status: 'running', updated_at: db.fn.now() });
  return n > 0;
}

export async function updateAudit(
  db: Knex,
  id: string,
  patch: Record<string, unknown>,
): Promise<void> {
  const values: Record<string, unknown> = { updated_at: db.fn.now() };
  for (const [k, v] of Object.entries(patch)) {
    // JSON columns get JSON text; dates and knex expressions (db.fn.now()) pass through.
    const isSql =
      v !== null && typeof v === 'object' && typeof (v as { toSQL?: unknown }).toSQL === 'function';
    values[k] =
      v !== null && typeof v === 'object' && !(v instanceof Date) && !isSql ? JSON.stringify(v) : v;
  }
  await db('audits').where({ id }).update(values);
}

export interface LogInput {
  level: (typeof AUDIT_LOG_LEVELS)[number];
  source: (typeof AUDIT_LOG_SOURCES)[number];
  message: string;
  details?: Record<string, unknown>;
}

export async function appendLog(db: Knex, auditId: string, entry: LogInput): Promise<void> {
  await db('audit_logs').insert({
    audit_id: auditId,
    level: entry.level,
    source: entry.source,
    // What is logged comes from sources and tools (git's stderr...): cleaned so the row is
    // always written.
    message: storableText(entry.message),
    details: entry.details ? JSON.stringify(storableJson(entry.details)) : null,
  });
}

export interface SourceFileRow {
  audit_id: string;
  path: string;
  kind: 'file' | 'symlink';
  size: number;
  sha256: string | null;
  link_target: string | null;
  source_type: string | null;
  stored: boolean;
}

/** Replaces the audit's manifest (a retried source stage starts from scratch). */
export async function replaceSourceFiles(
  db: Knex,
  auditId: string,
  rows: SourceFileRow[],
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('audit_source_files').where({ audit_id: auditId }).delete();
    for (let i = 0; i < rows.length; i += 1000)
      await trx('audit_source_files').insert(rows.slice(i, i + 1000));
  });
}

export async function sourceFiles(
  db: Knex,
  auditId: string,
  sourceType?: string,
): Promise<SourceFileRow[]> {
  const q = db<SourceFileRow>('audit_source_files').where({ audit_id: auditId }).orderBy('path');
  if (sourceType) q.andWhere({ source_type: sourceType });
  return q;
}

/** A stage log line written with a stage move. */
export interface StageLine {
  level: LogInput['level'];
  message: string;
}

/**
 * Moves a stage and writes its log line in one statement (one round trip: marks run in every
 * step, and the worker's main thread waits on each). Returns whether the stage moved.
 */
async function moveStage(
  db: Knex,
  auditId: string,
  key: string,
  from: string[],
  set: string,
  setBindings: Knex.RawBinding[],
  line: StageLine,
): Promise<StageMove> {
  const result = await db.raw<{ rows: Array<{ seconds: number | null }> }>(
    `WITH moved AS (
       UPDATE audit_stages SET ${set}
        WHERE audit_id = ? AND key = ? AND status = ANY(?::text[])
       RETURNING extract(epoch FROM completed_at - started_at)::float8 AS seconds
     ), logged AS (
       INSERT INTO audit_logs (audit_id, level, source, message)
       SELECT ?, ?, 'stage', ? FROM moved
     )
     SELECT seconds FROM moved`,
    [...setBindings, auditId, key, from, auditId, line.level, storableText(line.message)],
  );
  const row = result.rows[0];
  return { moved: row !== undefined, seconds: row?.seconds ?? null };
}

/** Whether a stage moved and, once ended, how long it ran (null: it never ran). */
export interface StageMove {
  moved: boolean;
  seconds: number | null;
}

/** pending -> running (one more attempt), logged; a stage that is not pending is left alone. */
export async function markStageRunning(
  db: Knex,
  auditId: string,
  key: string,
  line: StageLine,
): Promise<boolean> {
  const move = await moveStage(
    db,
    auditId,
    key,
    ['pending'],
    // GREATEST: a step's attempt may already be on the row (claimStageAttempt).
    `status = 'running', started_at = now(), completed_at = NULL, error_code = NULL,
     attempt = GREATEST(attempt, 1)`,
    [],
    line,
  );
  return move.moved;
}

/**
 * Puts attempt `attempt` of a step of stage `key` on the stage row (the stage's attempt is the
 * highest of its steps' attempts) and returns the stage's attempt afterwards: higher than
 * `attempt` means a later attempt has started and this one is stale. Waits for a stale attempt
 * that holds the row (lockStageAttempt) to finish its write.
 */
export async function claimStageAttempt(
  db: Knex,
  auditId: string,
  key: string,
  attempt: number,
): Promise<number> {
  const rows = await db('audit_stages')
    .where({ audit_id: auditId, key })
    .update({ attempt: db.raw('GREATEST(attempt, ?)', [attempt]) }, ['attempt']);
  return (rows[0] as { attempt: number } | undefined)?.attempt ?? attempt;
}

/** The stage's attempt (see claimStageAttempt). */
export async function currentStageAttempt(db: Knex, auditId: string, key: string): Promise<number> {
  const row = await db<StageRow>('audit_stages').where({ audit_id: auditId, key }).first('attempt');
  return row?.attempt ?? 0;
}

/** The stage's attempt, its row locked until the transaction ends (see claimStageAttempt). */
export async function lockStageAttempt(db: Knex, auditId: string, key: string): Promise<number> {
  const row = await db<StageRow>('audit_stages')
    .where({ audit_id: auditId, key })
    .forUpdate()
    .first('attempt');
  return row?.attempt ?? 0;
}

/** pending or running -> `end.status`, logged; an ended stage is left alone. */
export async function markStageEnded(
  db: Knex,
  auditId: string,
  key: string,
  end: { status: string; summary: string | null; errorCode: string | null },
  line: StageLine,
): Promise<StageMove> {
  return moveStage(
    db,
    auditId,
    key,
    ['pending', 'running'],
    'status = ?, summary = ?, error_code = ?, completed_at = now()',
    [end.status, end.summary === null ? null : storableText(end.summary), end.errorCode],
    line,
  );
}

/** The audit's status, its row locked until the transaction ends. */
export async function lockAuditStatus(
  db: Knex,
  auditId: string,
): Promise<AuditRow['status'] | undefined> {
  const row = await db<AuditRow>('audits').where({ id: auditId }).forUpdate().first('status');
  return row?.status;
}

export async function skipPendingStages(db: Knex, auditId: string): Promise<void> {
  await db('audit_stages')
    .where({ audit_id: auditId, status: 'pending' })
    .update({ status: 'skipped' });
}

/** Ends the running stages of an audit now, as `status` with `errorCode`. */
export async function endRunningStages(
  db: Knex,
  auditId: string,
  status: 'failed' | 'cancelled',
  errorCode: string | null,
): Promise<void> {
  await db('audit_stages')
    .where({ audit_id: auditId, status: 'running' })
    .update({ status, completed_at: db.fn.now(), error_code: errorCode });
}

/** When each of these audits was created, by id. */
export async function auditsCreatedAt(
  db: Knex,
  ids: readonly string[],
): Promise<Map<string, Date>> {
  if (ids.length === 0) return new Map();
  const rows = await db('audits')
    .whereIn('id', [...ids])
    .select<Array<{ id: string; created_at: Date }>>('id', 'created_at');
  return new Map(rows.map((r) => [r.id, r.created_at]));
}

/**
 * An audit whose workflow could not be started ends failed (the API's start and a schedule's
 * dispatch both). Only while it is queued: a start that failed after the workflow did begin
 * leaves the audit to that workflow.
 */
/**
 * Queued audits created more than `graceSeconds` ago, oldest first: an audit is queued only until
 * its workflow's first activity runs, so these are audits whose workflow may never have started
 * (the API died between its commit and the start).
 */
export async function staleQueuedAudits(
  db: Knex,
  graceSeconds: number,
  limit: number,
): Promise<AuditRow[]> {
  return db<AuditRow>('audits')
    .where({ status: 'queued' })
    .andWhere('created_at', '<', db.raw('now() - make_interval(secs => ?)', [graceSeconds]))
    .orderBy('created_at')
    .limit(limit);
}

/**
 * Ends a queued audit whose workflow could not be started: the audit `failed`
 * (`workflow_start_failed`), its pending stages `skipped`, and a log line with the cause. Does
 * nothing to an audit that left `queued` (its workflow did start).
 */
export async function failQueuedAudit(db: Knex, auditId: string, cause: string): Promise<void> {
  await db.transaction(async (trx) => {
    const failed = await trx('audits').where({ id: auditId, status: 'queued' }).update({
      status: 'failed',
      error_code: 'workflow_start_failed',
      completed_at: new Date(),
      updated_at: trx.fn.now(),
    });
    if (failed === 0) return;
    await trx('audit_stages')
      .where({ audit_id: auditId, status: 'pending' })
      .update({ status: 'skipped' });
    await appendLog(trx, auditId, {
      level: 'error',
      source: 'stage',
      message: `the audit workflow could not be started: ${cause}`,
      details: { error_code: 'workflow_start_failed' },
    });
  });
}

export interface LogRow {
  seq: number;
  audit_id: string;
  occurred_at: Date;
  level: LogInput['level'];
  source: LogInput['source'];
  message: string;
  details: Record<string, unknown> | null;
}

/** An audit's log, oldest first: at most `limit` lines, of the given levels, after `since`. */
export async function auditLogs(
  db: Knex,
  auditId: string,
  filter: { limit: number; levels?: readonly string[]; since?: string },
): Promise<LogRow[]> {
  const q = db<LogRow>('audit_logs')
    .where({ audit_id: auditId })
    .orderBy('seq')
    .limit(filter.limit);
  if (filter.levels) q.whereIn('level', [...filter.levels]);
  if (filter.since) q.andWhere('occurred_at', '>', filter.since);
  return q;
}

/** How many audits there are in each status (every workspace): the metrics' gauge. */
export async function countAuditsByStatus(
  db: Knex,
): Promise<Array<{ status: string; count: number }>> {
  return db('audits')
    .select('status')
    .count<Array<{ status: string; count: number }>>('* as count')
    .groupBy('status');
}
