/** Stored first responses of POSTs sent with an Idempotency-Key. */
import type { Knex } from 'knex';

export interface IdempotentResponse {
  request_sha256: string;
  status: number;
  response: unknown;
}

export async function findIdempotent(
  db: Knex,
  workspaceId: string,
  operationId: string,
  key: string,
): Promise<IdempotentResponse | undefined> {
  return db('idempotency_keys')
    .select('request_sha256', 'status', 'response')
    .where({ workspace_id: workspaceId, operation_id: operationId, key })
    .first();
}

export async function saveIdempotent(
  db: Knex,
  entry: {
    workspaceId: string;
    operationId: string;
    key: string;
    requestSha256: string;
    status: number;
    response: unknown;
  },
): Promise<void> {
  await db('idempotency_keys')
    .insert({
      workspace_id: entry.workspaceId,
      operation_id: entry.operationId,
      key: entry.key,
      request_sha256: entry.requestSha256,
      status: entry.status,
      response: JSON.stringify(entry.response),
    })
    .onConflict(['workspace_id', 'operation_id', 'key'])
    .ignore();
}

/**
 * Serialises the requests that carry one key until the caller's transaction ends (a
 * transaction-scoped advisory lock on `lockId`).
 */
export async function lockIdempotencyKey(trx: Knex.Transaction, lockId: bigint): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(?::bigint)', [lockId.toString()]);
}
