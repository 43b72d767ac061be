/**
 * RetentionWorkflow: one sweep, started by the `retention-sweep` Temporal Schedule: expired
 * attachments and exports, then old audits' bulk (RETENTION_AUDIT_DAYS), then expired
 * Idempotency-Keys. Each batches until a short batch (or `maxBatches`, so one run's history stays
 * small; the next run continues).
 */
import { patched, proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities } from '../activities/retention';

const { sweepExpiredAttachments, sweepExpiredExports, pruneOldAudits, purgeIdempotencyKeys } =
  proxyActivities<RetentionActivities>({
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '2 minutes',
    retry: { initialInterval: '5 seconds', maximumAttempts: 5 },
  });

/** Audits pruned per activity (each in its own transaction). */
const AUDIT_BATCH = 20;

export interface RetentionWorkflowInput {
  batchSize?: number;
  maxBatches?: number;
}

export async function RetentionWorkflow(
  input: RetentionWorkflowInput = {},
): Promise<{ removed: number; blobsRemoved: number; auditsPruned?: number; keysRemoved?: number }> {
  const batchSize = input.batchSize ?? 100;
  const maxBatches = input.maxBatches ?? 50;
  let removed = 0;
  let blobsRemoved = 0;
  for (let i = 0; i < maxBatches; i++) {
    const batch = await sweepExpiredAttachments({ batchSize });
    removed += batch.removed;
    blobsRemoved += batch.blobsRemoved;
    if (batch.removed < batchSize) break;
  }
  // Runs recorded before exports existed swept attachments only (docs/decisions.md, versioning).
  if (patched('export-retention'))
    for (let i = 0; i < maxBatches; i++) {
      const batch = await sweepExpiredExports({ batchSize });
      removed += batch.removed;
      blobsRemoved += batch.blobsRemoved;
      if (batch.removed < batchSize) break;
    }
  // Sweeps started before audit retention existed replay without these steps.
  if (!patched('audit-retention')) return { removed, blobsRemoved };
  let auditsPruned = 0;
  for (let i = 0; i < maxBatches; i++) {
    const batch = await pruneOldAudits({ batchSize: AUDIT_BATCH });
    auditsPruned += batch.pruned;
    if (batch.pruned < AUDIT_BATCH) break;
  }
  let keysRemoved = 0;
  for (let i = 0; i < maxBatches; i++) {
    const batch = await purgeIdempotencyKeys({ batchSize: 1000 });
    keysRemoved += batch.removed;
    if (batch.removed < 1000) break;
  }
  return { removed, blobsRemoved, auditsPruned, keysRemoved };
}
