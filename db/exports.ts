/**
 * Audit exports: one rendered file per row, kept in the blob store until `retained_until`.
 * Rows stay after expiry (status `expired`) as the record of what was handed out and when.
 */
import type { Knex } from 'knex';
import type { ExportDecision } from '../domain/exports/render';
import { expireDue } from './attachments';
import { keyset, type Keyset } from './paginate';

export const EXPORT_STATUSES = ['queued', 'running', 'available', 'failed', 'expired'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export interface ExportRow {
  id: string;
  workspace_id: string;
  audit_id: string;
  format: string;
  status: ExportStatus;
  filename: string;
  content_type: string;
  sha256: string | null;
  size_bytes: string | number | null;
  retention_days: number;
  retained_until: Date | null;
  error_code: string | null;
  error_message: string | null;
  requested_by: string;
  workflow_id: string;
  created_at: Date;
  completed_at: Date | null;
  removed_at: Date | null;
}

const NOW = "date_trunc('milliseconds', now())";

export async function insertExport(
  db: Knex,
  row: Pick<
    ExportRow,
    | 'id'
    | 'workspace_id'
    | 'audit_id'
    | 'format'
    | 'filename'
    | 'content_type'
    | 'retention_days'
    | 'requested_by'
    | 'workflow_id'
  >,
): Promise<ExportRow> {
  // The id may be one reserved under an Idempotency-Key: a retry finds the first row.
  const [inserted] = await db('audit_exports')
    .insert({ ...row, status: 'queued' })
    .onConflict('id')
    .ignore()
    .returning('*');
  return (inserted as ExportRow | undefined) ?? (await getExportById(db, row.id));
}

export async function findExport(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<ExportRow | undefined> {
  return db<ExportRow>('audit_exports').where({ workspace_id: workspaceId, id }).first();
}

export async function getExportById(db: Knex, id: string): Promise<ExportRow> {
  const row = await db<ExportRow>('audit_exports').where({ id }).first();
  if (!row) throw new Error(`export ${id} not found`);
  return row;
}

export function exportsQuery(db: Knex, workspaceId: string, auditId: string): Keyset<ExportRow> {
  return keyset(
    db('audit_exports')
      .select('audit_exports.*')
      .where({ 'audit_exports.workspace_id': workspaceId, 'audit_exports.audit_id': auditId }),
    'audit_exports',
  );
}

/** queued -> running (a retried activity finds it running already). */
export async function markExportRunning(db: Knex, id: string): Promise<void> {
  await db('audit_exports')
    .where({ id })
    .whereIn('status', ['queued'])
    .update({ status: 'running' });
}

/** running -> available, with the stored file and its retention from now. */
export async function markExportAvailable(
  db: Knex,
  id: string,
  file: { sha256: string; size: number },
): Promise<ExportRow | undefined> {
  const [row] = await db('audit_exports')
    .where({ id })
    .whereIn('status', ['queued', 'running'])
    .update({
      status: 'available',
      sha256: file.sha256,
      size_bytes: file.size,
      completed_at: db.raw(NOW),
      retained_until: db.raw(`${NOW} + make_interval(days => retention_days)`),
    })
    .returning('*');
  return row as ExportRow | undefined;
}

export async function markExportFailed(
  db: Knex,
  id: string,
  code: string,
  message: string,
): Promise<ExportRow | undefined> {
  const [row] = await db('audit_exports')
    .where({ id })
    .whereIn('status', ['queued', 'running'])
    .update({
      status: 'failed',
      error_code: code,
      error_message: message.slice(0, 2000),
      completed_at: db.raw(NOW),
    })
    .returning('*');
  return row as ExportRow | undefined;
}

/** Exports past their retention, marked `expired` (see expireDue). */
export const expireDueExports = (db: Knex, limit: number) =>
  expireDue<ExportRow>(db, 'audit_exports', limit);

/** A repository's decisions with the logins of their approvers, for the MADR export. */
export async function decisionsForExport(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Promise<
  Array<
    Omit<ExportDecision, 'deciders' | 'date'> & {
      created_at: Date;
      approved_at: Date | null;
      approvers: string[];
    }
  >
> {
  return db('decisions as d')
    .where({ 'd.workspace_id': workspaceId, 'd.repository_id': repositoryId })
    .select(
      'd.number',
      'd.title',
      'd.status',
      'd.question',
      'd.context',
      'd.options',
      'd.selected_option_id',
      'd.latest_rationale',
      'd.affected_entity_keys',
      'd.created_at',
      'd.approved_at',
      db.raw(
        `COALESCE((SELECT array_agg(DISTINCT m.login ORDER BY m.login)
           FROM decision_approvals a JOIN members m ON m.id = a.actor_id
           WHERE a.decision_id = d.id AND a.outcome = 'approved'), '{}') AS approvers`,
      ),
    )
    .orderBy('d.number');
}
