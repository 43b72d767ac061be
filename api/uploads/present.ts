/** Rows of the uploads feature as API responses. */
import { type UploadRow } from '../../db/uploads';
import { iso } from '../shared';

export function presentUpload(row: UploadRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    uploaded_by: row.uploaded_by,
    filename: row.filename,
    content_type: row.content_type,
    format: row.format,
    sha256: row.sha256,
    size_bytes: Number(row.size_bytes),
    file_count: row.file_count,
    unpacked_bytes: Number(row.unpacked_bytes),
    status: row.status === 'expired' ? ('expired' as const) : ('ready' as const),
    created_at: iso(row.created_at),
  };
}
