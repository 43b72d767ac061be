/** Change sets: candidate (declared) and observed (an audit's changes stage), and reconciling. */
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';

export interface ChangeSetRow {
  id: string;
  workspace_id: string;
  repository_id: string;
  state: 'candidate' | 'observed';
  change_key: string;
  source_ref: string;
  trigger: string;
  reason: string;
  actor_id: string | null;
  audit_id: string | null;
  baseline_snapshot_id: string | null;
  result_snapshot_id: string | null;
  reconciled_change_set_id: string | null;
  normalized_changes: Array<Record<string, unknown>>;
  candidate_payload: Record<string, unknown> | null;
  impact_result: Record<string, unknown> | null;
  gate_result: Record<string, unknown> | null;
  accuracy: Record<string, unknown> | null;
  /** When its pull request closed (merged or not); null while open, and for other sets. */
  closed_at: Date | null;
  /** `merged` or `closed` while closed. */
  closed_reason: string | null;
  occurred_at: Date;
  created_at: Date;
  updated_at: Date;
}

const JSON_COLUMNS = [
  'normalized_changes',
  'candidate_payload',
  'impact_result',
  'gate_result',
  'accuracy',
] as const;

function encode(row: Partial<ChangeSetRow>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  for (const c of JSON_COLUMNS)
    if (out[c] !== undefined && out[c] !== null) out[c] = JSON.stringify(out[c]);
  return out;
}

/** Inserts a set; undefined when one with the same (repository, state, change key) exists. */
export async function insertChangeSet(
  db: Knex,
  row: Omit<ChangeSetRow, 'created_at' | 'updated_at' | 'closed_at' | 'closed_reason'>,
): Promise<ChangeSetRow | undefined> {
  const [inserted] = await db('change_sets')
    .insert(encode(row))
    .onConflict(['repository_id', 'state', 'change_key'])
    .ignore()
    .returning('*');
  return inserted as ChangeSetRow | undefined;
}

/**
 * Inserts an observed set, or brings the one with the same key up to date (a pull request or a
 * branch re-evaluated at its new head keeps one set: docs/decisions.md, issue 25). Never with an
 * older audit's result: the set is left as it is when the audit it holds was created after this
 * one (undefined then). A set closed with its pull request stays closed unless this audit was
 * created after the closing (the pull request was reopened).
 */
export async function upsertObservedChangeSet(
  db: Knex,
  row: Omit<ChangeSetRow, 'created_at' | 'updated_at' | 'closed_at' | 'closed_reason'>,
  auditCreatedAt: Date,
): Promise<ChangeSetRow | undefined> {
  const reopens = db.raw('change_sets.closed_at is null or change_sets.closed_at < ?', [
    auditCreatedAt,
  ]);
  const [saved] = await db('change_sets')
    .insert(encode(row))
    .onConflict(['repository_id', 'state', 'change_key'])
    .merge({
      ...Object.fromEntries(
        [
          'source_ref',
          'trigger',
          'reason',
          'audit_id',
          'baseline_snapshot_id',
          'result_snapshot_id',
          'normalized_changes',
          'impact_result',
          'gate_result',
          'occurred_at',
          'updated_at',
        ].map((c) => [c, db.raw('excluded.??', [c])]),
      ),
      closed_at: db.raw('case when ? then null else change_sets.closed_at end', [reopens]),
      closed_reason: db.raw('case when ? then null else change_sets.closed_reason end', [reopens]),
    })
    .where(
      db.raw('coalesce((select created_at from audits where id = change_sets.audit_id), ?) <= ?', [
        auditCreatedAt,
        auditCreatedAt,
      ]),
    )
    .returning('*');
  return saved as ChangeSetRow | undefined;
}

/** Closes the observed set of a pull request (its change key); null when it has none yet. */
export async function closeObservedChangeSet(
  db: Knex,
  repositoryId: string,
  changeKey: string,
  reason: 'merged' | 'closed',
): Promise<string | null> {
  const [row] = await db('change_sets')
    .where({ repository_id: repositoryId, state: 'observed', change_key: changeKey })
    .update({
      closed_at: db.raw("date_trunc('milliseconds', now())"),
      closed_reason: reason,
      updated_at: db.raw("date_trunc('milliseconds', now())"),
    })
    .returning('id');
  return (row as { id: string } | undefined)?.id ?? null;
}

export async function findChangeSet(
  db: Knex,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<ChangeSetRow | undefined> {
  const q = db<ChangeSetRow>('change_sets').where({ workspace_id: workspaceId, id }).first();
  if (lock) q.forUpdate();
  return q;
}

/** The newest observed set of a repository created at or after `since`. */
export async function latestObservedSince(
  db: Knex,
  repositoryId: string,
  since: Date,
): Promise<ChangeSetRow | undefined> {
  return db<ChangeSetRow>('change_sets')
    .where({ repository_id: repositoryId, state: 'observed' })
    .where('created_at', '>=', since)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .first();
}

export async function recordReconciliation(
  db: Knex,
  id: string,
  values: Pick<
    ChangeSetRow,
    'reconciled_change_set_id' | 'accuracy' | 'impact_result' | 'gate_result'
  >,
): Promise<ChangeSetRow> {
  const [row] = await db('change_sets')
    .where({ id })
    .update({ ...encode(values), updated_at: db.raw("date_trunc('milliseconds', now())") })
    .returning('*');
  return row as ChangeSetRow;
}

export function changeSetsQuery(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  state?: string,
): Keyset<ChangeSetRow> {
  const q = db('change_sets')
    .select('change_sets.*')
    .where({ 'change_sets.workspace_id': workspaceId, 'change_sets.repository_id': repositoryId });
  if (state) q.where('change_sets.state', state);
  return keyset(q, 'change_sets');
}
