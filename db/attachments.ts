/**
 * Audit attachments: an upload's bytes kept beside an audit until `retained_until`. Rows stay
 * after removal (status `deleted` by a user, `expired` by the retention sweep) as the record of
 * what was kept and when it went; the bytes go with the last holder of their blob.
 */
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';
import crypto from 'node:crypto';
import type { BlobStore } from '../platform/blob-store';

export const ATTACHMENT_STATUSES = ['available', 'deleted', 'expired'] as const;
export type AttachmentStatus = (typeof ATTACHMENT_STATUSES)[number];

export interface AttachmentRow {
  id: string;
  workspace_id: string;
  audit_id: string;
  upload_id: string;
  uploaded_by: string;
  filename: string;
  content_type: string;
  sha256: string;
  size_bytes: string | number;
  status: AttachmentStatus;
  retention_days: number;
  retained_until: Date;
  created_at: Date;
  removed_at: Date | null;
}

const NOW = "date_trunc('milliseconds', now())";

export async function insertAttachment(
  db: Knex,
  input: Omit<
    AttachmentRow,
    'id' | 'status' | 'retained_until' | 'created_at' | 'removed_at' | 'size_bytes'
  > & { size_bytes: number },
): Promise<AttachmentRow> {
  const [row] = await db<AttachmentRow>('audit_attachments')
    .insert({
      id: crypto.randomUUID(),
      ...input,
      status: 'available',
      retained_until: db.raw(`${NOW} + make_interval(days => ?)`, [input.retention_days]) as never,
    })
    .returning('*');
  return row!;
}

export async function findAttachment(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<AttachmentRow | undefined> {
  return db<AttachmentRow>('audit_attachments').where({ workspace_id: workspaceId, id }).first();
}

/** Attachments of one audit, optionally of one status (for keyset pagination). */
export function attachmentsQuery(
  db: Knex,
  workspaceId: string,
  auditId: string,
  f: { status?: AttachmentStatus } = {},
): Keyset<AttachmentRow> {
  const q = db('audit_attachments').select('audit_attachments.*').where({
    'audit_attachments.workspace_id': workspaceId,
    'audit_attachments.audit_id': auditId,
  });
  if (f.status) q.andWhere('audit_attachments.status', f.status);
  return keyset(q, 'audit_attachments');
}

/** Marks an available attachment deleted; undefined when there is none to delete. */
export async function markAttachmentDeleted(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<AttachmentRow | undefined> {
  const [row] = await db<AttachmentRow>('audit_attachments')
    .where({ workspace_id: workspaceId, id, status: 'available' })
    .update({ status: 'deleted', removed_at: db.raw(NOW) as never })
    .returning('*');
  return row;
}

/**
 * Marks up to `limit` rows of a retained table (attachments, exports) past their retention
 * `expired` and returns them. SKIP LOCKED lets two sweeps (or a sweep and a user's delete) share
 * the work without waiting or doubling.
 */
export async function expireDue<Row>(
  db: Knex,
  table: 'audit_attachments' | 'audit_exports',
  limit: number,
): Promise<Row[]> {
  const result = await db.raw<{ rows: Row[] }>(
    `UPDATE ?? SET status = 'expired', removed_at = ${NOW}
     WHERE id IN (
       SELECT id FROM ??
       WHERE status = 'available' AND retained_until <= now()
       ORDER BY retained_until, id
       LIMIT ?
       FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [table, table, limit],
  );
  return result.rows;
}

/** Attachments past their retention, marked `expired` (see expireDue). */
export const expireDueAttachments = (db: Knex, limit: number) =>
  expireDue<AttachmentRow>(db, 'audit_attachments', limit);

/** Serialises everything that adds or removes a holder of one blob (in a transaction). */
export async function lockBlob(trx: Knex, sha256: string): Promise<void> {
  await trx.raw("SELECT pg_advisory_xact_lock(hashtextextended('blob:' || ?, 0))", [sha256]);
}

/**
 * Whether anything still needs the blob: an available attachment or export, an audit's source file, an
 * upload an audit ran on (a retry reads it again), or an upload never attached (it waits to be
 * used). An upload that only served attachments lives as long as they do.
 */
export async function blobIsHeld(db: Knex, sha256: string): Promise<boolean> {
  const result = await db.raw<{ rows: Array<{ held: boolean }> }>(
    `SELECT
       EXISTS (SELECT 1 FROM audit_attachments WHERE sha256 = :sha AND status = 'available')
       OR EXISTS (SELECT 1 FROM audit_exports WHERE sha256 = :sha AND status = 'available')
       OR EXISTS (SELECT 1 FROM audit_source_files WHERE sha256 = :sha)
       OR EXISTS (
         SELECT 1 FROM uploads u WHERE u.sha256 = :sha AND u.status = 'ready' AND (
           EXISTS (SELECT 1 FROM audits a WHERE a.upload_id = u.id)
           OR NOT EXISTS (SELECT 1 FROM audit_attachments t WHERE t.upload_id = u.id)))
       AS held`,
    { sha: sha256 },
  );
  return result.rows[0]!.held;
}

/** Uploads whose bytes were removed with their last attachment. */
export async function expireUploadsOfBlob(db: Knex, sha256: string): Promise<number> {
  return db('uploads').where({ sha256, status: 'ready' }).update({ status: 'expired' });
}

/**
 * Deletes each blob no longer held by anything (see blobIsHeld), marking uploads that only
 * served attachments `expired`. The blob lock makes a concurrent upload or attachment of the
 * same bytes either land before the check (and hold the blob) or after the removal (and store
 * the bytes again); the file is removed before the commit, while the lock is held.
 */
export async function releaseBlobs(
  db: Knex,
  blobs: BlobStore,
  shas: Iterable<string>,
): Promise<string[]> {
  const removed: string[] = [];
  for (const sha256 of new Set(shas)) {
    await db.transaction(async (trx) => {
      await lockBlob(trx, sha256);
      if (await blobIsHeld(trx, sha256)) return;
      await expireUploadsOfBlob(trx, sha256);
      await blobs.remove(sha256);
      removed.push(sha256);
    });
  }
  return removed;
}
