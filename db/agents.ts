/** Agent runs (one row per attempt) and the artifacts successful runs produce. */
import { storableText } from '../domain/text';
import type { RUN_STATUSES } from '../domain/contract/values';
import crypto from 'node:crypto';
import type { Knex } from 'knex';

export interface AgentRunRow {
  id: string;
  audit_id: string;
  workspace_id: string;
  stage: string;
  agent_key: string;
  agent_version: string;
  model_id: string;
  reasoning_effort: string;
  attempt: number;
  status: (typeof RUN_STATUSES)[number];
  cache_hit: boolean;
  model_backed: boolean;
  cost_kind: string;
  context_hash: string;
  started_at: Date | null;
  completed_at: Date | null;
  error_code: string | null;
  error_message: string | null;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  cost_usd: string;
  artifact_id: string | null;
  created_at: Date;
}

export interface ArtifactRow {
  id: string;
  workspace_id: string;
  kind: string;
  title: string;
  artifact: Record<string, unknown>;
  evidence_ids: string[];
  confidence: string;
  created_at: Date;
}

/**
 * Records the start of one attempt. Idempotent per (audit, agent, attempt): a replayed start
 * after a crash updates the same row instead of adding one. Earlier attempts still marked running
 * were lost with their worker and are closed as failed.
 */
export async function startAgentRun(
  db: Knex,
  run: AttemptIdentity & Pick<AgentRunRow, 'attempt' | 'context_hash'>,
): Promise<AgentRunRow> {
  return db.transaction(async (trx) => {
    // Earlier attempts still running were lost with their worker; those with no row at all
    // (their worker died, or the database went away, before writing it) are recorded lost too,
    // so the trail has every attempt.
    if (run.attempt > 1) {
      await failAttempts(
        trx,
        run,
        [1, run.attempt - 1],
        'attempt_lost',
        'The worker running this attempt stopped before it finished (or before it could record it).',
      );
    }
    const [row] = await trx<AgentRunRow>('agent_runs')
      .insert({
        id: crypto.randomUUID(),
        ...run,
        status: 'running',
        started_at: trx.fn.now() as unknown as Date,
      })
      .onConflict(['audit_id', 'agent_key', 'attempt'])
      .merge({
        status: 'running',
        started_at: trx.fn.now() as unknown as Date,
        context_hash: run.context_hash,
      })
      .returning('*');
    return row!;
  });
}

export async function finishAgentRun(
  db: Knex,
  id: string,
  patch: Partial<AgentRunRow>,
): Promise<void> {
  // A success also clears the `attempt_lost` a later attempt may have stamped on this one while
  // it was still finishing (its completion was lost, not its work).
  const cleared = patch.status === 'succeeded' ? { error_code: null, error_message: null } : {};
  const message = patch.error_message;
  await db('agent_runs')
    .where({ id })
    .update({
      ...cleared,
      ...patch,
      ...(message ? { error_message: storableText(message) } : {}),
      completed_at: db.fn.now(),
    });
}

/**
 * Stores an artifact given as JSON text (`artifactJson`: written once, never parsed back on the
 * worker's main thread); its id.
 */
export async function insertArtifact(
  db: Knex,
  a: Pick<ArtifactRow, 'workspace_id' | 'kind' | 'title' | 'evidence_ids' | 'confidence'> & {
    artifactJson: string;
  },
): Promise<{ id: string }> {
  const { artifactJson, ...fields } = a;
  const id = crypto.randomUUID();
  await db<ArtifactRow>('agent_artifacts').insert({
    id,
    ...fields,
    artifact: artifactJson as never,
  });
  return { id };
}

/** The artifact of an earlier successful run with the same context hash in the workspace. */
export async function findCachedArtifact(
  db: Knex,
  workspaceId: string,
  contextHash: string,
): Promise<ArtifactRow | undefined> {
  return db('agent_runs')
    .join('agent_artifacts', 'agent_artifacts.id', 'agent_runs.artifact_id')
    .select('agent_artifacts.*')
    .where({
      'agent_runs.workspace_id': workspaceId,
      'agent_runs.context_hash': contextHash,
      'agent_runs.status': 'succeeded',
    })
    .orderBy('agent_runs.created_at', 'desc')
    .first();
}

export async function runsOfAudit(
  db: Knex,
  auditId: string,
): Promise<Array<AgentRunRow & { artifact: ArtifactRow | null }>> {
  const runs = await db<AgentRunRow>('agent_runs')
    .where({ audit_id: auditId })
    .orderBy([
      { column: 'started_at', order: 'asc' },
      { column: 'agent_key', order: 'asc' },
      { column: 'attempt', order: 'asc' },
    ]);
  const ids = runs.map((r) => r.artifact_id).filter((x): x is string => !!x);
  const artifacts = ids.length ? await db<ArtifactRow>('agent_artifacts').whereIn('id', ids) : [];
  const byId = new Map(artifacts.map((a) => [a.id, a]));
  return runs.map((r) => ({
    ...r,
    artifact: r.artifact_id ? (byId.get(r.artifact_id) ?? null) : null,
  }));
}

/**
 * One artifact per agent, its latest successful attempt's: an attempt whose completion was lost
 * (its worker or Temporal went away after it succeeded) may be followed by another that
 * succeeded too, and reading both would count every claim twice.
 */
function latestArtifacts(db: Knex, auditId: string, stage?: string) {
  const q = db('agent_runs')
    .join('agent_artifacts', 'agent_artifacts.id', 'agent_runs.artifact_id')
    .distinctOn('agent_runs.agent_key')
    .where({ 'agent_runs.audit_id': auditId, 'agent_runs.status': 'succeeded' })
    .orderBy([{ column: 'agent_runs.agent_key' }, { column: 'agent_runs.attempt', order: 'desc' }]);
  if (stage) q.andWhere('agent_runs.stage', stage);
  return q;
}

export async function artifactsOfAudit(
  db: Knex,
  auditId: string,
  stage?: string,
): Promise<Array<{ agent_key: string; stage: string; artifact: ArtifactRow }>> {
  const rows = (await latestArtifacts(db, auditId, stage).select(
    'agent_runs.agent_key',
    'agent_runs.stage',
    'agent_artifacts.*',
  )) as Array<ArtifactRow & { agent_key: string; stage: string }>;
  return rows.map(({ agent_key, stage: s, ...artifact }) => ({ agent_key, stage: s, artifact }));
}

/** The same artifacts' content as JSON text, for the analysis pool to parse (not this thread). */
export async function artifactTextsOfAudit(
  db: Knex,
  auditId: string,
  stage?: string,
): Promise<Array<{ agent_key: string; stage: string; json: string }>> {
  return latestArtifacts(db, auditId, stage).select(
    'agent_runs.agent_key',
    'agent_runs.stage',
    db.raw('agent_artifacts.artifact::text AS json'),
  );
}

/** The same artifacts without their content (which can be tens of megabytes each). */
export async function artifactRefsOfAudit(
  db: Knex,
  auditId: string,
): Promise<Array<{ agent_key: string; stage: string; id: string; kind: string; title: string }>> {
  return latestArtifacts(db, auditId).select(
    'agent_runs.agent_key',
    'agent_runs.stage',
    'agent_artifacts.id',
    'agent_artifacts.kind',
    'agent_artifacts.title',
  );
}

/** An earlier attempt of this agent in this audit that succeeded (its completion was lost). */
export async function earlierSuccess(
  db: Knex,
  auditId: string,
  agentKey: string,
  attempt: number,
): Promise<Pick<AgentRunRow, 'attempt' | 'artifact_id'> | undefined> {
  return db<AgentRunRow>('agent_runs')
    .where({ audit_id: auditId, agent_key: agentKey, status: 'succeeded' })
    .andWhere('attempt', '<', attempt)
    .orderBy('attempt', 'desc')
    .first('attempt', 'artifact_id');
}

/**
 * Agent runs of an audit still marked running end now: `cancelled` when the audit was cancelled,
 * `abandoned` (with the audit's failure as the reason) when it failed under them.
 */
export async function closeRunningAgentRuns(
  db: Knex,
  auditId: string,
  end: { status: 'cancelled' | 'abandoned'; errorCode: string; message: string },
): Promise<void> {
  await db('agent_runs')
    .where({ audit_id: auditId, status: 'running' })
    .update({
      status: end.status,
      completed_at: db.fn.now(),
      error_code: end.errorCode,
      error_message: storableText(end.message),
    });
}

/** The context hash of a run, known once its input files were read. */
export async function setAgentRunContextHash(
  db: Knex,
  id: string,
  contextHash: string,
): Promise<void> {
  await db('agent_runs').where({ id }).update({ context_hash: contextHash });
}

/** What identifies and describes an agent's attempts, before any outcome. */
type AttemptIdentity = Pick<
  AgentRunRow,
  | 'audit_id'
  | 'workspace_id'
  | 'stage'
  | 'agent_key'
  | 'agent_version'
  | 'model_id'
  | 'reasoning_effort'
  | 'model_backed'
  | 'cost_kind'
>;

/**
 * Attempts `first..last` of `run`'s agent end `failed` with `code`: inserted where they have no
 * row, closed where they are still `running`; attempts that ended are left alone.
 */
async function failAttempts(
  db: Knex,
  run: AttemptIdentity,
  [first, last]: [number, number],
  code: string,
  message: string,
): Promise<void> {
  await db.raw(
    `INSERT INTO agent_runs AS r (id, audit_id, workspace_id, stage, agent_key, agent_version,
                                  model_id, reasoning_effort, attempt, status, model_backed,
                                  cost_kind, context_hash, error_code, error_message, completed_at)
     SELECT gen_random_uuid(), ?, ?, ?, ?, ?, ?, ?, n, 'failed', ?, ?, '', ?, ?, now()
       FROM generate_series(?::integer, ?::integer) AS n
     ON CONFLICT (audit_id, agent_key, attempt) DO UPDATE
        SET status = 'failed', error_code = EXCLUDED.error_code,
            error_message = EXCLUDED.error_message, completed_at = now()
      WHERE r.status = 'running'`,
    [
      run.audit_id,
      run.workspace_id,
      run.stage,
      run.agent_key,
      run.agent_version,
      run.model_id,
      run.reasoning_effort,
      run.model_backed,
      run.cost_kind,
      code,
      storableText(message),
      first,
      last,
    ],
  );
}
