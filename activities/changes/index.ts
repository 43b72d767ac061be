/**
 * The `changes` stage: the audit's snapshot against the previous completed snapshot of the same
 * repository and branch, gated by the workspace policy. Stores the gate once (audit_gates) and
 * its summary as the audit's `structural_gate_result`; a retried step keeps the first result.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { evidenceByIds } from '../../db/architecture';
import { appendLog, getAuditById, sourceFiles } from '../../db/audits';
import {
  auditGateOf,
  changeStore,
  defaultBranchBaseline,
  previousSnapshotIdOnBranch,
  snapshotGraphText,
  recordAuditGate,
  type SnapshotGraphText,
} from '../../db/changes';
import { sourceBaseOf } from './baseline';
import { findRepository } from '../../db/repositories';
import { insertChangeSet, upsertObservedChangeSet } from '../../db/change-sets';
import { CODEOWNERS_PATHS } from '../../analysis/shared/paths';
import { parseCodeowners, type OwnerIndex } from '../../domain/changes/owners';
import { runInPool } from '../../analysis/pool';
import type { ChangeGateOutput } from '../../analysis/change-gate';
import {
  gateContextOf,
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

/**
 * What the audit's snapshot is compared with: for an audit of another branch than the default,
 * the default branch's snapshot at the merge-base (or its nearest, said in `note`); otherwise the
 * previous snapshot of the same branch.
 */
async function baselineOf(
  db: Knex,
  audit: Awaited<ReturnType<typeof getAuditById>>,
  current: SnapshotGraphText,
): Promise<{ previous: SnapshotGraphText | null; note: string | null }> {
  const base = sourceBaseOf(audit.source);
  const byId = async (id: string | undefined) =>
    id ? ((await snapshotGraphText(db, { workspace_id: current.workspace_id, id })) ?? null) : null;
  if (!base)
    return {
      previous: await byId(await previousSnapshotIdOnBranch(db, current, audit.branch_ref)),
      note: null,
    };
  const found = await defaultBranchBaseline(db, current, base.ref, base.merge_base_sha);
  // A pull request into another branch than the default is gated against that branch.
  const repo = audit.repository_id
    ? await findRepository(db, audit.workspace_id, audit.repository_id)
    : undefined;
  const which =
    !repo || repo.default_branch === base.ref ? 'the default branch' : 'the target branch';
  if (!found)
    return {
      previous: null,
      note: `baseline: no completed audit of ${which} ${base.ref} to compare with; audit ${base.ref}${base.merge_base_sha ? ` at the merge-base ${base.merge_base_sha}` : ''} first`,
    };
  const previous = await byId(found.id);
  const where = found.at_merge_base
    ? `at the merge-base ${base.merge_base_sha}`
    : base.merge_base_sha
      ? `at ${found.commit_sha ?? 'an unknown commit'}, its nearest audit: none audited the merge-base ${base.merge_base_sha}`
      : `at ${found.commit_sha ?? 'an unknown commit'}, its nearest audit: the branch shares no history with ${base.ref}`;
  return { previous, note: `baseline: ${which} ${base.ref} ${where}` };
}

export async function recordChangeGate(
  db: Knex,
  blobs: BlobStore,
  auditId: string,
): Promise<{ summary: string }> {
  const done = await auditGateOf(db, auditId);
  if (done) return { summary: `gate ${done.outcome} (already recorded)` };
  const audit = await getAuditById(db, auditId);
  // The graphs stay JSON text here: the analysis pool parses, diffs and gates them.
  const current = await snapshotGraphText(db, { audit_id: auditId });
  if (!current) return { summary: 'no architecture snapshot: no gate' };
  const { previous, note } = await baselineOf(db, audit, current);
  const refs = [audit.branch_ref, audit.origin_ref].filter((r): r is string => !!r);
  const context = await gateContextOf(changeStore(db), current, previous);
  const evaluated = await runInPool({
    kind: 'change-gate',
    input: { current, previous, context, changeRefs: refs },
  });
  const { gate, coverage_comparable, observed } = evaluated.output as ChangeGateOutput;
  if (note)
    gate.reasons.unshift({
      code: 'baseline',
      text: note,
      rule_id: null,
      key: null,
      evidence_ids: [],
    });

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
      // What happened, as an observed change set (candidates are reconciled against it). An
      // audit of another branch (a pull request) keeps one set per branch or origin ref,
      // brought up to date at each new head.
      if (!audit.repository_id || !previous || !observed) return;
      const { normalized, impact } = observed;
      const perBranch = note !== null && audit.branch_ref !== null;
      const set = {
        id: crypto.randomUUID(),
        workspace_id: audit.workspace_id,
        repository_id: audit.repository_id,
        state: 'observed' as const,
        change_key: perBranch
          ? (audit.origin_ref ?? `branch:${audit.branch_ref}`)
          : `audit:${audit.id}`,
        source_ref: audit.commit_sha ?? 'unknown',
        trigger: perBranch && audit.origin === 'webhook' ? 'webhook' : 'audit',
        reason: `Observed by audit ${audit.id} against snapshot ${previous.id}${note ? ` (${note})` : ''}`,
        actor_id: null,
        audit_id: audit.id,
        baseline_snapshot_id: previous.id,
        result_snapshot_id: current.id,
        reconciled_change_set_id: null,
        normalized_changes: normalized as unknown as Array<Record<string, unknown>>,
        candidate_payload: null,
        impact_result: impact,
        gate_result: presentGate(gate),
        accuracy: null,
        occurred_at: new Date(evaluatedAt),
      };
      if (perBranch) await upsertObservedChangeSet(trx, set, new Date(audit.created_at));
      else await insertChangeSet(trx, set);
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
