/**
 * Stage `reconcile`, its last step: the audit's architecture snapshot written from the reconcile
 * artifact, with its evidence and uncertainty cases, in one transaction. The rows are built in
 * the analysis pool (analysis/snapshot-rows.ts) from the artifact as JSON text: the worker's main
 * thread reads and writes text and never holds the graph (issue 24, fair sharing).
 */
import crypto from 'node:crypto';
import { runInPool } from '../../analysis/pool';
import { artifactTextsOfAudit } from '../../db/agents';
import {
  allocateSnapshotVersion,
  insertEvidenceJson,
  insertSnapshot,
  latestSnapshotItemsText,
  snapshotRefOfAudit,
} from '../../db/architecture';
import { getAuditById, updateAudit } from '../../db/audits';
import { ingestedEvidenceOf } from '../../db/ingestion';
import { budgetCut } from '../../domain/audits/budgets';
import { architectureRepositoryOf } from '../../domain/audits/source-scope';
import { recordUncertainty } from '../uncertainty';
import type { StageOutcome, StepMarks } from './types';
import { fail, requestedTypes, withHeartbeat, type AuditActivityDeps, type Steps } from './steps';

export function createPersistArchitecture(deps: AuditActivityDeps, steps: Steps) {
  const { db, config } = deps;
  const { log, step } = steps;
  return async function persistArchitecture(
    auditId: string,
    marks?: StepMarks,
  ): Promise<StageOutcome> {
    // Heartbeats while it writes: a 50,000-evidence snapshot takes longer than the heartbeat
    // timeout, and a silent step would be timed out and run again. (Only the long writes do:
    // elsewhere a step that stops making progress must still time out and be retried.)
    return step(auditId, marks, () =>
      withHeartbeat(async () => {
        const audit = await getAuditById(db, auditId);
        const existing = await snapshotRefOfAudit(db, auditId);
        if (existing) return { summary: `snapshot ${existing.version} already stored` };
        const produced = (await artifactTextsOfAudit(db, auditId, 'reconcile')).find(
          (a) => a.agent_key === 'reconcile',
        );
        if (!produced) fail('reconcile_missing', 'The reconcile stage produced no graph.', false);
        // An upload audit naming a repository does not join its architecture history.
        const architectureRepository = architectureRepositoryOf(audit);
        const previousItems = architectureRepository
          ? await latestSnapshotItemsText(db, audit.workspace_id, architectureRepository, auditId)
          : null;
        // Evidence from outside the repository (ingestEvidence) corroborates or contradicts what
        // the files declare (domain/architecture/ingested.ts); coverage stays the files' own.
        const ingestedUntil = new Date();
        const ingestedRecords = architectureRepository
          ? await ingestedEvidenceOf(
              db,
              architectureRepository,
              new Date(ingestedUntil.getTime() - config.ingestedEvidenceWindowDays * 86_400_000),
              ingestedUntil,
            )
          : [];
        const now = new Date().toISOString();
        const requested = requestedTypes(audit);
        const snapshotId = crypto.randomUUID();
        const sourceRef =
          audit.commit_sha ??
          (audit.source as { manifest_sha256?: string } | null)?.manifest_sha256 ??
          'unknown';
        const built = await runInPool({
          kind: 'snapshot-rows',
          input: {
            auditId,
            snapshotId,
            workspaceId: audit.workspace_id,
            graphJson: produced.json,
            previousItems,
            ingested: ingestedRecords,
            requested,
            budgetCut: budgetCut(audit.coverage_gaps),
            sourceRef,
            now,
          },
        });
        if (built.kind !== 'snapshot-rows')
          throw new Error('the analysis pool answered another task');
        const rows = built.output;
        const { sources, missing, analyzerGaps, reconcileGaps, counts } = rows;
        let cases = { observed: 0, opened: 0, updated: 0 };
        let version = '';
        await db.transaction(async (trx) => {
          version = await allocateSnapshotVersion(trx, architectureRepository);
          if (analyzerGaps.length || reconcileGaps.length) {
            const current = await getAuditById(trx, auditId);
            await updateAudit(trx, auditId, {
              coverage_gaps: [
                ...current.coverage_gaps.filter(
                  (g) => g.kind !== 'analyzer' && g.kind !== 'reconcile',
                ),
                ...analyzerGaps,
                ...reconcileGaps,
              ],
            });
          }
          await insertSnapshot(trx, {
            id: snapshotId,
            audit_id: auditId,
            workspace_id: audit.workspace_id,
            repository_id: architectureRepository,
            version,
            status: rows.status,
            sources,
            missing_sources: missing,
            source_coverage: (sources.length / requested.length).toFixed(4),
            entity_count: rows.entities.count,
            relationship_count: rows.relationships.count,
            entities: rows.entities.json,
            relationships: rows.relationships.json,
            generated_at: now,
          });
          await insertEvidenceJson(trx, rows.evidenceJson);
          cases = await recordUncertainty(trx, {
            auditId,
            workspaceId: audit.workspace_id,
            repositoryId: architectureRepository,
            snapshotId,
            observedAt: now,
            candidates: rows.candidates,
          });
        });
        await log(auditId, {
          level: 'info',
          source: 'architecture',
          message: `architecture snapshot ${version}: ${counts.entities} entities, ${counts.relationships} relationships, ${counts.evidence} evidence${counts.ingested ? ` (+${counts.ingested} ingested: ${counts.corroboratedRelationships} relationships and ${counts.corroboratedEntities} entities corroborated, ${counts.uncorroborated} undeclared calls)` : ''}; sources ${sources.join(', ') || 'none'}${missing.length ? `; missing ${missing.join(', ')}` : ''}; uncertainty cases: ${cases.opened} opened, ${cases.updated} updated`,
        });
        return { summary: `snapshot ${version} stored (${counts.evidence} evidence)` };
      }),
    );
  };
}
