/**
 * The wait of a lifecycle whose last step a later run verifies (a remediation `done` until an
 * audit confirms its findings resolved, a decision `implemented` until a snapshot shows it).
 */
import { condition } from '@temporalio/workflow';

/** Runs (audits, snapshots) completed since the last check, counted by the workflow's signal. */
export interface Completions {
  pending: number;
}

/**
 * Waits for the next move of an item at `status()`, returning its status then. At `verifying`,
 * checks first (a run that completed between reaching it and now is not lost), then waits for
 * another completed run or a move; elsewhere waits for a move.
 */
export async function awaitMove<S extends string>(
  status: () => S,
  verifying: S,
  completions: Completions,
  verify: () => Promise<{ status: S }>,
): Promise<S> {
  const before = status();
  if (before !== verifying) {
    await condition(() => status() !== before);
    return status();
  }
  completions.pending = 0;
  const checked = await verify();
  if (checked.status !== verifying) return checked.status;
  await condition(() => completions.pending > 0 || status() !== verifying);
  return status();
}
