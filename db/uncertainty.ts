/** Uncertainty cases (open questions about a repository's architecture) and their queries. */
import { UNSETTLED_STATES } from '../domain/uncertainty/rules';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';
import type { CaseCandidate, ClaimAlternative } from '../analysis/uncertainty';

export interface UncertaintyCaseRow {
  id: string;
  workspace_id: string;
  repository_id: string | null;
  snapshot_id: string | null;
  reason: string;
  scope: string;
  subject_key: string;
  field: string | null;
  detail: string;
  blocking: boolean;
  state: 'open' | 'investigating' | 'resolved' | 'dismissed';
  owner_id: string | null;
  source_keys: string[];
  evidence_ids: string[];
  alternatives: ClaimAlternative[];
  evidence_fingerprint: string;
  detected_at: Date;
  last_observed_at: Date;
  resolved_at: Date | null;
  resolution_summary: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ObserveResult {
  opened: number;
  updated: number;
}

/**
 * Records what one snapshot observed. A candidate whose identity (repository, reason, scope,
 * subject_key, field) already has a case updates it: snapshot, last_observed_at, evidence,
 * alternatives, detail, blocking. A resolved or dismissed case reopens only when the evidence
 * it rests on changed (another fingerprint); the same evidence seen again keeps the judgement.
 * An older snapshot never overwrites what a newer one observed. Cases no candidate matches are
 * left as they are: never deleted, their last_observed_at tells when they were last seen.
 * Audits without a repository (uploads) have no identity to match: their cases are new each time.
 */
export async function observeCases(
  db: Knex,
  input: {
    workspaceId: string;
    repositoryId: string | null;
    snapshotId: string;
    observedAt: string;
    candidates: CaseCandidate[];
  },
): Promise<ObserveResult> {
  const result: ObserveResult = { opened: 0, updated: 0 };
  for (const c of input.candidates) {
    const values = [
      crypto.randomUUID(),
      input.workspaceId,
      input.repositoryId,
      input.snapshotId,
      c.reason,
      c.scope,
      c.subject_key,
      c.field,
      c.detail,
      c.blocking,
      c.source_keys,
      c.evidence_ids,
      JSON.stringify(c.alternatives),
      c.fingerprint,
      input.observedAt,
      input.observedAt,
    ];
    const insert = `
      INSERT INTO uncertainty_cases AS u (id, workspace_id, repository_id, snapshot_id, reason,
        scope, subject_key, field, detail, blocking, state, source_keys, evidence_ids,
        alternatives, evidence_fingerprint, detected_at, last_observed_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?::text[], ?::uuid[], ?::jsonb, ?,
        ?::timestamptz, ?::timestamptz, DEFAULT, DEFAULT)`;
    if (input.repositoryId === null) {
      await db.raw(insert, values);
      await recordObservation(db, input.snapshotId, values[0] as string, c, 'open');
      result.opened++;
      continue;
    }
    const reopen = `u.state IN ('resolved', 'dismissed') AND u.evidence_fingerprint <> EXCLUDED.evidence_fingerprint`;
    const res = await db.raw<{ rows: Array<{ id: string; state: string; inserted: boolean }> }>(
      `${insert}
      ON CONFLICT (workspace_id, repository_id, reason, scope, subject_key, (coalesce(field, '')))
        WHERE repository_id IS NOT NULL
      DO UPDATE SET
        snapshot_id = EXCLUDED.snapshot_id,
        detail = EXCLUDED.detail,
        blocking = EXCLUDED.blocking,
        source_keys = EXCLUDED.source_keys,
        evidence_ids = EXCLUDED.evidence_ids,
        alternatives = EXCLUDED.alternatives,
        evidence_fingerprint = EXCLUDED.evidence_fingerprint,
        last_observed_at = EXCLUDED.last_observed_at,
        state = CASE WHEN ${reopen} THEN 'open' ELSE u.state END,
        resolved_at = CASE WHEN ${reopen} THEN NULL ELSE u.resolved_at END,
        resolution_summary = CASE WHEN ${reopen} THEN NULL ELSE u.resolution_summary END,
        updated_at = date_trunc('milliseconds', now())
      WHERE u.last_observed_at <= EXCLUDED.last_observed_at
      RETURNING u.id, u.state, (xmax = 0) AS inserted`,
      values,
    );
    const row = res.rows[0];
    if (!row) {
      // A newer snapshot already observed it: the case keeps that, this snapshot its own view.
      const known = await db('uncertainty_cases')
        .where({
          workspace_id: input.workspaceId,
          repository_id: input.repositoryId,
          reason: c.reason,
          scope: c.scope,
          subject_key: c.subject_key,
        })
        .whereRaw("coalesce(field, '') = ?", [c.field ?? ''])
        .first('id', 'state');
      if (known) await recordObservation(db, input.snapshotId, known.id, c, known.state);
      continue;
    }
    await recordObservation(db, input.snapshotId, row.id, c, row.state);
    if (row.inserted) result.opened++;
    else result.updated++;
  }
  return result;
}

/** One snapshot's view of one case (its report shows the case as that snapshot saw it). */
async function recordObservation(
  db: Knex,
  snapshotId: string,
  caseId: string,
  c: CaseCandidate,
  state: string,
): Promise<void> {
  await db('uncertainty_observations')
    .insert({
      snapshot_id: snapshotId,
      case_id: caseId,
      reason: c.reason,
      subject_key: c.subject_key,
      detail: c.detail,
      blocking: c.blocking,
      state,
    })
    .onConflict(['snapshot_id', 'case_id'])
    .merge();
}

export interface CaseFilter {
  state?: string;
  repositoryId?: string;
  blocking?: boolean;
}

function filtered(db: Knex, workspaceId: string, f: CaseFilter): Knex.QueryBuilder {
  const q = db('uncertainty_cases').where('uncertainty_cases.workspace_id', workspaceId);
  if (f.state !== undefined) q.where('uncertainty_cases.state', f.state);
  if (f.repositoryId !== undefined) q.where('uncertainty_cases.repository_id', f.repositoryId);
  if (f.blocking !== undefined) q.where('uncertainty_cases.blocking', f.blocking);
  return q;
}

export function casesQuery(
  db: Knex,
  workspaceId: string,
  f: CaseFilter,
): Keyset<UncertaintyCaseRow> {
  return keyset(filtered(db, workspaceId, f).select('uncertainty_cases.*'), 'uncertainty_cases');
}

/** Counts over the whole filtered set (not one page): unsettled, unsettled+blocking, unsettled+unowned. */
export async function caseCounts(db: Knex, workspaceId: string, f: CaseFilter) {
  const unsettled = `state IN (${UNSETTLED_STATES.map((st) => `'${st}'`).join(', ')})`;
  const row = (await filtered(db, workspaceId, f)
    .select(
      db.raw(`count(*) FILTER (WHERE ${unsettled})::int AS open_count`),
      db.raw(`count(*) FILTER (WHERE ${unsettled} AND blocking)::int AS blocking_count`),
      db.raw(`count(*) FILTER (WHERE ${unsettled} AND owner_id IS NULL)::int AS unassigned_count`),
    )
    .first()) as { open_count: number; blocking_count: number; unassigned_count: number };
  return row;
}

export async function findCase(
  db: Knex,
  workspaceId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<UncertaintyCaseRow | undefined> {
  const q = db<UncertaintyCaseRow>('uncertainty_cases')
    .where({ workspace_id: workspaceId, id })
    .first();
  if (options.forUpdate) q.forUpdate();
  return q as Promise<UncertaintyCaseRow | undefined>;
}

export async function updateCase(
  db: Knex,
  workspaceId: string,
  id: string,
  patch: Partial<
    Pick<UncertaintyCaseRow, 'owner_id' | 'state' | 'resolution_summary' | 'resolved_at'>
  >,
): Promise<UncertaintyCaseRow | undefined> {
  const [row] = await db<UncertaintyCaseRow>('uncertainty_cases')
    .where({ workspace_id: workspaceId, id })
    .update({
      ...patch,
      updated_at: db.raw("date_trunc('milliseconds', now())") as unknown as Date,
    })
    .returning('*');
  return row;
}
