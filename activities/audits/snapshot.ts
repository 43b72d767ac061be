/**
 * Stage `reconcile`, its last step: the audit's architecture snapshot written from the reconcile
 * artifact, with its evidence and uncertainty cases, in one transaction.
 */
import crypto from 'node:crypto';
import type {
  Entity,
  IdentityConflict,
  Relationship,
  StoredEvidence,
} from '../../analysis/reconcile';
import { architectureStatus } from '../../analysis/uncertainty';
import type { VariantChoice } from '../../analysis/variants';
import { artifactsOfAudit } from '../../db/agents';
import {
  allocateSnapshotVersion,
  insertEvidence,
  insertSnapshot,
  latestSnapshot,
  snapshotOfAudit,
} from '../../db/architecture';
import { getAuditById, updateAudit } from '../../db/audits';
import { ingestedEvidenceOf } from '../../db/ingestion';
import { budgetCut } from '../../domain/audits/budgets';
import { architectureRepositoryOf } from '../../domain/audits/source-scope';
import { applyIngested, localIngestedId } from '../../domain/architecture/ingested';
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
        const existing = await snapshotOfAudit(db, auditId);
        if (existing) return { summary: `snapshot ${existing.version} already stored` };
        const produced = (await artifactsOfAudit(db, auditId, 'reconcile')).find(
          (a) => a.agent_key === 'reconcile',
        );
        if (!produced) fail('reconcile_missing', 'The reconcile stage produced no graph.', false);
        const graph = produced.artifact.artifact as unknown as {
          entities: Entity[];
          relationships: Relationship[];
          evidence: StoredEvidence[];
          gaps?: Array<{ path: string; reason: string; message: string }>;
          conflicts?: IdentityConflict[];
          variants?: VariantChoice[];
        };
        const uuidOf = (local: string) => {
          const h = crypto.createHash('sha256').update(`${auditId}:${local}`).digest('hex');
          return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
        };
        const ids = (list: string[]) => list.map(uuidOf);
        // An upload audit naming a repository does not join its architecture history.
        const architectureRepository = architectureRepositoryOf(audit);
        const previous = architectureRepository
          ? await latestSnapshot(db, audit.workspace_id, architectureRepository, auditId)
          : undefined;
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
        const ingested = applyIngested(graph, ingestedRecords);
        const ingestedAt = new Map(ingestedRecords.map((r) => [localIngestedId(r.id), r] as const));
        const allEvidence = [...graph.evidence, ...ingested.evidence];
        const firstSeen = new Map<string, string>();
        for (const item of [...(previous?.entities ?? []), ...(previous?.relationships ?? [])]) {
          firstSeen.set(item.canonical_key as string, item.first_observed_at as string);
        }
        const now = new Date().toISOString();
        const withIds = <
          T extends {
            canonical_key: string;
            evidence_ids: string[];
            contradictions: Array<{ field: string; claims: Array<{ evidence_ids: string[] }> }>;
          },
        >(
          x: T,
        ) => ({
          ...x,
          evidence_ids: ids(x.evidence_ids),
          contradictions: x.contradictions.map((c) => ({
            ...c,
            claims: c.claims.map((cl) => ({ ...cl, evidence_ids: ids(cl.evidence_ids) })),
          })),
          first_observed_at: firstSeen.get(x.canonical_key) ?? now,
          last_observed_at: now,
        });
        const requested = requestedTypes(audit);
        const sources = requested.filter((t) => graph.evidence.some((e) => e.source_type === t));
        const missing = requested.filter((t) => !sources.includes(t));
        const snapshotId = crypto.randomUUID();
        const sourceRef =
          audit.commit_sha ??
          (audit.source as { manifest_sha256?: string } | null)?.manifest_sha256 ??
          'unknown';
        // What the analyzers could not read becomes coverage gaps of the audit, with why.
        const analyzerGaps = (graph.gaps ?? []).map((g) => ({
          kind: 'analyzer',
          path: g.path,
          reason: g.reason,
          message: g.message,
        }));
        // Identity conflicts (deployables reconcile kept apart) are gaps too: the graph guessed.
        const conflicts = (graph.conflicts ?? []).map((c) => ({
          ...c,
          evidence_ids: ids(c.evidence_ids),
        }));
        const byLocalId = new Map(graph.evidence.map((e) => [e.id, e]));
        const reconcileGaps = (graph.conflicts ?? []).map((c) => ({
          kind: 'reconcile',
          path: byLocalId.get(c.evidence_ids[0] ?? '')?.location.path ?? '',
          reason: 'identity_conflict',
          message: c.detail,
        }));
        // A choice between deployment variants is said: a guess keeps the snapshot partial.
        for (const v of graph.variants ?? []) {
          reconcileGaps.push({
            kind: 'reconcile',
            path: v.primary,
            reason: v.guessed ? 'deployment_variant_guessed' : 'deployment_variant_chosen',
            message: v.detail,
          });
        }
        const status = architectureStatus({
          missingSources: missing,
          conflicts,
          gaps: analyzerGaps,
          guessedVariant: (graph.variants ?? []).some((v) => v.guessed),
          budgetCut: budgetCut(audit.coverage_gaps),
        });
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
            status,
            sources,
            missing_sources: missing,
            source_coverage: (sources.length / requested.length).toFixed(4),
            entity_count: ingested.entities.length,
            relationship_count: ingested.relationships.length,
            entities: ingested.entities.map(withIds),
            relationships: ingested.relationships.map((r) => ({
              ...withIds(r),
              supersedes_id: null,
              superseded_at: null,
            })),
            generated_at: now,
          });
          await insertEvidence(
            trx,
            allEvidence.map((e, position) => ({
              id: uuidOf(e.id),
              snapshot_id: snapshotId,
              workspace_id: audit.workspace_id,
              source_type: e.source_type,
              provider: e.provider,
              evidence_kind: e.evidence_kind,
              subject_key: e.subject_key,
              relationship_kind: e.relationship_kind,
              object_key: e.object_key,
              location: ingestedAt.has(e.id) ? ingestedAt.get(e.id)!.location : e.location,
              source_ref: ingestedAt.has(e.id)
                ? `ingestion:${ingestedAt.get(e.id)!.ingestion_id}`
                : sourceRef,
              summary: e.summary,
              content_sha256: e.content_sha256,
              attributes: e.attributes ?? {},
              observed_at: ingestedAt.get(e.id)?.observed_at ?? now,
              position,
            })),
          );
          cases = await recordUncertainty(trx, {
            auditId,
            workspaceId: audit.workspace_id,
            repositoryId: architectureRepository,
            snapshotId,
            observedAt: now,
            entities: ingested.entities.map(withIds),
            relationships: ingested.relationships.map(withIds),
            evidence: allEvidence.map((e) => ({
              ...e,
              id: uuidOf(e.id),
              location: ingestedAt.get(e.id)?.location === null ? null : e.location,
            })),
            missingSources: missing,
            conflicts,
            variants: (graph.variants ?? []).map((v) => ({
              ...v,
              evidence_ids: ids(v.evidence_ids),
            })),
            undeclaredCalls: ingested.uncorroborated.map((c) => ({
              ...c,
              evidence_ids: ids(c.evidence_ids),
            })),
          });
        });
        await log(auditId, {
          level: 'info',
          source: 'architecture',
          message: `architecture snapshot ${version}: ${graph.entities.length} entities, ${graph.relationships.length} relationships, ${graph.evidence.length} evidence${ingestedRecords.length ? ` (+${ingestedRecords.length} ingested: ${ingested.corroborated.relationships} relationships and ${ingested.corroborated.entities} entities corroborated, ${ingested.uncorroborated.length} undeclared calls)` : ''}; sources ${sources.join(', ') || 'none'}${missing.length ? `; missing ${missing.join(', ')}` : ''}; uncertainty cases: ${cases.opened} opened, ${cases.updated} updated`,
        });
        return { summary: `snapshot ${version} stored (${graph.evidence.length} evidence)` };
      }),
    );
  };
}
