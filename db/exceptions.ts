/** Control exceptions and the ones an audit's assessments apply. */
import type { Knex } from 'knex';
import type { ControlException } from '../domain/controls/exceptions';
import { keyset, type Keyset } from './paginate';

export interface ExceptionRow extends ControlException {
  workspace_id: string;
  reason: string;
  created_by: string;
  created_at: Date;
  revoked_by: string | null;
}

export async function insertException(
  db: Knex,
  row: Omit<ExceptionRow, 'created_at' | 'revoked_at' | 'revoked_by'>,
): Promise<ExceptionRow> {
  const [inserted] = await db('control_exceptions').insert(row).returning('*');
  return inserted as ExceptionRow;
}

export async function findException(
  db: Knex,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<ExceptionRow | undefined> {
  const q = db<ExceptionRow>('control_exceptions').where({ workspace_id: workspaceId, id }).first();
  if (lock) q.forUpdate();
  return q;
}

export async function revokeException(
  db: Knex,
  id: string,
  memberId: string,
): Promise<ExceptionRow> {
  const [row] = await db('control_exceptions')
    .where({ id })
    .update({ revoked_at: db.raw("date_trunc('milliseconds', now())"), revoked_by: memberId })
    .returning('*');
  return row as ExceptionRow;
}

export interface ExceptionFilter {
  controlKey?: string;
  repositoryId?: string;
  state?: 'active' | 'expired' | 'revoked';
}

export function exceptionsQuery(
  db: Knex,
  workspaceId: string,
  f: ExceptionFilter,
): Keyset<ExceptionRow> {
  const q = db('control_exceptions')
    .select('control_exceptions.*')
    .where('control_exceptions.workspace_id', workspaceId);
  if (f.controlKey) q.where('control_exceptions.control_key', f.controlKey);
  if (f.repositoryId) q.where('control_exceptions.repository_id', f.repositoryId);
  if (f.state === 'revoked') q.whereNotNull('control_exceptions.revoked_at');
  if (f.state === 'active')
    q.whereNull('control_exceptions.revoked_at').where(
      'control_exceptions.expires_at',
      '>',
      db.fn.now(),
    );
  if (f.state === 'expired')
    q.whereNull('control_exceptions.revoked_at').where(
      'control_exceptions.expires_at',
      '<=',
      db.fn.now(),
    );
  return keyset(q, 'control_exceptions');
}

/**
 * The exceptions of the workspace that may apply to an audit of `repositoryId` at `at`, and the
 * overlay version: how many times the workspace's exceptions changed (each creation and each
 * revocation counts once).
 */
export async function exceptionsForAudit(
  db: Knex,
  workspaceId: string,
  repositoryId: string | null,
  at: Date,
): Promise<{ active: ControlException[]; overlayVersion: number }> {
  const active = await db('control_exceptions')
    .where({ workspace_id: workspaceId })
    .whereNull('revoked_at')
    .where('expires_at', '>', at)
    .where((q) => {
      q.where('scope', 'workspace');
      if (repositoryId) q.orWhere('repository_id', repositoryId);
    })
    .orderBy('id')
    .select(
      'id',
      'control_key',
      'scope',
      'repository_id',
      'subject_key',
      'expires_at',
      'revoked_at',
    );
  const [counts] = await db('control_exceptions')
    .where({ workspace_id: workspaceId })
    .select(db.raw('count(*)::int + count(revoked_at)::int as n'));
  return { active, overlayVersion: Number((counts as { n: number }).n) };
}
