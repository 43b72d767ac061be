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

/**
 * An audit's snapshot as JSON text (entities, relationships, and its evidence in position order
 * with the fields analysis reads), for the analysis pool to parse: tens of megabytes for a large
 * system, which the worker's main thread only passes on.
 */
export async function snapshotTextOfAudit(
  db: Knex,
  auditId: string,
): Promise<{ entities: string; relationships: string; evidence: string } | null> {
  const snapshot = (await db('architecture_snapshots')
    .where({ audit_id: auditId })
    .first(
      'id',
      db.raw('entities::text AS entities'),
      db.raw('relationships::text AS relationships'),
    )) as { id: string; entities: string; relationships: string } | undefined;
  if (!snapshot) return null;
  const { rows } = await db.raw<{ rows: Array<{ evidence: string }> }>(
    `SELECT coalesce(json_agg(json_build_object(
        'id', id, 'source_type', source_type, 'provider', provider,
        'evidence_kind', evidence_kind, 'subject_key', subject_key,
        'relationship_kind', relationship_kind, 'object_key', object_key, 'location', location,
        'summary', summary, 'content_sha256', content_sha256, 'attributes', attributes
      ) ORDER BY position), '[]')::text AS evidence
      FROM architecture_evidence WHERE snapshot_id = ?`,
    [snapshot.id],
  );
  return {
    entities: snapshot.entities,
    relationships: snapshot.relationships,
    evidence: rows[0]!.evidence,
  };
}

/** A snapshot's id and version only (its entities and relationships can be large). */
export async function snapshotRefOfAudit(
  db: Knex,
  auditId: string,
): Promise<{ id: string; version: number } | undefined> {
  return db('architecture_snapshots').where({ audit_id: auditId }).first('id', 'version');
}

/** A repository's snapshots whose audit completed, newest first. */
export function completedSnapshots(db: Knex, workspaceId: string, repositoryId: string) {
  return db('architecture_snapshots as s')
    .join('audits as a', 'a.id', 's.audit_id')
    .where({
      's.workspace_id': workspaceId,
      's.repository_id': repositoryId,
      'a.status': 'completed',
    })
    .orderBy([
      { column: 's.generated_at', order: 'desc' },
      { column: 's.id', order: 'desc' },
    ]);
}

/**
 * A repository's "latest architecture": its snapshots whose audit completed, the default branch's
 * full audits first (an audit of the default branch, or of a commit with no branch named, whose
 * source scope narrows nothing), then the others; newest first within each. A feature-branch or
 * scoped audit is the latest only while the default branch has no full one.
 */
function latestFirst(db: Knex, workspaceId: string, repositoryId: string) {
  return (
    db('architecture_snapshots as s')
      .join('audits as a', 'a.id', 's.audit_id')
      .join('repositories as r', 'r.id', 's.repository_id')
      .where({
        's.workspace_id': workspaceId,
        's.repository_id': repositoryId,
        'a.status': 'completed',
      })
      // The scope part is coversWholeRepository (domain/audits/source-scope.ts) in SQL.
      .orderByRaw(
        `(a.branch_ref IS NULL OR a.branch_ref = r.default_branch OR a.branch_ref = 'refs/heads/' || r.default_branch)
        AND coalesce(a.source_scope->'include', '[]'::jsonb) = '[]'::jsonb
        AND coalesce(a.source_scope->'exclude', '[]'::jsonb) = '[]'::jsonb
        AND coalesce(jsonb_array_length(a.source_scope->'source_types'), 3) = 3
        AND a.source_scope->'max_files' IS NULL DESC`,
      )
      .orderBy([
        { column: 's.generated_at', order: 'desc' },
        { column: 's.id', order: 'desc' },
      ])
  );
}

/** The repository's latest architecture (see latestFirst), optionally not that of one audit. */
export async function latestSnapshot(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  exceptAuditId?: string,
): Promise<SnapshotRow | undefined> {
  const q = latestFirst(db, workspaceId, repositoryId).select('s.*').first();
  if (exceptAuditId) q.whereNot('s.audit_id', exceptAuditId);
  return q as Promise<SnapshotRow | undefined>;
}

/**
 * The entities and relationships of that snapshot (the latest but `exceptAuditId`'s) as one JSON
 * array text, for the analysis pool to read (their first_observed_at).
 */
export async function latestSnapshotItemsText(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  exceptAuditId: string,
): Promise<string | null> {
  const row = (await latestFirst(db, workspaceId, repositoryId)
    .whereNot('s.audit_id', exceptAuditId)
    .first(db.raw('(s.entities || s.relationships)::text AS items'))) as
    { items: string } | undefined;
  return row?.items ?? null;
}

/** The id of that snapshot, without its graph. */
export async function latestSnapshotId(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Promise<string | undefined> {
  const row = await latestFirst(db, workspaceId, repositoryId).first('s.id');
  return row?.id;
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

/** A snapshot's id and repository, when the snapshot is in the workspace. */
export async function findSnapshotRef(
  db: Knex,
  workspaceId: string,
  snapshotId: string,
): Promise<{ id: string; repository_id: string | null } | undefined> {
  return db('architecture_snapshots')
    .where({ id: snapshotId, workspace_id: workspaceId })
    .first('id', 'repository_id');
}

/** A snapshot of this repository by id (any audit state: a snapshot exists once reconciled). */
export async function findSnapshotOfRepository(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  snapshotId: string,
): Promise<SnapshotRow | undefined> {
  return db<SnapshotRow>('architecture_snapshots')
    .where({ id: snapshotId, workspace_id: workspaceId, repository_id: repositoryId })
    .first();
}

/**
 * The newest snapshot of a repository whose audit completed at or after `since`, by completion
 * time.
 */
export async function latestSnapshotCompletedSince(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  since: Date,
): Promise<SnapshotRow | undefined> {
  return db('architecture_snapshots as s')
    .join('audits as a', 'a.id', 's.audit_id')
    .select('s.*')
    .where({
      's.workspace_id': workspaceId,
      's.repository_id': repositoryId,
      'a.status': 'completed',
    })
    .where('a.completed_at', '>=', since)
    .orderBy([
      { column: 'a.completed_at', order: 'desc' },
      { column: 's.id', order: 'desc' },
    ])
    .first() as Promise<SnapshotRow | undefined>;
}

/**
 * The version of a new snapshot of `repositoryId`: one more than its highest (`1` for a first
 * snapshot and for every upload audit's, which stands alone). Call it in the transaction that
 * inserts the snapshot: a transaction-scoped advisory lock per repository holds concurrent
 * audits of the repository back until this one commits, and a unique index backs it.
 */
export async function allocateSnapshotVersion(
  trx: Knex.Transaction,
  repositoryId: string | null,
): Promise<string> {
  if (!repositoryId) return '1';
  await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended('snapshot-version:' || ?, 0))`, [
    repositoryId,
  ]);
  const { rows } = await trx.raw<{ rows: Array<{ next: number }> }>(
    `SELECT coalesce(max(version::integer), 0) + 1 AS next
       FROM architecture_snapshots WHERE repository_id = ?`,
    [repositoryId],
  );
  return String(rows[0]!.next);
}

/** A snapshot as written: entities and relationships as objects, `generated_at` as ISO text. */
/** A new snapshot; its entities and relationships as arrays, or as their JSON text. */
export type NewSnapshot = Omit<SnapshotRow, 'entities' | 'relationships' | 'generated_at'> & {
  entities: readonly object[] | string;
  relationships: readonly object[] | string;
  generated_at: string;
};

export async function insertSnapshot(db: Knex, snapshot: NewSnapshot): Promise<void> {
  const json = (v: readonly object[] | string) => (typeof v === 'string' ? v : JSON.stringify(v));
  await db('architecture_snapshots').insert({
    ...snapshot,
    entities: json(snapshot.entities),
    relationships: json(snapshot.relationships),
  });
}

/**
 * Inserts a snapshot's evidence given as one JSON array of rows (EvidenceRow's columns, location
 * and attributes as JSON values, a null location stored as JSON null): PostgreSQL reads the rows
 * out of the text, so the worker's main thread neither builds nor serialises 50,000 of them.
 */
export async function insertEvidenceJson(db: Knex, rowsJson: string): Promise<void> {
  await db.raw(
    `INSERT INTO architecture_evidence (id, snapshot_id, workspace_id, source_type, provider,
       evidence_kind, subject_key, relationship_kind, object_key, location, source_ref, summary,
       content_sha256, attributes, observed_at, position)
     SELECT (r->>'id')::uuid, (r->>'snapshot_id')::uuid, (r->>'workspace_id')::uuid,
       r->>'source_type', r->>'provider', r->>'evidence_kind', r->>'subject_key',
       r->>'relationship_kind', r->>'object_key', (r->'location')::jsonb, r->>'source_ref',
       r->>'summary', r->>'content_sha256', coalesce((r->'attributes')::jsonb, '{}'::jsonb),
       (r->>'observed_at')::timestamptz, (r->>'position')::integer
       FROM json_array_elements(?::json) AS r`,
    [rowsJson],
  );
}

/** Evidence rows by id, in any snapshot. */
export async function evidenceByIds(db: Knex, ids: readonly string[]): Promise<EvidenceRow[]> {
  return db<EvidenceRow>('architecture_evidence')
    .whereIn('id', [...ids])
    .select('*');
}

/** The ids among `ids` of evidence in the workspace. */
export async function evidenceIdsIn(
  db: Knex,
  workspaceId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db('architecture_evidence')
    .where({ workspace_id: workspaceId })
    .whereIn('id', [...new Set(ids)])
    .select('id');
  return new Set(rows.map((r: { id: string }) => r.id));
}
