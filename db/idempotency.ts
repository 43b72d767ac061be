/**
 * Idempotency keys as claims. A request with a key first claims it (one autocommitted insert,
 * with the request's hash and the id of the resource it will create), then does its work, then
 * stores its response on the claim. No statement here runs inside the caller's work, so no
 * connection is held while the work waits for its own.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';

export interface IdempotencyScope {
  workspaceId: string;
  operationId: string;
  key: string;
}

/** What claiming a key found. */
export type Claim =
  /** This request owns the key: do the work and create the resource with `resourceId`. */
  | { kind: 'claimed'; claimId: string; resourceId: string; takenOver: boolean }
  /** The key was used before for this request: answer its stored response. */
  | { kind: 'completed'; status: number; response: unknown }
  /** Another request with this key and body is still at work. */
  | { kind: 'in_progress' }
  /** The key was used with another request. */
  | { kind: 'mismatch' };

interface KeyRow {
  request_sha256: string;
  state: 'in_progress' | 'completed';
  status: number | null;
  response: unknown;
  expired: boolean;
}

const pk = (s: IdempotencyScope) => ({
  workspace_id: s.workspaceId,
  operation_id: s.operationId,
  key: s.key,
});

/**
 * Claims `scope` for a request whose body hashes to `requestSha256`. An `in_progress` claim older
 * than `staleAfterSeconds` belongs to a request that died (its process was killed): it is taken
 * over, keeping its resource id, so the retry finishes the same resource instead of a second one.
 */
export async function claimIdempotencyKey(
  db: Knex,
  scope: IdempotencyScope,
  requestSha256: string,
  staleAfterSeconds: number,
  ttlHours: number,
): Promise<Claim> {
  // A claim released between our insert and our read lets the insert win on the next turn.
  for (let turn = 0; turn < 3; turn++) {
    const claimId = crypto.randomUUID();
    const inserted = await db('idempotency_keys')
      .insert({
        ...pk(scope),
        request_sha256: requestSha256,
        state: 'in_progress',
        claim_id: claimId,
        claimed_at: db.fn.now(),
        resource_id: crypto.randomUUID(),
      })
      .onConflict(['workspace_id', 'operation_id', 'key'])
      .ignore()
      .returning<{ resource_id: string }[]>('resource_id');
    if (inserted[0])
      return { kind: 'claimed', claimId, resourceId: inserted[0].resource_id, takenOver: false };

    const taken = await db('idempotency_keys')
      .where({ ...pk(scope), state: 'in_progress', request_sha256: requestSha256 })
      .andWhere('claimed_at', '<', db.raw('now() - make_interval(secs => ?)', [staleAfterSeconds]))
      .update({ claim_id: claimId, claimed_at: db.fn.now() })
      .returning<{ resource_id: string }[]>('resource_id');
    if (taken[0])
      return { kind: 'claimed', claimId, resourceId: taken[0].resource_id, takenOver: true };

    const row = (await db('idempotency_keys')
      .select(
        'request_sha256',
        'state',
        'status',
        'response',
        db.raw('created_at < now() - make_interval(hours => ?) AS expired', [ttlHours]),
      )
      .where(pk(scope))
      .first()) as KeyRow | undefined;
    if (!row) continue;
    // A completed key past its time to live (IDEMPOTENCY_KEY_TTL_HOURS) is free again, whether
    // or not the retention sweep has removed it yet.
    if (row.state === 'completed' && row.expired) {
      await db('idempotency_keys')
        .where({ ...pk(scope), state: 'completed' })
        .andWhere('created_at', '<', db.raw('now() - make_interval(hours => ?)', [ttlHours]))
        .delete();
      continue;
    }
    if (row.request_sha256 !== requestSha256) return { kind: 'mismatch' };
    if (row.state === 'completed')
      return { kind: 'completed', status: row.status!, response: row.response };
    return { kind: 'in_progress' };
  }
  return { kind: 'in_progress' };
}

/** Stores the response of the work done under `claimId` (a no-op if the claim was taken over). */
export async function completeIdempotencyKey(
  db: Knex,
  scope: IdempotencyScope,
  claimId: string,
  answer: { status: number; response: unknown },
): Promise<void> {
  await db('idempotency_keys')
    .where({ ...pk(scope), claim_id: claimId, state: 'in_progress' })
    .update({
      state: 'completed',
      status: answer.status,
      response: JSON.stringify(answer.response),
    });
}

/**
 * Gives up the claim `claimId` (its work failed): the key may be used again. With
 * `keepResource` the claim stays, stale at once, so the next request with the key takes it over
 * with the same resource id (claimIdempotencyKey) and finishes that resource.
 */
export async function releaseIdempotencyKey(
  db: Knex,
  scope: IdempotencyScope,
  claimId: string,
  options: { keepResource?: boolean } = {},
): Promise<void> {
  const claim = db('idempotency_keys').where({
    ...pk(scope),
    claim_id: claimId,
    state: 'in_progress',
  });
  if (options.keepResource) await claim.update({ claimed_at: new Date(0) });
  else await claim.delete();
}
