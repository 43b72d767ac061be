/** Workspaces and their members. */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';

export interface WorkspaceRow {
  id: string;
  name: string;
  slug: string;
  created_at: Date;
  updated_at: Date;
}

export interface MemberRow {
  id: string;
  workspace_id: string;
  login: string;
  display_name: string | null;
  role: string;
  created_at: Date;
}

export async function insertWorkspace(
  db: Knex,
  input: { name: string; slug: string },
): Promise<WorkspaceRow> {
  const [row] = await db<WorkspaceRow>('workspaces')
    .insert({ id: crypto.randomUUID(), name: input.name, slug: input.slug })
    .returning('*');
  return row!;
}

export async function findWorkspace(db: Knex, id: string): Promise<WorkspaceRow | undefined> {
  return db<WorkspaceRow>('workspaces').where({ id }).first();
}

export async function findWorkspaceBySlug(
  db: Knex,
  slug: string,
): Promise<WorkspaceRow | undefined> {
  return db<WorkspaceRow>('workspaces').where({ slug }).first();
}

export async function insertMember(
  db: Knex,
  input: { workspaceId: string; login: string; displayName?: string | null; role: string },
): Promise<MemberRow> {
  const [row] = await db<MemberRow>('members')
    .insert({
      id: crypto.randomUUID(),
      workspace_id: input.workspaceId,
      login: input.login,
      display_name: input.displayName ?? null,
      role: input.role,
    })
    .returning('*');
  return row!;
}

export async function findMemberByLogin(
  db: Knex,
  workspaceId: string,
  login: string,
): Promise<MemberRow | undefined> {
  return db<MemberRow>('members').where({ workspace_id: workspaceId, login }).first();
}

export function membersQuery(db: Knex, workspaceId: string): Keyset<MemberRow> {
  return keyset(db('members').select('*').where('members.workspace_id', workspaceId), 'members');
}

/** A member of the workspace by id. */
export async function findMember(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<MemberRow | undefined> {
  return db<MemberRow>('members').where({ workspace_id: workspaceId, id }).first();
}

/** A member by id alone (a principal's own row, a schedule's owner). */
export async function memberById(db: Knex, id: string): Promise<MemberRow | undefined> {
  return db<MemberRow>('members').where({ id }).first();
}

/** Logins by member id; ids of no member are absent. */
export async function memberLogins(db: Knex, ids: readonly string[]): Promise<Map<string, string>> {
  const rows = await db<MemberRow>('members')
    .whereIn('id', [...new Set(ids)])
    .select('id', 'login');
  return new Map(rows.map((m) => [m.id, m.login]));
}
