/** Audit comparisons and what a comparison reads: each audit's findings with its severities. */
import type { Knex } from 'knex';
import type { ComparedFinding } from '../domain/comparisons/compare';
import { keyset, type Keyset } from './paginate';

export interface ComparisonRow {
  id: string;
  workspace_id: string;
  repository_id: string;
  baseline_audit_id: string;
  candidate_audit_id: string;
  content_sha256: string;
  coverage_comparable: boolean;
  counts: Record<string, number>;
  result: Record<string, unknown>;
  created_by: string | null;
  created_at: Date;
}

/**
 * The findings an audit observed (linked at its controls stage), each with the severity of its
 * control as that audit assessed it.
 */
export async function findingsOfAudit(db: Knex, auditId: string): Promise<ComparedFinding[]> {
  return db('audit_findings as af')
    .join('findings as f', 'f.id', 'af.finding_id')
    .leftJoin('control_assessments as ca', function () {
      this.on('ca.audit_id', 'af.audit_id').andOn('ca.control_key', 'f.control_key');
    })
    .where('af.audit_id', auditId)
    .select(
      'f.id',
      'f.fingerprint',
      'f.control_key',
      'f.title',
      db.raw('coalesce(ca.severity, f.severity) as severity'),
    )
    .orderBy('f.fingerprint');
}

export async function insertComparison(
  db: Knex,
  row: Omit<ComparisonRow, 'created_at'>,
): Promise<ComparisonRow> {
  const [inserted] = await db('audit_comparisons')
    .insert({ ...row, counts: JSON.stringify(row.counts), result: JSON.stringify(row.result) })
    .returning('*');
  return inserted as ComparisonRow;
}

export async function findComparison(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<ComparisonRow | undefined> {
  return db<ComparisonRow>('audit_comparisons').where({ workspace_id: workspaceId, id }).first();
}

export function comparisonsQuery(
  db: Knex,
  workspaceId: string,
  repositoryId?: string,
): Keyset<ComparisonRow> {
  const q = db('audit_comparisons')
    .select('audit_comparisons.*')
    .where('audit_comparisons.workspace_id', workspaceId);
  if (repositoryId) q.where('audit_comparisons.repository_id', repositoryId);
  return keyset(q, 'audit_comparisons');
}
