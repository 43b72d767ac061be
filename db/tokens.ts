/** API tokens: only the SHA-256 of the secret is stored. */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';

export interface TokenRow {
  id: string;
  workspace_id: string;
  member_id: string;
  created_by_token_id: string | null;
  name: string;
  prefix: string;
  secret_sha256: string;
  scopes: string[];
  expires_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

/** A token row joined with its member's login and its workspace (what authentication needs). */
export interface TokenWithMember extends TokenRow {
  member_login: string;
  workspace_name: string;
  workspace_slug: string;
  workspace_created_at: Date;
  workspace_updated_at: Date;
}

export async function insertToken(
  db: Knex,
  input: {
    workspaceId: string;
    memberId: string;
    createdByTokenId: string | null;
    name: string;
    prefix: string;
    secretSha256: string;
    scopes: string[];
    expiresAt: Date;
  },
): Promise<TokenRow> {
  const [row] = await db<TokenRow>('api_tokens')
    .insert({
      id: crypto.randomUUID(),
      workspace_id: input.workspaceId,
      member_id: input.memberId,
      created_by_token_id: input.createdByTokenId,
      name: input.name,
      prefix: input.prefix,
      secret_sha256: input.secretSha256,
      scopes: input.scopes,
      expires_at: input.expiresAt,
    })
    .returning('*');
  return row!;
}

export async function findTokenByPrefix(
  db: Knex,
  prefix: string,
): Promise<TokenWithMember | undefined> {
  return db('api_tokens')
    .join('members', 'members.id', 'api_tokens.member_id')
    .join('workspaces', 'workspaces.id', 'api_tokens.workspace_id')
    .select(
      'api_tokens.*',
      'members.login as member_login',
      'workspaces.name as workspace_name',
      'workspaces.slug as workspace_slug',
      'workspaces.created_at as workspace_created_at',
      'workspaces.updated_at as workspace_updated_at',
    )
    .where('api_tokens.prefix', prefix)
    .first();
}

export async function findToken(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<TokenRow | undefined> {
  return db<TokenRow>('api_tokens').where({ workspace_id: workspaceId, id }).first();
}

export function tokensQuery(db: Knex, workspaceId: string): Keyset<TokenRow> {
  return keyset(
    db('api_tokens').select('*').where('api_tokens.workspace_id', workspaceId),
    'api_tokens',
  );
}

/** Sets revoked_at once; a second revocation keeps the first time. */
export async function revokeToken(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<TokenRow | undefined> {
  const [row] = await db<TokenRow>('api_tokens')
    .where({ workspace_id: workspaceId, id })
    .update({ revoked_at: db.raw('coalesce(revoked_at, now())') as unknown as Date })
    .returning('*');
  return row;
}

/** Records use, at most once a minute per token (the WHERE clause makes it cheap and racy-safe). */
export async function touchToken(db: Knex, id: string): Promise<void> {
  await db('api_tokens')
    .where({ id })
    .andWhere((q) =>
      q
        .whereNull('last_used_at')
        .orWhere('last_used_at', '<', db.raw("now() - interval '1 minute'")),
    )
    .update({ last_used_at: db.fn.now() });
}
