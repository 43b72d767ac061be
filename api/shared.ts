/** Small helpers the resource modules share: paging input, timestamps, write records. */
import type { Knex } from 'knex';
import { recordWrite } from '../db/activity';
import type { PageRequest } from '../db/paginate';
import { decodeCursor } from '../domain/pagination';
import { problems } from './errors';
import type { Principal } from './registry/operation';
import type { PageQuery } from './schema-kit';

/** Turns validated `limit`/`cursor` query parameters into a page request (400 for a bad cursor). */
export function pageRequest(query: PageQuery): PageRequest {
  let after = null;
  if (query.cursor !== undefined) {
    after = decodeCursor(query.cursor);
    if (!after) {
      throw problems.validationFailed([
        { in: 'query', path: '/cursor', message: 'is not a cursor issued by this API' },
      ]);
    }
  }
  return { limit: query.limit ?? 50, after };
}

export const iso = (d: Date): string => d.toISOString();
export const isoOrNull = (d: Date | null | undefined): string | null =>
  d ? d.toISOString() : null;

/** Records the audit event and activity item of a write made by `principal`. */
export async function recordPrincipalWrite(
  db: Knex,
  principal: Principal,
  requestId: string,
  what: {
    action: string;
    resourceType: string;
    resourceId: string | null;
    details?: Record<string, unknown>;
  },
): Promise<void> {
  await recordWrite(db, {
    workspaceId: principal.workspaceId,
    actorId: principal.memberId,
    actorLogin: principal.memberLogin,
    tokenId: principal.tokenId,
    requestId,
    action: what.action,
    resourceType: what.resourceType,
    resourceId: what.resourceId,
    details: what.details ?? {},
  });
}
