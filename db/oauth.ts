/**
 * Storage of the OAuth authorization server: oidc-provider's artifacts (one row per model
 * instance: payload as jsonb, with the columns its adapter looks things up by), the grants
 * members gave MCP clients, and the generated keys.
 */
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';

type Payload = Record<string, unknown>;

export async function upsertModel(
  db: Knex,
  model: string,
  id: string,
  payload: Payload,
  expiresInSeconds: number | undefined,
): Promise<void> {
  await db('oauth_models')
    .insert({
      model,
      id,
      payload: JSON.stringify(payload),
      expires_at: expiresInSeconds ? new Date(Date.now() + expiresInSeconds * 1000) : null,
      grant_id: (payload.grantId as string | undefined) ?? null,
      uid: (payload.uid as string | undefined) ?? null,
      user_code: (payload.userCode as string | undefined) ?? null,
    })
    .onConflict(['model', 'id'])
    .merge();
}

async function findBy(db: Knex, model: string, where: Record<string, string>) {
  const row = await db('oauth_models')
    .where({ model, ...where })
    .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()))
    .first('payload', 'consumed_at');
  if (!row) return undefined;
  const payload = row.payload as Payload;
  return row.consumed_at
    ? { ...payload, consumed: Math.floor((row.consumed_at as Date).getTime() / 1000) }
    : payload;
}

export const findModel = (db: Knex, model: string, id: string) => findBy(db, model, { id });
export const findModelByUid = (db: Knex, model: string, uid: string) => findBy(db, model, { uid });
export const findModelByUserCode = (db: Knex, model: string, userCode: string) =>
  findBy(db, model, { user_code: userCode });

/** Marks a model consumed (an authorization code once exchanged); false when it already was. */
export async function consumeModel(db: Knex, model: string, id: string): Promise<boolean> {
  const n = await db('oauth_models')
    .where({ model, id })
    .whereNull('consumed_at')
    .update({ consumed_at: db.fn.now() });
  return n > 0;
}

export async function destroyModel(db: Knex, model: string, id: string): Promise<void> {
  await db('oauth_models').where({ model, id }).delete();
}

/** Every artifact issued under a grant (tokens, codes), of any model. */
export async function destroyByGrant(db: Knex, grantId: string): Promise<void> {
  await db('oauth_models').where({ grant_id: grantId }).delete();
  await db('oauth_models').where({ model: 'Grant', id: grantId }).delete();
}

/** Drops artifacts that expired (called now and then; reads ignore them anyway). */
export async function sweepExpiredModels(db: Knex): Promise<void> {
  await db('oauth_models').where('expires_at', '<', db.raw("now() - interval '1 hour'")).delete();
}

export interface OAuthGrantRow {
  id: string;
  workspace_id: string;
  member_id: string;
  client_id: string;
  client_name: string | null;
  redirect_host: string;
  resource: string;
  scopes: string[];
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
}

export async function insertGrant(
  db: Knex,
  row: Omit<OAuthGrantRow, 'revoked_at' | 'created_at'>,
): Promise<OAuthGrantRow> {
  const [made] = await db('oauth_grants').insert(row).returning('*');
  return made as OAuthGrantRow;
}

export async function findGrant(db: Knex, id: string): Promise<OAuthGrantRow | undefined> {
  return db<OAuthGrantRow>('oauth_grants').where({ id }).first();
}

/** Sets revoked_at (once); the row as it is now, or undefined when there is none. */
export async function markGrantRevoked(db: Knex, id: string): Promise<OAuthGrantRow | undefined> {
  await db('oauth_grants')
    .where({ id })
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now() });
  return findGrant(db, id);
}

/** A member's grants in one workspace. */
export function memberGrantsQuery(
  db: Knex,
  workspaceId: string,
  memberId: string,
): Keyset<OAuthGrantRow> {
  return keyset(
    db('oauth_grants')
      .select('*')
      .where('oauth_grants.workspace_id', workspaceId)
      .where('oauth_grants.member_id', memberId),
    'oauth_grants',
  );
}

/** The live grants of some memberships (a person's, for the session page), newest first. */
export async function liveGrantsOf(
  db: Knex,
  memberIds: readonly string[],
): Promise<Array<OAuthGrantRow & { workspace_name: string }>> {
  return db('oauth_grants')
    .join('workspaces', 'workspaces.id', 'oauth_grants.workspace_id')
    .whereIn('oauth_grants.member_id', [...memberIds])
    .whereNull('oauth_grants.revoked_at')
    .where('oauth_grants.expires_at', '>', db.fn.now())
    .orderBy('oauth_grants.created_at', 'desc')
    .select('oauth_grants.*', 'workspaces.name as workspace_name');
}

/** A stored key (made on first start), or the one `make` gives, stored if none was. */
export async function ensureKey<T>(db: Knex, kind: string, make: () => T): Promise<T> {
  await db('oauth_keys')
    .insert({ kind, value: JSON.stringify(make()) })
    .onConflict('kind')
    .ignore();
  const row = await db('oauth_keys').where({ kind }).first('value');
  return row.value as T;
}

/** Records a tool call (or other gateway action) as an audit event only: no activity item. */
export async function insertAuditEvent(
  db: Knex,
  e: {
    id: string;
    workspaceId: string;
    actorId: string;
    action: string;
    resourceType: string;
    details: Record<string, unknown>;
    requestId: string | null;
  },
): Promise<void> {
  await db('audit_events').insert({
    id: e.id,
    workspace_id: e.workspaceId,
    actor_id: e.actorId,
    token_id: null,
    action: e.action,
    resource_type: e.resourceType,
    resource_id: null,
    details: JSON.stringify(e.details),
    request_id: e.requestId,
  });
}
