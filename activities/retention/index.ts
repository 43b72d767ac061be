/**
 * Retention: removes attachments and exports whose retention has passed, in batches, recording
 * an audit event and an activity item per removal, and releases their blobs when nothing else
 * holds them; prunes old audits' logs, agent runs, source manifests and evidence
 * (db/retention.ts says which audits), releasing the source blobs nothing else holds; removes
 * expired Idempotency-Keys.
 */
import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { recordWrite } from '../../db/activity';
import { expireDueAttachments, releaseBlobs } from '../../db/attachments';
import { expireDueExports } from '../../db/exports';
import type { BlobStore } from '../../platform/blob-store';
import type { Logger } from '../../platform/logger';
import type { Config } from '../../platform/config';
import { auditsToPrune, pruneAudit, purgeExpiredIdempotencyKeys } from '../../db/retention';
import { retentionRemoved } from '../../platform/metrics';

export interface RetentionActivityDeps {
  db: Knex;
  log: Logger;
  blobs: BlobStore;
  config: Pick<Config, 'retentionAuditDays' | 'retentionKeepSnapshots' | 'idempotencyKeyTtlHours'>;
}

/** Who the retention sweep's write records name as the actor. */
export const RETENTION_ACTOR = 'system:retention';

/** A row a sweep expires: its blob, and the audit it belongs to (named in its write record). */
interface SweptRow {
  id: string;
  workspace_id: string;
  audit_id: string;
  sha256: string | null;
}

/** What to sweep: which rows are due, and what else than audit and blob their records say. */
interface Sweep<Row extends SweptRow> {
  expire: (trx: Knex, limit: number) => Promise<Row[]>;
  resourceType: string;
  details: (row: Row) => Record<string, unknown>;
}

/**
 * One batch of a sweep: rows past their retention marked `expired` with a write record each (one
 * transaction), then their blobs released when nothing else holds them.
 */
async function sweep<Row extends SweptRow>(
  deps: RetentionActivityDeps,
  batchSize: number,
  what: Sweep<Row>,
): Promise<{ removed: number; blobsRemoved: number }> {
  const expired = await deps.db.transaction(async (trx) => {
    const rows = await what.expire(trx, batchSize);
    for (const row of rows)
      await recordWrite(trx, {
        workspaceId: row.workspace_id,
        actorId: null,
        actorLogin: RETENTION_ACTOR,
        tokenId: null,
        requestId: null,
        action: `${what.resourceType}.expired`,
        resourceType: what.resourceType,
        resourceId: row.id,
        details: { audit_id: row.audit_id, ...what.details(row), sha256: row.sha256 },
      });
    return rows;
  });
  Context.current().heartbeat({ expired: expired.length });
  const blobsRemoved = await releaseBlobs(
    deps.db,
    deps.blobs,
    expired.map((r) => r.sha256).filter((s): s is string => !!s),
  );
  if (expired.length)
    deps.log.info(
      { [`${what.resourceType}s`]: expired.length, blobs: blobsRemoved.length },
      `retention sweep removed expired ${what.resourceType}s`,
    );
  return { removed: expired.length, blobsRemoved: blobsRemoved.length };
}

export function createRetentionActivities(deps: RetentionActivityDeps) {
  const sweeper =
    <Row extends SweptRow>(what: Sweep<Row>) =>
    (input: { batchSize: number }): Promise<{ removed: number; blobsRemoved: number }> =>
      sweep(deps, input.batchSize, what);
  return {
    /** Expires up to `batchSize` due attachments; returns how many it removed. */
    sweepExpiredAttachments: sweeper({
      expire: expireDueAttachments,
      resourceType: 'attachment',
      details: (row) => ({
        filename: row.filename,
        retained_until: row.retained_until.toISOString(),
      }),
    }),

    /** Expires up to `batchSize` exports past their retention; returns how many it removed. */
    sweepExpiredExports: sweeper({
      expire: expireDueExports,
      resourceType: 'export',
      details: (row) => ({
        format: row.format,
        retained_until: row.retained_until?.toISOString() ?? null,
      }),
    }),

    /**
     * Prunes up to `batchSize` audits past RETENTION_AUDIT_DAYS that nothing needs whole; returns
     * how many. Each audit in its own transaction, with an audit event and an activity item.
     */
    async pruneOldAudits(input: { batchSize: number }): Promise<{ pruned: number }> {
      const { retentionAuditDays: days, retentionKeepSnapshots: keepSnapshots } = deps.config;
      if (days === 0) return { pruned: 0 };
      const candidates = await auditsToPrune(deps.db, { days, keepSnapshots }, input.batchSize);
      let pruned = 0;
      const totals = { logs: 0, agentRuns: 0, artifacts: 0, sourceFiles: 0, evidence: 0 };
      for (const audit of candidates) {
        const done = await deps.db.transaction(async (trx) => {
          const removed = await pruneAudit(trx, audit);
          if (!removed) return null;
          const counts = {
            logs: removed.logs,
            agent_runs: removed.agentRuns,
            artifacts: removed.artifacts,
            source_files: removed.sourceFiles,
            evidence: removed.evidence,
          };
          await recordWrite(trx, {
            workspaceId: audit.workspace_id,
            actorId: null,
            actorLogin: RETENTION_ACTOR,
            tokenId: null,
            requestId: null,
            action: 'audit.pruned',
            resourceType: 'audit',
            resourceId: audit.id,
            details: { retention_days: days, snapshot_id: audit.snapshot_id, removed: counts },
          });
          return removed;
        });
        Context.current().heartbeat({ pruned });
        if (!done) continue;
        pruned++;
        for (const key of Object.keys(totals) as Array<keyof typeof totals>) {
          totals[key] += done[key];
          retentionRemoved.inc({ kind: key }, done[key]);
        }
        await releaseBlobs(deps.db, deps.blobs, done.shas);
      }
      if (pruned) deps.log.info({ audits: pruned, ...totals }, 'retention sweep pruned old audits');
      return { pruned };
    },

    /** Removes up to `batchSize` completed Idempotency-Keys past IDEMPOTENCY_KEY_TTL_HOURS. */
    async purgeIdempotencyKeys(input: { batchSize: number }): Promise<{ removed: number }> {
      const removed = await purgeExpiredIdempotencyKeys(
        deps.db,
        deps.config.idempotencyKeyTtlHours,
        input.batchSize,
      );
      retentionRemoved.inc({ kind: 'idempotencyKeys' }, removed);
      return { removed };
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
