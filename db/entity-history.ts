/** One entity across a repository's architecture snapshots (issue 28: the explorer's history). */
import type { Knex } from 'knex';

export interface EntityInSnapshot {
  snapshot_id: string;
  audit_id: string;
  audit_status: string;
  commit_sha: string | null;
  generated_at: Date;
  /** The entity as the snapshot holds it, or null when the snapshot has no such entity. */
  entity: Record<string, unknown> | null;
  /** Relationships of the snapshot from or to the entity. */
  relationship_count: number;
}

/**
 * The repository's latest `limit` snapshots, newest first, each with the entity of that
 * canonical key (read inside PostgreSQL: a snapshot's entities are one JSONB array).
 */
export async function entityAcrossSnapshots(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  key: string,
  limit: number,
): Promise<EntityInSnapshot[]> {
  const rows = await db('architecture_snapshots as s')
    .join('audits as a', 'a.id', 's.audit_id')
    .where({ 's.workspace_id': workspaceId, 's.repository_id': repositoryId })
    .select(
      's.id as snapshot_id',
      's.audit_id',
      'a.status as audit_status',
      'a.commit_sha',
      's.generated_at',
      db.raw(
        `(select e from jsonb_array_elements(s.entities) e where e->>'canonical_key' = ? limit 1) as entity`,
        [key],
      ),
      db.raw(
        `(select count(*)::int from jsonb_array_elements(s.relationships) r
           where r->>'source_key' = ? or r->>'target_key' = ?) as relationship_count`,
        [key, key],
      ),
    )
    .orderBy([
      { column: 's.generated_at', order: 'desc' },
      { column: 's.id', order: 'desc' },
    ])
    .limit(limit);
  return rows as EntityInSnapshot[];
}
