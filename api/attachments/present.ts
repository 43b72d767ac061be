/** Rows of the attachments feature as API responses. */
import { type AttachmentRow } from '../../db/attachments';
import { iso, isoOrNull } from '../shared';

export function presentAttachment(row: AttachmentRow) {
  return {
    id: row.id,
    upload_id: row.upload_id,
    uploaded_by: row.uploaded_by,
    filename: row.filename,
    content_type: row.content_type,
    sha256: row.sha256,
    status: row.status,
    size_bytes: Number(row.size_bytes),
    retained_until: iso(row.retained_until),
    created_at: iso(row.created_at),
    // Beyond the spec's fields (AttachmentResponse admits more): where it belongs, when it went.
    audit_id: row.audit_id,
    retention_days: row.retention_days,
    removed_at: isoOrNull(row.removed_at),
  };
}
