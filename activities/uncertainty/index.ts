/**
 * The uncertainty part of the reconcile stage: after a snapshot is written, its contradictions,
 * weak facts, unresolved references and missing sources open or update uncertainty cases, in
 * the snapshot's transaction (a snapshot and its cases are written together or not at all).
 */
import type { Knex } from 'knex';
import {
  uncertaintyCandidates,
  type SnapshotConflict,
  type SnapshotEvidence,
  type SnapshotItem,
  type SnapshotVariant,
  type UndeclaredCall,
} from '../../analysis/uncertainty';
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
    entities: SnapshotItem[];
    relationships: SnapshotItem[];
    evidence: SnapshotEvidence[];
    missingSources: string[];
    conflicts?: SnapshotConflict[];
    undeclaredCalls?: UndeclaredCall[];
    variants?: SnapshotVariant[];
  },
): Promise<ObserveResult & { observed: number }> {
  const candidates = uncertaintyCandidates(input);
  const result = await observeCases(trx, { ...input, candidates });
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
