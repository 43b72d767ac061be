/** Member credentials (per login) and server-side session rows. */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { workspaceColumns, type MemberRow, type WorkspaceRow } from './workspaces';

export async function passwordHashOf(db: Knex, login: string): Promise<string | null> {
  const row = await db('member_credentials').where({ login }).first('password_hash');
  return (row?.password_hash as string | undefined) ?? null;
}

export async function setPasswordHash(db: Knex, login: string, hash: string): Promise<void> {
  await db('member_credentials')
    .insert({ login, password_hash: hash, updated_at: db.fn.now() })
    .onConflict('login')
    .merge();
}

/** Whether any workspace has a member with this login. */
export async function loginExists(db: Knex, login: string): Promise<boolean> {
  return !!(await db('members').where({ login }).whereNull('removed_at').first('id'));
}

export interface SessionRow {
  id: string;
  login: string;
  expires_at: Date;
  created_at: Date;
}

export async function insertSession(
  db: Knex,
  input: { secretSha256: string; login: string; ip: string; userAgent: string; expiresAt: Date },
): Promise<SessionRow> {
  const [row] = await db('member_sessions')
    .insert({
      id: crypto.randomUUID(),
      secret_sha256: input.secretSha256,
      login: input.login,
      ip: input.ip,
      user_agent: input.userAgent.slice(0, 500),
      expires_at: input.expiresAt,
    })
    .returning(['id', 'login', 'expires_at', 'created_at']);
  return row as SessionRow;
}

/** The live session whose secret has this digest (not signed out, not expired). */
export async function liveSession(db: Knex, secretSha256: string): Promise<SessionRow | undefined> {
  return db('member_sessions')
    .where({ secret_sha256: secretSha256 })
    .whereNull('signed_out_at')
    .where('expires_at', '>', db.fn.now())
    .first('id', 'login', 'expires_at', 'created_at');
}

export async function endSession(db: Knex, id: string): Promise<void> {
  await db('member_sessions').where({ id }).update({ signed_out_at: db.fn.now() });
}

/** Every membership of a login, with its workspace. */
export async function membershipsOf(
  db: Knex,
  login: string,
): Promise<Array<MemberRow & { workspace: WorkspaceRow }>> {
  const rows = await db('members')
    .join('workspaces', 'workspaces.id', 'members.workspace_id')
    .where('members.login', login)
    .whereNull('members.removed_at')
    .orderBy('workspaces.name')
    .select('members.*', ...workspaceColumns('ws_'));
  return rows.map((r: Record<string, unknown>) => ({
    id: r.id as string,
    workspace_id: r.workspace_id as string,
    login: r.login as string,
    display_name: r.display_name as string | null,
    role: r.role as string,
    created_at: r.created_at as Date,
    removed_at: null,
    workspace: {
      id: r.workspace_id as string,
      name: r.ws_name as string,
      slug: r.ws_slug as string,
      created_at: r.ws_created_at as Date,
      updated_at: r.ws_updated_at as Date,
    },
  }));
}
