/**
 * The `changes` stage: the audit's snapshot against the previous completed snapshot of the same
 * repository and branch, gated by the workspace policy. Stores the gate once (audit_gates) and
 * its summary as the audit's `structural_gate_result`; a retried step keeps the first result.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { evidenceByIds, snapshotOfAudit } from '../../db/architecture';
import { appendLog, getAuditById, sourceFiles } from '../../db/audits';
import {
  auditGateOf,
  changeStore,
  previousSnapshotOnBranch,
  recordAuditGate,
} from '../../db/changes';
import { insertChangeSet } from '../../db/change-sets';
import { impactOf, normalizeObserved } from '../../domain/changes/change-sets';
import type { DependencyGraph } from '../../analysis/dependencies';
import { CODEOWNERS_PATHS } from '../../analysis/shared/paths';
import { parseCodeowners, type OwnerIndex } from '../../domain/changes/owners';
import {
  evaluateChanges,
  presentChangeItem,
  presentGate,
  type GateLocation,
  type StoredGate,
} from '../../domain/changes/service';
import type { BlobStore } from '../../platform/blob-store';

/** The owners index of the CODEOWNERS file the audit read, if it had one. */
export async function ownersOf(
  db: Knex,
  blobs: BlobStore,
  auditId: string,
): Promise<OwnerIndex | null> {
  const files = await sourceFiles(db, auditId);
  for (const candidate of CODEOWNERS_PATHS) {
    const file = files.find((f) => f.path === candidate && f.sha256 && f.stored);
    if (file?.sha256) return parseCodeowners((await blobs.get(file.sha256)).toString('utf8'));
  }
  return null;
}

export async function recordChangeGate(
  db: Knex,
  blobs: BlobStore,
  auditId: string,
): Promise<{ summary: string }> {
  const done = await auditGateOf(db, auditId);
  if (done) return { summary: `gate ${done.outcome} (already recorded)` };
  const audit = await getAuditById(db, auditId);
  const current = await snapshotOfAudit(db, auditId);
  if (!current) return { summary: 'no architecture snapshot: no gate' };
  const previous = (await previousSnapshotOnBranch(db, current, audit.branch_ref)) ?? null;
  const refs = [audit.branch_ref, audit.origin_ref].filter((r): r is string => !!r);
  const { gate, coverage_comparable } = await evaluateChanges(
    changeStore(db),
    current,
    previous,
    refs,
  );

  // Where each reviewed or blocked item's first evidence stands, for CI annotations and owners.
  const firstEvidence = new Map<string, string>();
  for (const item of gate.items)
    if (item.evidence_ids[0]) firstEvidence.set(item.key, item.evidence_ids[0]);
  for (const r of gate.reasons)
    if (r.key && !firstEvidence.has(r.key) && r.evidence_ids[0])
      firstEvidence.set(r.key, r.evidence_ids[0]);
  const rows = await evidenceByIds(db, [...new Set(firstEvidence.values())]);
  const byId = new Map(rows.map((e) => [e.id, e.location as GateLocation | null]));
  const locations: Record<string, GateLocation> = {};
  for (const [key, id] of firstEvidence) {
    const at = byId.get(id);
    if (at?.path)
      locations[key] = { path: at.path, start_line: at.start_line, end_line: at.end_line };
  }
  const owners = await ownersOf(db, blobs, auditId);
  const ownerHint = (key: string) => {
    const at = locations[key];
    const list = at && owners ? owners.ownersOf(at.path) : [];
    return list.length > 0 ? list.join(' ') : null;
  };

  const evaluatedAt = new Date().toISOString();
  const stored: StoredGate = {
    response: {
      audit_id: audit.id,
      repository_id: audit.repository_id,
      current_snapshot_id: current.id,
      previous_snapshot_id: previous?.id ?? null,
      outcome: gate.outcome,
      policy_enabled: gate.policy_enabled,
      policy_version: gate.policy_version,
      coverage_comparable,
      reasons: gate.reasons,
      changes: gate.items.map((i) => presentChangeItem(i, ownerHint(i.key))),
      counts: gate.counts,
      evaluated_at: evaluatedAt,
    },
    locations,
  };
  const summary = {
    outcome: gate.outcome,
    reasons: gate.reasons.map((r) => r.text),
    policy_enabled: gate.policy_enabled,
    policy_version: gate.policy_version,
    coverage_comparable,
    previous_snapshot_id: previous?.id ?? null,
    current_snapshot_id: current.id,
    counts: gate.counts,
    evaluated_at: evaluatedAt,
  };
  const row = await recordAuditGate(
    db,
    {
      audit_id: audit.id,
      workspace_id: audit.workspace_id,
      repository_id: audit.repository_id,
      current_snapshot_id: current.id,
      previous_snapshot_id: previous?.id ?? null,
      outcome: gate.outcome,
      policy_version: gate.policy_version,
      result: stored as unknown as Record<string, unknown>,
    },
    summary,
    async (trx) => {
      // What happened, as an observed change set (candidates are reconciled against it).
      if (!audit.repository_id || !previous) return;
      const normalized = normalizeObserved(gate.items);
      await insertChangeSet(trx, {
        id: crypto.randomUUID(),
        workspace_id: audit.workspace_id,
        repository_id: audit.repository_id,
        state: 'observed',
        change_key: `audit:${audit.id}`,
        source_ref: audit.commit_sha ?? 'unknown',
        trigger: 'audit',
        reason: `Observed by audit ${audit.id} against snapshot ${previous.id}`,
        actor_id: null,
        audit_id: audit.id,
        baseline_snapshot_id: previous.id,
        result_snapshot_id: current.id,
        reconciled_change_set_id: null,
        normalized_changes: normalized as unknown as Array<Record<string, unknown>>,
        candidate_payload: null,
        impact_result: impactOf(current as unknown as DependencyGraph, normalized),
        gate_result: presentGate(gate),
        accuracy: null,
        occurred_at: new Date(evaluatedAt),
      });
    },
  );
  await appendLog(db, auditId, {
    level: row.outcome === 'blocked' ? 'warning' : 'info',
    source: 'stage',
    message: `change gate: ${row.outcome} (${gate.items.length} changes against ${previous ? `snapshot ${previous.id}` : 'no earlier snapshot'})`,
    details: { outcome: row.outcome, counts: gate.counts, policy_version: gate.policy_version },
  });
  return { summary: `gate ${row.outcome}: ${gate.items.length} changes` };
}
