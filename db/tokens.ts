/** API tokens: only the SHA-256 of the secret is stored. */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';
import { workspaceColumns } from './workspaces';

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
    .select('api_tokens.*', 'members.login as member_login', ...workspaceColumns('workspace_'))
    .where('api_tokens.prefix', prefix)
    .whereNull('members.removed_at')
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

/**
 * Revokes every live token minted, directly or through others, by `rootId` (not `rootId` itself),
 * and returns them with `revoked_at` set. Tokens can mint only in their own workspace, so the walk
 * stays in it.
 */
export async function revokeDescendants(
  db: Knex,
  workspaceId: string,
  rootId: string,
): Promise<TokenRow[]> {
  const result = await db.raw<{ rows: TokenRow[] }>(
    `WITH RECURSIVE lineage AS (
       SELECT id FROM api_tokens WHERE created_by_token_id = :rootId AND workspace_id = :workspaceId
       UNION
       SELECT t.id FROM api_tokens t JOIN lineage l ON t.created_by_token_id = l.id
        WHERE t.workspace_id = :workspaceId
     )
     UPDATE api_tokens SET revoked_at = now()
      WHERE id IN (SELECT id FROM lineage) AND revoked_at IS NULL
     RETURNING *`,
    { rootId, workspaceId },
  );
  return result.rows;
}

/**
 * Locks a token row for the rest of the transaction and tells whether it is still live: a token
 * minting another holds this lock, so a concurrent revocation (which updates the row) either
 * comes first and is seen, or waits and then revokes the new token with the rest of its lineage.
 */
export async function lockLiveToken(db: Knex, id: string): Promise<boolean> {
  const row = await db<TokenRow>('api_tokens')
    .where({ id })
    .whereNull('revoked_at')
    .where('expires_at', '>', db.fn.now())
    .forShare()
    .first('id');
  return row !== undefined;
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
