/** Ending a grant, from the REST API or from the session page: one transaction, one audit event. */
import type { Knex } from 'knex';
import { destroyByGrant, markGrantRevoked, type OAuthGrantRow } from '../../db/oauth';
import { recordWrite, type WriteRecord } from '../../db/activity';

export async function revokeGrant(
  db: Knex,
  grant: OAuthGrantRow,
  actor: Pick<WriteRecord, 'actorId' | 'actorLogin' | 'tokenId' | 'requestId'> & {
    via: 'api' | 'session';
  },
): Promise<OAuthGrantRow> {
  return db.transaction(async (trx) => {
    // Every token, code and refresh token of the grant goes; the row stays, marked revoked.
    await destroyByGrant(trx, grant.id);
    const row = await markGrantRevoked(trx, grant.id);
    if (!grant.revoked_at) {
      await recordWrite(trx, {
        workspaceId: grant.workspace_id,
        actorId: actor.actorId,
        actorLogin: actor.actorLogin,
        tokenId: actor.tokenId,
        requestId: actor.requestId,
        action: 'oauth_grant.revoked',
        resourceType: 'oauth_grant',
        resourceId: null,
        details: {
          grant_id: grant.id,
          client_id: grant.client_id,
          client_name: grant.client_name,
          via: actor.via,
        },
      });
    }
    return row!;
  });
}
