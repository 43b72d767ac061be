/**
 * Retention of old audits' bulk. An audit finished more than `days` ago is pruned (its logs,
 * agent runs, source-file manifest and its snapshot's evidence removed; the audit, its stages,
 * its snapshot's entities and relationships, assessments and findings kept) unless something
 * still needs it whole:
 * - its snapshot is one of its repository's latest `keepSnapshots`;
 * - a decision (snapshot or verification snapshot) or an uncertainty case names its snapshot;
 * - a finding (first seen, last seen, resolved) or a comparison names the audit;
 * - a declared change set names its snapshot (baseline, result) or was reconciled with the set
 *   the audit observed (the observed set of every audit, which stores its changes whole, does
 *   not hold it by itself);
 * - a decision, an uncertainty case or a finding cites one of its snapshot's evidence rows.
 * Control exceptions name subject keys, which live in the snapshots' entities (always kept); a
 * change gate stores its whole evaluation, so the previous snapshot it compared with may lose its
 * evidence.
 * Completed Idempotency-Keys older than their time to live are removed too.
 */
import type { Knex } from 'knex';

const UUID = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

export interface PruneCandidate {
  id: string;
  workspace_id: string;
  snapshot_id: string | null;
}

/** Up to `limit` audits the retention rules allow pruning now, oldest first. */
export async function auditsToPrune(
  db: Knex,
  rules: { days: number; keepSnapshots: number },
  limit: number,
): Promise<PruneCandidate[]> {
  const result = await db.raw<{ rows: PruneCandidate[] }>(
    `WITH kept AS (
       SELECT id FROM (
         SELECT id, row_number() OVER (
           PARTITION BY workspace_id, repository_id ORDER BY generated_at DESC, id DESC) AS rn
         FROM architecture_snapshots) ranked
       WHERE rn <= :keep
     ), cited AS (
       SELECT jsonb_array_elements_text(evidence_ids) AS id FROM decisions
       UNION SELECT CAST(unnest(evidence_ids) AS text) FROM uncertainty_cases
       UNION SELECT jsonb_array_elements_text(evidence_ids) FROM findings
     ), held AS (
       SELECT DISTINCT e.snapshot_id FROM architecture_evidence e
         JOIN cited c ON c.id ~ :uuid AND e.id = CAST(c.id AS uuid)
     )
     SELECT a.id, a.workspace_id, s.id AS snapshot_id
       FROM audits a
       LEFT JOIN architecture_snapshots s ON s.audit_id = a.id
      WHERE a.retention_pruned_at IS NULL
        AND a.completed_at IS NOT NULL
        AND a.completed_at < now() - make_interval(days => :days)
        AND a.status IN ('completed', 'failed', 'cancelled')
        AND (s.id IS NULL OR (
              s.id NOT IN (SELECT id FROM kept)
          AND s.id NOT IN (SELECT snapshot_id FROM held)
          AND NOT EXISTS (SELECT 1 FROM decisions d
                           WHERE d.snapshot_id = s.id OR d.verification_snapshot_id = s.id)
          AND NOT EXISTS (SELECT 1 FROM uncertainty_cases u WHERE u.snapshot_id = s.id)))
        AND NOT EXISTS (SELECT 1 FROM findings f
                         WHERE f.first_seen_audit_id = a.id OR f.last_seen_audit_id = a.id
                            OR f.resolved_audit_id = a.id)
        AND NOT EXISTS (SELECT 1 FROM change_sets c
                         WHERE c.audit_id = a.id AND c.reconciled_change_set_id IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM change_sets c
                         WHERE c.audit_id IS NULL
                           AND (c.baseline_snapshot_id = s.id OR c.result_snapshot_id = s.id
                                OR c.reconciled_change_set_id IN (
                                  SELECT o.id FROM change_sets o WHERE o.audit_id = a.id)))
        AND NOT EXISTS (SELECT 1 FROM audit_comparisons c
                         WHERE c.baseline_audit_id = a.id OR c.candidate_audit_id = a.id)
      ORDER BY a.completed_at
      LIMIT :limit`,
    { keep: rules.keepSnapshots, days: rules.days, limit, uuid: UUID },
  );
  return result.rows;
}

export interface Pruned {
  logs: number;
  agentRuns: number;
  artifacts: number;
  sourceFiles: number;
  evidence: number;
  /** The source files' blobs, to release when nothing else holds them. */
  shas: string[];
}

/**
 * Removes the bulk of one audit (in the caller's transaction) and marks it pruned; null when it
 * was pruned already (a retried sweep).
 */
export async function pruneAudit(trx: Knex, audit: PruneCandidate): Promise<Pruned | null> {
  const marked = await trx('audits')
    .where({ id: audit.id })
    .whereNull('retention_pruned_at')
    .update({ retention_pruned_at: trx.fn.now() });
  if (marked === 0) return null;
  const logs = await trx('audit_logs').where({ audit_id: audit.id }).delete();
  const runs = await trx('agent_runs')
    .where({ audit_id: audit.id })
    .delete()
    .returning<{ artifact_id: string | null }[]>('artifact_id');
  const artifactIds = [...new Set(runs.map((r) => r.artifact_id).filter((x): x is string => !!x))];
  // An artifact reused by a later audit's run (the cache) stays.
  const artifacts = artifactIds.length
    ? await trx('agent_artifacts')
        .whereIn('id', artifactIds)
        .whereNotExists(
          trx('agent_runs')
            .select(trx.raw('1'))
            .whereRaw('agent_runs.artifact_id = agent_artifacts.id'),
        )
        .delete()
    : 0;
  const files = await trx('audit_source_files')
    .where({ audit_id: audit.id })
    .delete()
    .returning<{ sha256: string | null }[]>('sha256');
  const evidence = audit.snapshot_id
    ? await trx('architecture_evidence').where({ snapshot_id: audit.snapshot_id }).delete()
    : 0;
  return {
    logs,
    agentRuns: runs.length,
    artifacts,
    sourceFiles: files.length,
    evidence,
    shas: [...new Set(files.map((f) => f.sha256).filter((x): x is string => !!x))],
  };
}

/** Removes up to `limit` completed Idempotency-Keys older than `ttlHours`; how many. */
export async function purgeExpiredIdempotencyKeys(
  db: Knex,
  ttlHours: number,
  limit: number,
): Promise<number> {
  const result = await db.raw<{ rowCount: number }>(
    `DELETE FROM idempotency_keys WHERE ctid IN (
       SELECT ctid FROM idempotency_keys
        WHERE state = 'completed' AND created_at < now() - make_interval(hours => ?)
        LIMIT ?)`,
    [ttlHours, limit],
  );
  return result.rowCount;
}
