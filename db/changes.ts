/** Change gates: gate policies per workspace, the gate of each audit, and what the gate reads. */
import type { Knex } from 'knex';
import type {
  GateAssessment,
  GateDecision,
  GatePolicy,
  GateRule,
  GateUncertainty,
} from '../domain/changes/gate';
import { DEFAULT_GATE_POLICY } from '../domain/changes/gate';
import type { ChangeStore } from '../domain/changes/service';
import type { SnapshotRow } from './architecture';
import { DECISION_SCOPE_COLUMNS } from './decisions';

export interface StoredGatePolicy {
  policy: GatePolicy;
  /** 0 while the workspace runs on the default policy. */
  version: number;
  updated_by: string | null;
  updated_at: Date | null;
}

interface GatePolicyRow {
  workspace_id: string;
  version: number;
  enabled: boolean;
  confidence_floor: string;
  rules: GateRule[];
  updated_by: string | null;
  updated_at: Date;
}

const fromRow = (row: GatePolicyRow): StoredGatePolicy => ({
  policy: {
    enabled: row.enabled,
    confidence_floor: Number(row.confidence_floor),
    rules: row.rules,
  },
  version: row.version,
  updated_by: row.updated_by,
  updated_at: row.updated_at,
});

export async function gatePolicyOf(db: Knex, workspaceId: string): Promise<StoredGatePolicy> {
  const row = await db<GatePolicyRow>('gate_policies').where({ workspace_id: workspaceId }).first();
  if (!row) return { policy: DEFAULT_GATE_POLICY, version: 0, updated_by: null, updated_at: null };
  return fromRow(row);
}

/**
 * Replaces a workspace's policy when its version is still `expectedVersion` (0: the default,
 * never stored); the version goes up by one. Undefined when another write came first.
 */
export async function replaceGatePolicy(
  db: Knex,
  workspaceId: string,
  expectedVersion: number,
  policy: GatePolicy,
  memberId: string,
): Promise<StoredGatePolicy | undefined> {
  const values = {
    enabled: policy.enabled,
    confidence_floor: String(policy.confidence_floor),
    rules: JSON.stringify(policy.rules),
    updated_by: memberId,
  };
  if (expectedVersion === 0) {
    const [row] = await db('gate_policies')
      .insert({ workspace_id: workspaceId, version: 1, ...values })
      .onConflict('workspace_id')
      .ignore()
      .returning('*');
    return row ? fromRow(row as GatePolicyRow) : undefined;
  }
  const [row] = await db('gate_policies')
    .where({ workspace_id: workspaceId, version: expectedVersion })
    .update({
      ...values,
      version: expectedVersion + 1,
      updated_at: db.raw("date_trunc('milliseconds', now())"),
    })
    .returning('*');
  return row ? fromRow(row as GatePolicyRow) : undefined;
}

/** What locates a snapshot among its repository's, without its graph. */
export interface SnapshotPlace {
  id: string;
  workspace_id: string;
  repository_id: string | null;
  generated_at: Date;
}

/**
 * The id of the snapshot a gate compares with: the newest one of the same repository and branch
 * whose audit completed, generated before `current`.
 */
export async function previousSnapshotIdOnBranch(
  db: Knex,
  current: SnapshotPlace,
  branchRef: string | null,
): Promise<string | undefined> {
  if (!current.repository_id) return undefined;
  const q = db('architecture_snapshots as s')
    .join('audits as a', 'a.id', 's.audit_id')
    .where({
      's.workspace_id': current.workspace_id,
      's.repository_id': current.repository_id,
      'a.status': 'completed',
    })
    .whereNot('s.id', current.id)
    .where('s.generated_at', '<=', current.generated_at)
    .orderBy([
      { column: 's.generated_at', order: 'desc' },
      { column: 's.id', order: 'desc' },
    ])
    .first('s.id');
  if (branchRef === null) q.whereNull('a.branch_ref');
  else q.where('a.branch_ref', branchRef);
  return (await q)?.id;
}

/**
 * The baseline of an audit of another branch: the default branch's snapshot at the merge-base
 * (the newest of its completed audits of that commit), else the default branch's newest completed
 * snapshot generated before `current` (`at_merge_base` false: the gate says so).
 */
export async function defaultBranchBaseline(
  db: Knex,
  current: SnapshotPlace,
  defaultBranch: string,
  mergeBaseSha: string | null,
): Promise<{ id: string; commit_sha: string | null; at_merge_base: boolean } | undefined> {
  if (!current.repository_id) return undefined;
  const base = () =>
    db('architecture_snapshots as s')
      .join('audits as a', 'a.id', 's.audit_id')
      .where({
        's.workspace_id': current.workspace_id,
        's.repository_id': current.repository_id,
        'a.status': 'completed',
      })
      .whereIn('a.branch_ref', [defaultBranch, `refs/heads/${defaultBranch}`])
      .whereNot('s.id', current.id)
      .orderBy([
        { column: 's.generated_at', order: 'desc' },
        { column: 's.id', order: 'desc' },
      ])
      .first('s.id', 'a.commit_sha');
  if (mergeBaseSha) {
    const exact = await base().where('a.commit_sha', mergeBaseSha);
    if (exact) return { ...exact, at_merge_base: true };
  }
  const nearest = await base().where('s.generated_at', '<=', current.generated_at);
  return nearest ? { ...nearest, at_merge_base: false } : undefined;
}

/** The previous snapshot on the branch (see previousSnapshotIdOnBranch), whole. */
export async function previousSnapshotOnBranch(
  db: Knex,
  current: SnapshotPlace,
  branchRef: string | null,
): Promise<(SnapshotRow & { commit_sha: string | null }) | undefined> {
  const id = await previousSnapshotIdOnBranch(db, current, branchRef);
  return id ? snapshotWithAudit(db, current.workspace_id, id) : undefined;
}

/** A snapshot's place and its audit's branch, without its graph. */
export async function snapshotPlace(
  db: Knex,
  workspaceId: string,
  snapshotId: string,
): Promise<(SnapshotPlace & { branch_ref: string | null }) | undefined> {
  return db('architecture_snapshots as s')
    .join('audits as a', 'a.id', 's.audit_id')
    .select('s.id', 's.workspace_id', 's.repository_id', 's.generated_at', 'a.branch_ref')
    .where({ 's.workspace_id': workspaceId, 's.id': snapshotId })
    .first();
}

/**
 * A snapshot as the gate reads it, its graph (entities, relationships) as JSON text: the
 * `changes` stage passes it to the analysis pool, which parses it, so that a large snapshot does
 * not hold the worker's main thread (issue 24, fair sharing).
 */
export interface SnapshotGraphText extends SnapshotPlace {
  audit_id: string;
  sources: string[];
  entities: string;
  relationships: string;
}

/** The snapshot matching `where`, its graph as JSON text. */
export async function snapshotGraphText(
  db: Knex,
  where: { audit_id: string } | { workspace_id: string; id: string },
): Promise<SnapshotGraphText | undefined> {
  return db('architecture_snapshots')
    .where(where)
    .first(
      'id',
      'audit_id',
      'workspace_id',
      'repository_id',
      'sources',
      'generated_at',
      db.raw('entities::text AS entities'),
      db.raw('relationships::text AS relationships'),
    );
}

/** An audit's snapshot's place, without its graph (tens of megabytes for a large system). */
export async function snapshotPlaceOfAudit(
  db: Knex,
  auditId: string,
): Promise<SnapshotPlace | undefined> {
  return db('architecture_snapshots')
    .where({ audit_id: auditId })
    .first('id', 'workspace_id', 'repository_id', 'generated_at');
}

/** A snapshot of the workspace by id, with the commit its audit read. */
export async function snapshotWithAudit(
  db: Knex,
  workspaceId: string,
  snapshotId: string,
): Promise<(SnapshotRow & { commit_sha: string | null; branch_ref: string | null }) | undefined> {
  return db('architecture_snapshots as s')
    .join('audits as a', 'a.id', 's.audit_id')
    .select('s.*', 'a.commit_sha', 'a.branch_ref')
    .where({ 's.workspace_id': workspaceId, 's.id': snapshotId })
    .first();
}

export async function assessmentsForGate(db: Knex, auditId: string): Promise<GateAssessment[]> {
  return db('control_assessments')
    .where({ audit_id: auditId })
    .select('control_key', 'title', 'severity', 'status', 'evidence_ids', 'exception_id')
    .orderBy('control_key');
}

/** The repository's approved and implemented decisions (they take part in every gate). */
export async function decisionsForGate(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Promise<GateDecision[]> {
  const rows = await db('decisions')
    .where({ workspace_id: workspaceId, repository_id: repositoryId })
    .whereIn('status', ['approved', 'implemented'])
    .orderBy('number')
    .select(...DECISION_SCOPE_COLUMNS, 'candidate_change_id', 'success_criteria');
  return rows as GateDecision[];
}

export async function uncertaintiesForGate(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Promise<GateUncertainty[]> {
  return db('uncertainty_cases')
    .where({ workspace_id: workspaceId, repository_id: repositoryId, blocking: true })
    .whereIn('state', ['open', 'investigating'])
    .select('id', 'subject_key', 'blocking', 'state')
    .orderBy('id');
}

export interface AuditGateRow {
  audit_id: string;
  workspace_id: string;
  repository_id: string | null;
  current_snapshot_id: string;
  previous_snapshot_id: string | null;
  outcome: string;
  policy_version: number;
  result: Record<string, unknown>;
  created_at: Date;
}

/**
 * Stores an audit's gate and its summary on the audit, once, with what `alongside` writes in the
 * same transaction: a retried step finds the first result and keeps it.
 */
export async function recordAuditGate(
  db: Knex,
  row: Omit<AuditGateRow, 'created_at'>,
  summary: Record<string, unknown>,
  alongside?: (trx: Knex.Transaction) => Promise<void>,
): Promise<AuditGateRow> {
  return db.transaction(async (trx) => {
    const [inserted] = await trx('audit_gates')
      .insert({ ...row, result: JSON.stringify(row.result) })
      .onConflict('audit_id')
      .ignore()
      .returning('*');
    if (inserted) {
      await trx('audits')
        .where({ id: row.audit_id })
        .update({ structural_gate_result: JSON.stringify(summary) });
      await alongside?.(trx);
    }
    return (inserted as AuditGateRow | undefined) ?? (await auditGateOf(trx, row.audit_id))!;
  });
}

export async function auditGateOf(db: Knex, auditId: string): Promise<AuditGateRow | undefined> {
  return db<AuditGateRow>('audit_gates').where({ audit_id: auditId }).first();
}

/** The stores the change service reads, over one connection or transaction. */
export function changeStore(db: Knex): ChangeStore {
  return {
    policy: (ws) => gatePolicyOf(db, ws),
    assessments: (auditId) => assessmentsForGate(db, auditId),
    decisions: (ws, repo) => decisionsForGate(db, ws, repo),
    uncertainties: (ws, repo) => uncertaintiesForGate(db, ws, repo),
  };
}
