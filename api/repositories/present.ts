/** Rows of the repositories feature as API responses. */
import { type RepositoryRow } from '../../db/repositories';
import { iso } from '../shared';

export function presentRepository(row: RepositoryRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    url: row.url,
    default_branch: row.default_branch,
    description: row.description,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
