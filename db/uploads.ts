/** Uploaded source archives (the bytes live in the blob store under their sha256). */
import crypto from 'node:crypto';
import type { Knex } from 'knex';

export interface UploadRow {
  id: string;
  workspace_id: string;
  uploaded_by: string;
  filename: string;
  content_type: string;
  format: 'tar.gz' | 'zip';
  sha256: string;
  size_bytes: number;
  file_count: number;
  unpacked_bytes: number;
  status: string;
  created_at: Date;
}

export async function insertUpload(
  db: Knex,
  row: Omit<UploadRow, 'id' | 'created_at'>,
): Promise<UploadRow> {
  const [created] = await db<UploadRow>('uploads')
    .insert({ id: crypto.randomUUID(), ...row })
    .returning('*');
  return created!;
}

export async function findUpload(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<UploadRow | undefined> {
  return db<UploadRow>('uploads').where({ workspace_id: workspaceId, id }).first();
}
