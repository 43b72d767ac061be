/** What an evidence item cites: the item (through its audit's snapshot) and the cited file. */
import type { Knex } from 'knex';
import type { EvidenceRow } from './architecture';
import type { SourceFileRow } from './audits';

/** One evidence item of the snapshot of an audit of the workspace; undefined when none. */
export async function evidenceOfAudit(
  db: Knex,
  workspaceId: string,
  auditId: string,
  evidenceId: string,
): Promise<EvidenceRow | undefined> {
  return db<EvidenceRow>('architecture_evidence as e')
    .join('architecture_snapshots as s', 's.id', 'e.snapshot_id')
    .where('s.audit_id', auditId)
    .andWhere('e.workspace_id', workspaceId)
    .andWhere('e.id', evidenceId)
    .first('e.*');
}

/** The audit's manifest entry of one path; undefined when the audit read no such file. */
export async function sourceFileAt(
  db: Knex,
  auditId: string,
  path: string,
): Promise<SourceFileRow | undefined> {
  return db<SourceFileRow>('audit_source_files').where({ audit_id: auditId, path }).first();
}
