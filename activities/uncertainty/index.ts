/**
 * The uncertainty part of the reconcile stage: after a snapshot is written, its contradictions,
 * weak facts, unresolved references and missing sources open or update uncertainty cases, in
 * the snapshot's transaction (a snapshot and its cases are written together or not at all).
 * The candidates are found with the snapshot's rows, in the analysis pool
 * (analysis/snapshot-rows.ts, uncertaintyCandidates).
 */
import type { Knex } from 'knex';
import type { CaseCandidate } from '../../analysis/uncertainty';
import { recordWrite, writtenBy } from '../../db/activity';
import { observeCases, type ObserveResult } from '../../db/uncertainty';

export async function recordUncertainty(
  trx: Knex,
  input: {
    auditId: string;
    workspaceId: string;
    repositoryId: string | null;
    snapshotId: string;
    observedAt: string;
    candidates: CaseCandidate[];
  },
): Promise<ObserveResult & { observed: number }> {
  const { candidates } = input;
  const result = await observeCases(trx, input);
  if (candidates.length) {
    await recordWrite(trx, {
      workspaceId: input.workspaceId,
      ...writtenBy(null),
      action: 'uncertainty_cases.observed',
      resourceType: 'architecture_snapshot',
      resourceId: input.snapshotId,
      details: {
        audit_id: input.auditId,
        repository_id: input.repositoryId,
        observed: candidates.length,
        opened: result.opened,
        updated: result.updated,
      },
    });
  }
  return { ...result, observed: candidates.length };
}
