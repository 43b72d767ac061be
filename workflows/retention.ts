/**
 * RetentionWorkflow: one sweep of expired attachments and exports, started by the
 * `retention-sweep` Temporal Schedule. Batches until a short one (or `maxBatches`, so one run's
 * history stays small; the next run continues).
 */
import { patched, proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities } from '../activities/retention';

const { sweepExpiredAttachments, sweepExpiredExports } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', maximumAttempts: 5 },
});

export interface RetentionWorkflowInput {
  batchSize?: number;
  maxBatches?: number;
}

export async function RetentionWorkflow(
  input: RetentionWorkflowInput = {},
): Promise<{ removed: number; blobsRemoved: number }> {
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
  return { removed, blobsRemoved };
}
