/**
 * Retention: removes attachments whose retention has passed, in batches, recording an audit
 * event and an activity item per removal, and releases their blobs when nothing else holds them.
 */
import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import type { BlobStore } from '../../platform/blob-store';
import { recordWrite } from '../../db/activity';
import {
  blobIsHeld,
  expireDueAttachments,
  expireUploadsOfBlob,
  lockBlob,
} from '../../db/attachments';

export interface RetentionActivityDeps {
  db: Knex;
  log: Logger;
  blobs: BlobStore;
}

/** Who the retention sweep's write records name as the actor. */
export const RETENTION_ACTOR = 'system:retention';

/**
 * Deletes each blob no longer held by anything (see blobIsHeld), marking uploads that only
 * served attachments `expired`. The blob lock makes a concurrent upload or attachment of the
 * same bytes either land before the check (and hold the blob) or after the removal (and store
 * the bytes again); the file is removed before the commit, while the lock is held.
 */
export async function releaseBlobs(
  db: Knex,
  blobs: BlobStore,
  shas: Iterable<string>,
): Promise<string[]> {
  const removed: string[] = [];
  for (const sha256 of new Set(shas)) {
    await db.transaction(async (trx) => {
      await lockBlob(trx, sha256);
      if (await blobIsHeld(trx, sha256)) return;
      await expireUploadsOfBlob(trx, sha256);
      await blobs.remove(sha256);
      removed.push(sha256);
    });
  }
  return removed;
}

export function createRetentionActivities(deps: RetentionActivityDeps) {
  return {
    /** Expires up to `batchSize` due attachments; returns how many it removed. */
    async sweepExpiredAttachments(input: {
      batchSize: number;
    }): Promise<{ removed: number; blobsRemoved: number }> {
      const expired = await deps.db.transaction(async (trx) => {
        const rows = await expireDueAttachments(trx, input.batchSize);
        for (const row of rows) {
          await recordWrite(trx, {
            workspaceId: row.workspace_id,
            actorId: null,
            actorLogin: RETENTION_ACTOR,
            tokenId: null,
            requestId: null,
            action: 'attachment.expired',
            resourceType: 'attachment',
            resourceId: row.id,
            details: {
              audit_id: row.audit_id,
              filename: row.filename,
              sha256: row.sha256,
              retained_until: row.retained_until.toISOString(),
            },
          });
        }
        return rows;
      });
      Context.current().heartbeat({ expired: expired.length });
      const blobsRemoved = await releaseBlobs(
        deps.db,
        deps.blobs,
        expired.map((r) => r.sha256),
      );
      if (expired.length)
        deps.log.info(
          { attachments: expired.length, blobs: blobsRemoved.length },
          'retention sweep removed expired attachments',
        );
      return { removed: expired.length, blobsRemoved: blobsRemoved.length };
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
