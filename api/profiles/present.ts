/** Rows of the profiles feature as API responses. */
import { type AuditProfileRow } from '../../db/profiles';
import { iso } from '../shared';

export function presentAuditProfile(row: AuditProfileRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    repository_id: row.repository_id,
    name: row.name,
    branch_ref: row.branch_ref,
    purpose: row.purpose,
    ...(row.source_scope ? { source_scope: row.source_scope } : {}),
    version: row.version,
    created_by: row.created_by,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
