/** Rows of the workspaces feature as API responses. */
import { type MemberRow, type WorkspaceRow } from '../../db/workspaces';
import { iso } from '../shared';

export function presentWorkspace(row: WorkspaceRow) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function presentMember(row: MemberRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    login: row.login,
    display_name: row.display_name,
    role: row.role as 'owner' | 'admin' | 'member',
    created_at: iso(row.created_at),
  };
}
