/** Small helpers the resource modules share: paging input, timestamps, write records. */
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure, type UpdateDefinition } from '@temporalio/common';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import fs from 'node:fs';
import { BlobStore } from '../platform/blob-store';
import { recordWrite } from '../db/activity';
import type { PageRequest } from '../db/paginate';
import { decodeCursor } from '../domain/pagination';
import type { Logger } from '../platform/logger';
import { problems, type ApiError } from './errors';
import { auditTokenId, type Principal } from './registry/operation';
import type { AppServices } from './services';
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
  resource:
    | 'audit'
    | 'schedule'
    | 'decision'
    | 'assistant_run'
    | 'remediation'
    | 'workflow_action'
    | 'export',
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

/**
 * The `ifStartFails` of a resource no state can call "never started" (a decision, a remediation,
 * a workflow action): `discard` removes its row, and a `<resourceType>.discarded` write record
 * (reason workflow_start_failed) tells what happened after its creation record.
 */
export function discardUnstarted(
  db: Knex,
  principal: Principal,
  requestId: string,
  what: {
    resourceType: string;
    resourceId: string;
    discard: (trx: Knex) => Promise<boolean>;
    details: Record<string, unknown>;
  },
): Promise<void> {
  return db.transaction(async (trx) => {
    if (!(await what.discard(trx))) return;
    await recordPrincipalWrite(trx, principal, requestId, {
      action: `${what.resourceType}.discarded`,
      resourceType: what.resourceType,
      resourceId: what.resourceId,
      details: { ...what.details, reason: 'workflow_start_failed' },
    });
  });
}

/** How long a request waits for a workflow to apply an Update before it answers 503. */
const UPDATE_WAIT_MS = 30_000;

/**
 * Runs a workflow Update for a request (a move the workflow validates and persists), answering
 * synchronously. A refusal by the validator or the activity (an ApplicationFailure whose first
 * detail carries the refusal) becomes the problem `refused` gives; a workflow that has ended
 * becomes the problem `ended` gives (read from the stored state); anything else is 503.
 */
export async function runWorkflowUpdate<Ret, Arg>(
  services: AppServices,
  workflowId: string,
  update: UpdateDefinition<Ret, [Arg]>,
  arg: Arg,
  on: {
    refused: (refusal: { code: string }) => ApiError;
    ended: () => Promise<ApiError>;
    /** The resource id extension of the 503 (`{ remediation_id: ... }`). */
    resource: Record<string, string>;
  },
): Promise<Ret> {
  // An activity that keeps failing (database down) must not hold the request for its whole
  // retry budget: answer 503 after this long; the Update may still land.
  const deadline = Date.now() + UPDATE_WAIT_MS;
  try {
    const client = await services.temporal.client();
    return await client.withDeadline(deadline, () =>
      client.workflow.getHandle(workflowId).executeUpdate(update, { args: [arg] }),
    );
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
      const refusal = err.cause.details?.[0] as { code?: unknown } | undefined;
      if (refusal && typeof refusal.code === 'string')
        throw on.refused(refusal as { code: string });
    }
    if (err instanceof WorkflowNotFoundError) throw await on.ended();
    services.log.error({ err, workflow_id: workflowId }, 'workflow update failed');
    throw problems.unavailable(
      'workflow_engine',
      Date.now() >= deadline
        ? `The workflow did not apply the request within ${UPDATE_WAIT_MS / 1000} s; it may still land. Read the resource before retrying.`
        : 'The workflow did not answer; retry later.',
      on.resource,
    );
  }
}
