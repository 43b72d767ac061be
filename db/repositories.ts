/** Repositories registered in a workspace (soft-deleted rows stay for audit history). */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';

export interface RepositoryRow {
  id: string;
  workspace_id: string;
  name: string;
  url: string;
  default_branch: string;
  description: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export async function insertRepository(
  db: Knex,
  input: {
    workspaceId: string;
    name: string;
    url: string;
    defaultBranch: string;
    description: string | null;
  },
): Promise<RepositoryRow> {
  const [row] = await db<RepositoryRow>('repositories')
    .insert({
      id: crypto.randomUUID(),
      workspace_id: input.workspaceId,
      name: input.name,
      url: input.url,
      default_branch: input.defaultBranch,
      description: input.description,
    })
    .returning('*');
  return row!;
}

export async function findRepository(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<RepositoryRow | undefined> {
  return db<RepositoryRow>('repositories')
    .where({ workspace_id: workspaceId, id })
    .whereNull('deleted_at')
    .first();
}

export async function findRepositoryByName(
  db: Knex,
  workspaceId: string,
  name: string,
): Promise<RepositoryRow | undefined> {
  return db<RepositoryRow>('repositories')
    .where({ workspace_id: workspaceId })
    .whereRaw('lower(name) = lower(?)', [name])
    .whereNull('deleted_at')
    .first();
}

export function repositoriesQuery(db: Knex, workspaceId: string): Keyset<RepositoryRow> {
  return keyset(
    db('repositories')
      .select('*')
      .where('repositories.workspace_id', workspaceId)
      .whereNull('repositories.deleted_at'),
    'repositories',
  );
}

export async function updateRepository(
  db: Knex,
  workspaceId: string,
  id: string,
  patch: Partial<Pick<RepositoryRow, 'name' | 'url' | 'default_branch' | 'description'>>,
): Promise<RepositoryRow | undefined> {
  const [row] = await db<RepositoryRow>('repositories')
    .where({ workspace_id: workspaceId, id })
    .whereNull('deleted_at')
    .update({ ...patch, updated_at: db.fn.now() as unknown as Date })
    .returning('*');
  return row;
}

export async function softDeleteRepository(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<RepositoryRow | undefined> {
  const [row] = await db<RepositoryRow>('repositories')
    .where({ workspace_id: workspaceId, id })
    .whereNull('deleted_at')
    .update({
      deleted_at: db.fn.now() as unknown as Date,
      updated_at: db.fn.now() as unknown as Date,
    })
    .returning('*');
  return row;
}
