/** Small helpers the resource modules share: paging input, timestamps, write records. */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import fs from 'node:fs';
import { BlobStore } from '../platform/blob-store';
import { recordWrite } from '../db/activity';
import type { PageRequest } from '../db/paginate';
import { decodeCursor } from '../domain/pagination';
import type { Logger } from '../platform/logger';
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

/** `Content-Disposition: attachment` (RFC 6266): an ASCII fallback plus the exact name (RFC 5987). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * Answers a stored blob as a download with its type, length, `Content-Disposition`,
 * `X-Content-SHA256`. The file is opened before answering, so a missing blob is an error
 * response, not a broken stream; `whenMissing` explains a blob removed since the row was read
 * (it throws the resource's problem) and otherwise the error stands.
 */
export async function serveBlob(
  koa: Context,
  blobDir: string,
  file: { sha256: string; content_type: string; size_bytes: string | number; filename: string },
  whenMissing: () => Promise<void>,
): Promise<fs.ReadStream> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(new BlobStore(blobDir).pathOf(file.sha256), 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await whenMissing();
    throw err;
  }
  koa.type = file.content_type;
  koa.length = Number(file.size_bytes);
  koa.set('Content-Disposition', contentDisposition(file.filename));
  koa.set('X-Content-SHA256', file.sha256);
  koa.set('X-Content-Type-Options', 'nosniff');
  return handle.createReadStream();
}

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

/**
 * The one rule for a resource a workflow owns (audit, schedule, decision, export): its rows are
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
  resource: 'audit' | 'schedule' | 'decision' | 'export',
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
