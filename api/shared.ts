/** Small helpers the resource modules share: paging input, timestamps, write records. */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Knex } from 'knex';
import { recordWrite } from '../db/activity';
import type { PageRequest } from '../db/paginate';
import { decodeCursor } from '../domain/pagination';
import type { Logger } from '../platform/logger';
import { problems } from './errors';
import { auditTokenId, type Principal } from './registry/operation';
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
    tokenId: auditTokenId(principal),
    requestId,
    action: what.action,
    resourceType: what.resourceType,
    resourceId: what.resourceId,
    details: principal.oauth
      ? { ...what.details, oauth_client_id: principal.oauth.clientId }
      : (what.details ?? {}),
  });
}

/**
 * The one rule for a resource a workflow owns (audit, schedule, decision): its rows are
 * committed first, then its workflow is started, so the workflow's first activity always finds
 * them. The workflow id derives from the row id and a start that finds the workflow already
 * there counts as done, so finishing the start of a row committed by an earlier (crashed)
 * request is harmless. When the start fails, `ifStartFails` settles the committed rows (marks
 * them failed, puts them in error, or discards them), and the client gets 503
 * workflow_engine_unavailable with `unavailable` as the detail and the resource's id as
 * `<resource>_id`.
 */
export async function commitThenStart<Row extends { id: string }>(
  log: Logger,
  resource: 'audit' | 'schedule' | 'decision',
  steps: {
    commit: () => Promise<Row>;
    /** False when the committed row needs no start (an earlier request's workflow runs it). */
    needsStart?: (row: Row) => boolean;
    start: (row: Row) => Promise<unknown>;
    ifStartFails: (row: Row, cause: string) => Promise<unknown>;
    unavailable: string;
  },
): Promise<Row> {
  const row = await steps.commit();
  if (steps.needsStart && !steps.needsStart(row)) return row;
  try {
    await steps.start(row);
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return row;
    const cause = err instanceof Error ? err.message : String(err);
    await steps.ifStartFails(row, cause);
    const id = { [`${resource}_id`]: row.id };
    log.error({ err, ...id }, `could not start the ${resource} workflow`);
    throw problems.unavailable('workflow_engine', steps.unavailable, id);
  }
  return row;
}
