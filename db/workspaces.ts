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
  /** Set when the member was removed; the row stays so history keeps naming who acted. */
  removed_at: Date | null;
}

/** A joined workspace's own columns (all but its id), each named `<prefix><column>`. */
export function workspaceColumns(prefix: string): string[] {
  return ['name', 'slug', 'created_at', 'updated_at'].map(
    (column) => `workspaces.${column} as ${prefix}${column}`,
  );
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
  return db<MemberRow>('members')
    .where({ workspace_id: workspaceId, login })
    .whereNull('removed_at')
    .first();
}

export function membersQuery(db: Knex, workspaceId: string): Keyset<MemberRow> {
  return keyset(
    db('members')
      .select('*')
      .where('members.workspace_id', workspaceId)
      .whereNull('members.removed_at'),
    'members',
  );
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

/**
 * Adds a member, or brings back a removed one with the same login (its history stays linked).
 * Returns undefined when a current member already has the login.
 */
export async function addMember(
  db: Knex,
  input: { workspaceId: string; login: string; role: string; displayName?: string | null },
): Promise<{ member: MemberRow; restored: boolean } | undefined> {
  const existing = await db<MemberRow>('members')
    .where({ workspace_id: input.workspaceId, login: input.login })
    .forUpdate()
    .first();
  if (existing && !existing.removed_at) return undefined;
  if (existing) {
    const [row] = await db<MemberRow>('members')
      .where({ id: existing.id })
      .update({
        role: input.role,
        display_name: input.displayName ?? existing.display_name,
        removed_at: null,
      })
      .returning('*');
    return { member: row!, restored: true };
  }
  return { member: await insertMember(db, input), restored: false };
}

/** Locks the workspace row for the transaction (membership changes take turns). */
export async function lockWorkspace(db: Knex, id: string): Promise<void> {
  await db('workspaces').where({ id }).forUpdate().first('id');
}

/** Current members of the workspace holding the role (to keep the last owner from leaving). */
export async function countMembersWithRole(
  db: Knex,
  workspaceId: string,
  role: string,
): Promise<number> {
  const row = await db('members')
    .where({ workspace_id: workspaceId, role })
    .whereNull('removed_at')
    .count<{ count: string }>('id as count')
    .first();
  return Number(row?.count ?? 0);
}

/**
 * Removes a member: marks the row, revokes the member's live API tokens and OAuth grants. Sessions
 * are per login; they stop reaching this workspace because memberships skip removed rows.
 */
export async function removeMember(
  db: Knex,
  memberId: string,
): Promise<{ revokedTokens: number; revokedGrants: number }> {
  await db('members').where({ id: memberId }).update({ removed_at: db.fn.now() });
  const revokedTokens = await db('api_tokens')
    .where({ member_id: memberId })
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now() });
  const revokedGrants = await db('oauth_grants')
    .where({ member_id: memberId })
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now() });
  return { revokedTokens, revokedGrants };
}
