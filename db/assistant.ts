/**
 * The assistant's records: conversations, messages, runs (one per question) and each
 * workspace's limits. Admission of a question is atomic: it locks the workspace's limits row
 * (created on first use) and counts under that lock, so concurrent asks of one workspace are
 * admitted one after the other and can never overshoot a limit.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { completedSnapshots } from './architecture';
import { DECISION_SCOPE_COLUMNS } from './decisions';
import { keyset, type Keyset } from './paginate';
import {
  DEFAULT_ASSISTANT_LIMITS,
  type AdmissionCounts,
  type AssistantLimits,
} from '../domain/assistant/limits';
import type { AssistantRunStatus } from '../domain/contract/values';
import type { ModelUsage } from '../domain/audits/pricing';

export interface ConversationRow {
  id: string;
  workspace_id: string;
  repository_id: string;
  snapshot_id: string | null;
  title: string;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface MessageRow {
  id: string;
  workspace_id: string;
  conversation_id: string;
  author_id: string | null;
  role: 'user' | 'assistant';
  content: string;
  structured: Record<string, unknown>;
  created_at: Date;
}

export interface RunRow {
  id: string;
  workspace_id: string;
  conversation_id: string;
  user_message_id: string;
  assistant_message_id: string | null;
  requested_by: string;
  repository_id: string | null;
  context_snapshot_id: string | null;
  status: AssistantRunStatus;
  route: string | null;
  specialist: string | null;
  cache_hit: boolean;
  cache_key: string | null;
  model_id: string | null;
  max_output_tokens: number;
  reserved_usd: string;
  cost_usd: string;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  model_calls: number;
  dropped_citations: number;
  error_code: string | null;
  error_message: string | null;
  workflow_id: string;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export interface StoredLimits {
  limits: AssistantLimits;
  version: number;
  updated_by: string | null;
  updated_at: Date | null;
}

const ACTIVE = ['queued', 'running'] as const;

// ---------------------------------------------------------------------------------------------
// Conversations and messages

export async function insertConversation(
  db: Knex,
  input: Pick<
    ConversationRow,
    'id' | 'workspace_id' | 'repository_id' | 'snapshot_id' | 'title' | 'created_by'
  >,
): Promise<ConversationRow> {
  const [row] = await db<ConversationRow>('assistant_conversations').insert(input).returning('*');
  return row as ConversationRow;
}

export async function findConversation(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<ConversationRow | undefined> {
  return db<ConversationRow>('assistant_conversations')
    .where({ workspace_id: workspaceId, id })
    .first();
}

export function conversationsQuery(
  db: Knex,
  workspaceId: string,
  repositoryId?: string,
): Keyset<ConversationRow> {
  const q = db('assistant_conversations')
    .select('assistant_conversations.*')
    .where('assistant_conversations.workspace_id', workspaceId);
  if (repositoryId) q.where('assistant_conversations.repository_id', repositoryId);
  return keyset(q, 'assistant_conversations');
}

export function messagesQuery(db: Knex, conversationId: string): Keyset<MessageRow> {
  return keyset(
    db('assistant_messages')
      .select('assistant_messages.*')
      .where('assistant_messages.conversation_id', conversationId),
    'assistant_messages',
  );
}

// ---------------------------------------------------------------------------------------------
// Limits and admission

/** The columns of `assistant_limits` that hold the limits: named as the limits are. */
const LIMIT_COLUMNS = Object.keys(DEFAULT_ASSISTANT_LIMITS);

function limitsOf(row: Record<string, unknown> | undefined): StoredLimits {
  if (!row || row.version === 0)
    return {
      limits: { ...DEFAULT_ASSISTANT_LIMITS },
      version: 0,
      updated_by: null,
      updated_at: null,
    };
  return {
    limits: Object.fromEntries(
      LIMIT_COLUMNS.map((column) => [column, row[column]]),
    ) as unknown as AssistantLimits,
    version: row.version as number,
    updated_by: row.updated_by as string | null,
    updated_at: row.updated_at as Date | null,
  };
}

/** The workspace's limits (the defaults, version 0, until someone sets them). */
export async function limitsOfWorkspace(db: Knex, workspaceId: string): Promise<StoredLimits> {
  return limitsOf(await db('assistant_limits').where({ workspace_id: workspaceId }).first());
}

/** Whether PostgreSQL knows the time zone (the day and month boundaries are computed there). */
export async function knownTimeZone(db: Knex, zone: string): Promise<boolean> {
  const { rows } = await db.raw(
    'SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = ?) AS known',
    [zone],
  );
  return rows[0].known === true;
}

/** Takes the workspace's admission lock (its limits row, made on first use) until commit. */
async function lockLimits(trx: Knex.Transaction, workspaceId: string): Promise<StoredLimits> {
  await trx.raw(
    'INSERT INTO assistant_limits (workspace_id) VALUES (?) ON CONFLICT (workspace_id) DO NOTHING',
    [workspaceId],
  );
  return limitsOf(
    await trx('assistant_limits').where({ workspace_id: workspaceId }).forUpdate().first(),
  );
}

/**
 * Replaces the limits when `expectedVersion` is current (under the admission lock, so no
 * question is admitted half under the old ones); undefined on a version mismatch.
 */
export async function replaceLimits(
  trx: Knex.Transaction,
  workspaceId: string,
  expectedVersion: number,
  limits: AssistantLimits,
  memberId: string | null,
): Promise<{ before: StoredLimits; after: StoredLimits } | undefined> {
  const before = await lockLimits(trx, workspaceId);
  if (before.version !== expectedVersion) return undefined;
  const [row] = await trx('assistant_limits')
    .where({ workspace_id: workspaceId })
    .update({
      ...limits,
      version: before.version + 1,
      updated_by: memberId,
      updated_at: trx.raw("date_trunc('milliseconds', now())"),
    })
    .returning('*');
  return { before, after: limitsOf(row as Record<string, unknown>) };
}

export type UsageCounts = AdmissionCounts & { monthly_cost_usd: string; period: string };

/** Today's and this month's counts in `timeZone` (see domain/assistant/limits admission). */
export async function usageCounts(
  db: Knex,
  workspaceId: string,
  /** Null: no member (the demo's anonymous reader); its own counts are 0. */
  memberId: string | null,
  timeZone: string,
): Promise<UsageCounts> {
  const { rows } = await db.raw(
    `WITH p AS (SELECT ?::text AS tz, ?::uuid AS member),
     b AS (
       SELECT date_trunc('day', now() AT TIME ZONE p.tz) AT TIME ZONE p.tz AS day_start,
              date_trunc('month', now() AT TIME ZONE p.tz) AT TIME ZONE p.tz AS month_start,
              (date_trunc('day', now() AT TIME ZONE p.tz) + interval '1 day') AT TIME ZONE p.tz AS next_day,
              (date_trunc('month', now() AT TIME ZONE p.tz) + interval '1 month') AT TIME ZONE p.tz AS next_month,
              to_char(now() AT TIME ZONE p.tz, 'YYYY-MM') AS period,
              p.member
       FROM p)
     SELECT
       count(r.id) FILTER (WHERE r.requested_by = b.member AND r.created_at >= b.day_start)::int AS questions_today_user,
       count(r.id) FILTER (WHERE r.created_at >= b.day_start)::int AS questions_today_workspace,
       count(r.id) FILTER (WHERE r.requested_by = b.member AND r.status IN ('queued', 'running'))::int AS active_user_runs,
       count(r.id) FILTER (WHERE r.status IN ('queued', 'running'))::int AS active_workspace_runs,
       coalesce(sum(CASE WHEN r.status IN ('queued', 'running') THEN greatest(r.reserved_usd, r.cost_usd) ELSE r.cost_usd END)
         FILTER (WHERE r.created_at >= b.month_start), 0)::text AS monthly_committed_usd,
       coalesce(sum(r.cost_usd) FILTER (WHERE r.created_at >= b.month_start), 0)::text AS monthly_cost_usd,
       ceil(extract(epoch FROM b.next_day - now()))::int AS seconds_to_next_day,
       ceil(extract(epoch FROM b.next_month - now()))::int AS seconds_to_next_month,
       b.period
     FROM b LEFT JOIN assistant_runs r
       ON r.workspace_id = ?
      AND (r.created_at >= least(b.day_start, b.month_start) OR r.status IN ('queued', 'running'))
     GROUP BY b.day_start, b.month_start, b.next_day, b.next_month, b.period, b.member`,
    [timeZone, memberId, workspaceId],
  );
  return rows[0] as UsageCounts;
}

export interface NewQuestion {
  runId: string;
  workspaceId: string;
  conversation: ConversationRow;
  memberId: string;
  content: string;
  contextSnapshotId: string;
  modelId: string | null;
  workflowId: string;
}

/**
 * Admits one question atomically: under the workspace's admission lock, counts, lets `decide`
 * refuse (it throws; nothing is written) and otherwise writes the user message and the queued
 * run. Returns the run.
 */
export async function admitQuestion(
  trx: Knex.Transaction,
  q: NewQuestion,
  decide: (limits: AssistantLimits, counts: UsageCounts) => { reservedUsd: string },
): Promise<RunRow> {
  const { limits } = await lockLimits(trx, q.workspaceId);
  const counts = await usageCounts(trx, q.workspaceId, q.memberId, limits.time_zone);
  const { reservedUsd } = decide(limits, counts);
  const messageId = crypto.randomUUID();
  await trx('assistant_messages').insert({
    id: messageId,
    workspace_id: q.workspaceId,
    conversation_id: q.conversation.id,
    author_id: q.memberId,
    role: 'user',
    content: q.content,
    structured: JSON.stringify({}),
  });
  const [run] = await trx<RunRow>('assistant_runs')
    .insert({
      id: q.runId,
      workspace_id: q.workspaceId,
      conversation_id: q.conversation.id,
      user_message_id: messageId,
      requested_by: q.memberId,
      repository_id: q.conversation.repository_id,
      context_snapshot_id: q.contextSnapshotId,
      status: 'queued',
      model_id: q.modelId,
      max_output_tokens: limits.max_output_tokens,
      reserved_usd: reservedUsd,
      workflow_id: q.workflowId,
    })
    .returning('*');
  await trx('assistant_conversations')
    .where({ id: q.conversation.id })
    .update({ updated_at: trx.raw("date_trunc('milliseconds', now())") });
  return run as RunRow;
}

// ---------------------------------------------------------------------------------------------
// Runs

export async function findRun(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<RunRow | undefined> {
  return db<RunRow>('assistant_runs').where({ workspace_id: workspaceId, id }).first();
}

export async function runById(db: Knex, id: string): Promise<RunRow | undefined> {
  return db<RunRow>('assistant_runs').where({ id }).first();
}

export async function messageById(db: Knex, id: string): Promise<MessageRow | undefined> {
  return db<MessageRow>('assistant_messages').where({ id }).first();
}

/** queued -> running (once); the run when it moved, undefined when it had left `queued`. */
export async function startRun(db: Knex, id: string): Promise<RunRow | undefined> {
  const [row] = await db<RunRow>('assistant_runs')
    .where({ id, status: 'queued' })
    .update({ status: 'running', started_at: db.raw("date_trunc('milliseconds', now())") })
    .returning('*');
  return row as RunRow | undefined;
}

export async function setRunRoute(
  db: Knex,
  id: string,
  patch: Pick<RunRow, 'route' | 'specialist' | 'cache_key'>,
): Promise<void> {
  await db('assistant_runs').where({ id }).update(patch);
}

/** An earlier answer to the same cache key in the workspace (its message), if any. */
export async function cachedAnswer(
  db: Knex,
  workspaceId: string,
  cacheKey: string,
  runId: string,
): Promise<MessageRow | undefined> {
  return db('assistant_runs as r')
    .join('assistant_messages as m', 'm.id', 'r.assistant_message_id')
    .where({ 'r.workspace_id': workspaceId, 'r.cache_key': cacheKey, 'r.status': 'completed' })
    .whereNot('r.id', runId)
    .orderBy([
      { column: 'r.created_at', order: 'asc' },
      { column: 'r.id', order: 'asc' },
    ])
    .first('m.*');
}

/** Adds one model call's tokens and cost to the run (each call counts, retried ones too). */
export async function addRunUsage(
  db: Knex,
  id: string,
  usage: ModelUsage,
  costUsd: string,
  modelId: string,
): Promise<void> {
  await db('assistant_runs')
    .where({ id })
    .update({
      input_tokens: db.raw('input_tokens + ?', [usage.inputTokens]),
      cached_input_tokens: db.raw('cached_input_tokens + ?', [usage.cachedInputTokens]),
      output_tokens: db.raw('output_tokens + ?', [usage.outputTokens]),
      cost_usd: db.raw('cost_usd + ?::numeric', [costUsd]),
      model_calls: db.raw('model_calls + 1'),
      model_id: modelId,
    });
}

export interface RunEnd {
  status: Exclude<AssistantRunStatus, 'queued' | 'running'>;
  answer?: { content: string; structured: Record<string, unknown> };
  cacheHit?: boolean;
  droppedCitations?: number;
  errorCode?: string | null;
  errorMessage?: string | null;
}

/**
 * Ends an active run (with its answer message, if any) and releases its reservation. A run that
 * already ended (cancelled meanwhile) is left as it is; returns whether this call ended it.
 */
export async function endRun(db: Knex, id: string, end: RunEnd): Promise<boolean> {
  return db.transaction(async (trx) => {
    const run = await trx<RunRow>('assistant_runs').where({ id }).forUpdate().first();
    if (!run || !(ACTIVE as readonly string[]).includes(run.status)) return false;
    let messageId: string | null = null;
    if (end.answer) {
      messageId = crypto.randomUUID();
      await trx('assistant_messages').insert({
        id: messageId,
        workspace_id: run.workspace_id,
        conversation_id: run.conversation_id,
        author_id: null,
        role: 'assistant',
        content: end.answer.content,
        structured: JSON.stringify(end.answer.structured),
      });
    }
    await trx('assistant_runs')
      .where({ id })
      .update({
        status: end.status,
        assistant_message_id: messageId,
        cache_hit: end.cacheHit ?? false,
        dropped_citations: end.droppedCitations ?? 0,
        error_code: end.errorCode ?? null,
        error_message: end.errorMessage ?? null,
        reserved_usd: 0,
        completed_at: trx.raw("date_trunc('milliseconds', now())"),
        started_at: trx.raw("coalesce(started_at, date_trunc('milliseconds', now()))"),
      });
    return true;
  });
}

// ---------------------------------------------------------------------------------------------
// What an answer reads besides the snapshot

/** The repository's records an answer may cite: uncertainty cases, decisions, open findings. */
export async function repositoryRecords(db: Knex, workspaceId: string, repositoryId: string) {
  const scope = { workspace_id: workspaceId, repository_id: repositoryId };
  const [cases, decisions, findings] = await Promise.all([
    db('uncertainty_cases')
      .where(scope)
      .whereIn('state', ['open', 'investigating'])
      .orderBy('id')
      .limit(500)
      .select('id', 'subject_key', 'reason', 'detail', 'blocking', 'state', 'evidence_ids'),
    db('decisions')
      .where(scope)
      .orderBy('number')
      .limit(500)
      .select(...DECISION_SCOPE_COLUMNS),
    db('findings')
      .where({ ...scope, status: 'open' })
      .orderBy('id')
      .limit(500)
      .select('id', 'control_key', 'severity', 'title', 'status', 'entity_key', 'evidence_ids'),
  ]);
  return { cases, decisions, findings };
}

/** Relationship keys of the repository's latest completed snapshots, newest first. */
export async function relationshipHistory(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  limit = 20,
): Promise<Array<{ snapshot_id: string; generated_at: Date; relationship_keys: string[] }>> {
  return completedSnapshots(db, workspaceId, repositoryId)
    .limit(limit)
    .select(
      's.id as snapshot_id',
      's.generated_at',
      db.raw(`jsonb_path_query_array(s.relationships, '$[*].canonical_key') AS relationship_keys`),
    );
}
