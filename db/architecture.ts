/** Architecture snapshots (immutable, one per audit) and their evidence. */
import type { Knex } from 'knex';

export interface SnapshotRow {
  id: string;
  audit_id: string;
  workspace_id: string;
  repository_id: string | null;
  version: string;
  status: string;
  sources: string[];
  missing_sources: string[];
  source_coverage: string;
  entity_count: number;
  relationship_count: number;
  entities: Array<Record<string, unknown>>;
  relationships: Array<Record<string, unknown>>;
  generated_at: Date;
}

export interface EvidenceRow {
  id: string;
  snapshot_id: string;
  workspace_id: string;
  source_type: string;
  provider: string;
  evidence_kind: string;
  subject_key: string;
  relationship_kind: string | null;
  object_key: string | null;
  location: Record<string, unknown> | null;
  source_ref: string;
  summary: string;
  content_sha256: string;
  attributes: Record<string, unknown>;
  observed_at: Date;
  position: number;
}

export async function snapshotOfAudit(db: Knex, auditId: string): Promise<SnapshotRow | undefined> {
  return db<SnapshotRow>('architecture_snapshots').where({ audit_id: auditId }).first();
}

/** A snapshot's id and version only (its entities and relationships can be large). */
export async function snapshotRefOfAudit(
  db: Knex,
  auditId: string,
): Promise<{ id: string; version: number } | undefined> {
  return db('architecture_snapshots').where({ audit_id: auditId }).first('id', 'version');
}

/** The newest snapshot of a repository whose audit completed (optionally before another audit's). */
export async function latestSnapshot(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  exceptAuditId?: string,
): Promise<SnapshotRow | undefined> {
  const q = db('architecture_snapshots as s')
    .join('audits as a', 'a.id', 's.audit_id')
    .select('s.*')
    .where({
      's.workspace_id': workspaceId,
      's.repository_id': repositoryId,
      'a.status': 'completed',
    })
    .orderBy([
      { column: 's.generated_at', order: 'desc' },
      { column: 's.id', order: 'desc' },
    ])
    .first();
  if (exceptAuditId) q.whereNot('s.audit_id', exceptAuditId);
  return q as Promise<SnapshotRow | undefined>;
}

export async function evidenceOf(db: Knex, snapshotId: string): Promise<EvidenceRow[]> {
  return db<EvidenceRow>('architecture_evidence')
    .where({ snapshot_id: snapshotId })
    .orderBy('position');
}

export async function snapshotsOfRepository(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  limit: number,
) {
  return db('architecture_snapshots as s')
    .join('audits as a', 'a.id', 's.audit_id')
    .select(
      's.id',
      's.audit_id',
      's.version',
      's.status',
      's.sources',
      's.missing_sources',
      's.source_coverage',
      's.entity_count',
      's.relationship_count',
      's.generated_at',
      'a.status as audit_status',
      'a.audit_type',
      'a.commit_sha',
      'a.completed_at',
    )
    .where({ 's.workspace_id': workspaceId, 's.repository_id': repositoryId })
    .orderBy([
      { column: 's.generated_at', order: 'desc' },
      { column: 's.id', order: 'desc' },
    ])
    .limit(limit);
}
