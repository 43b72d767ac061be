/** Architecture decisions, their approvals and status history, and the approval policy. */
import type { Knex } from 'knex';
import { approvalsBySubject, insertApprovalRow, type ApprovalRow as Approval } from './approvals';
import { keyset, type Keyset } from './paginate';
import { encodeJson, findInWorkspace, getById, updateVersioned } from './records';
import type { DecisionStatus, EvaluatedCriterion, Verification } from '../domain/decisions/rules';

export interface DecisionRow {
  id: string;
  workspace_id: string;
  number: number;
  repository_id: string | null;
  snapshot_id: string;
  candidate_change_id: string | null;
  title: string;
  question: string;
  context: string;
  status: DecisionStatus;
  owner_id: string;
  created_by: string;
  options: Array<{
    id: string;
    title: string;
    description: string;
    benefits?: string[];
    tradeoffs?: string[];
    evidence_ids?: string[];
  }>;
  selected_option_id: string | null;
  evidence_ids: string[];
  uncertainties: Array<{ subject_key: string; description: string; blocking: boolean }>;
  affected_entity_keys: string[];
  affected_relationship_keys: string[];
  success_criteria: EvaluatedCriterion[];
  latest_rationale: string | null;
  approved_by: string | null;
  approved_at: Date | null;
  implemented_at: Date | null;
  verified_at: Date | null;
  superseded_at: Date | null;
  verification_snapshot_id: string | null;
  verification_result: Verification | null;
  supersedes_id: string | null;
  review_round: number;
  review_started_at: Date | null;
  version: number;
  last_request_key: string | null;
  workflow_id: string;
  created_at: Date;
  updated_at: Date;
}

export interface ApprovalRow extends Approval {
  decision_id: string;
  review_round: number;
}

export interface TransitionRow {
  id: string;
  decision_id: string;
  from_status: string | null;
  to_status: string;
  actor_id: string | null;
  actor_login: string | null;
  rationale: string | null;
  created_at: Date;
}

export interface DecisionPolicy {
  quorum: number;
  reminder_interval_seconds: number;
  /** null while the workspace uses the defaults (no row). */
  version: number | null;
}

export const DEFAULT_POLICY: DecisionPolicy = {
  quorum: 1,
  reminder_interval_seconds: 72 * 3600,
  version: null,
};

/** The columns that say which decision it is and what it affects (the gate and the assistant read them). */
export const DECISION_SCOPE_COLUMNS = [
  'id',
  'number',
  'title',
  'status',
  'affected_entity_keys',
  'affected_relationship_keys',
] as const;

const JSON_COLUMNS = [
  'options',
  'evidence_ids',
  'uncertainties',
  'affected_entity_keys',
  'affected_relationship_keys',
  'success_criteria',
  'verification_result',
] as const;

/** Serializes the jsonb columns of a (partial) row for Knex. */
const encode = (values: Partial<DecisionRow>) => encodeJson(values, JSON_COLUMNS);

export type NewDecision = Omit<
  DecisionRow,
  | 'number'
  | 'status'
  | 'version'
  | 'created_at'
  | 'updated_at'
  | 'review_round'
  | 'review_started_at'
  | 'selected_option_id'
  | 'latest_rationale'
  | 'approved_by'
  | 'approved_at'
  | 'implemented_at'
  | 'verified_at'
  | 'superseded_at'
  | 'verification_snapshot_id'
  | 'verification_result'
  | 'last_request_key'
>;

export async function insertDecision(db: Knex, input: NewDecision): Promise<DecisionRow> {
  // Numbers are per workspace; the row lock on the workspace serializes concurrent proposals.
  await db('workspaces').where({ id: input.workspace_id }).forUpdate().first('id');
  const last = await db('decisions')
    .where({ workspace_id: input.workspace_id })
    .max<{ max: number | null }>('number as max')
    .first();
  const [row] = await db('decisions')
    .insert(encode({ ...input, number: (last?.max ?? 0) + 1, status: 'proposed', version: 1 }))
    .returning('*');
  return row as DecisionRow;
}

export const findDecision = (db: Knex, workspaceId: string, id: string) =>
  findInWorkspace<DecisionRow>(db, 'decisions', workspaceId, id);

export const getDecisionById = (db: Knex, id: string, lock = false) =>
  getById<DecisionRow>(db, 'decisions', id, lock);

export const updateDecision = (db: Knex, id: string, values: Partial<DecisionRow>) =>
  updateVersioned<DecisionRow>(db, 'decisions', id, encode(values));

export function decisionsQuery(
  db: Knex,
  workspaceId: string,
  filters: { status?: string; repositoryId?: string },
): Keyset<DecisionRow> {
  const q = db('decisions').select('decisions.*').where('decisions.workspace_id', workspaceId);
  if (filters.status) q.where('decisions.status', filters.status);
  if (filters.repositoryId) q.where('decisions.repository_id', filters.repositoryId);
  return keyset(q, 'decisions');
}

export const approvalsOf = (db: Knex, decisionIds: readonly string[]) =>
  approvalsBySubject<ApprovalRow>(db, 'decision_approvals', 'decision_id', decisionIds);

export const insertApproval = (db: Knex, input: Omit<ApprovalRow, 'id' | 'created_at'>) =>
  insertApprovalRow<ApprovalRow>(db, 'decision_approvals', input);

/** Members who voted in a review round of a decision (only those with `outcome` when given). */
export async function votersOfRound(
  db: Knex,
  decisionId: string,
  reviewRound: number,
  outcome?: ApprovalRow['outcome'],
): Promise<string[]> {
  const rows = await db<ApprovalRow>('decision_approvals')
    .where({ decision_id: decisionId, review_round: reviewRound, ...(outcome ? { outcome } : {}) })
    .select('actor_id');
  return rows.map((r) => r.actor_id);
}

export async function transitionsOf(db: Knex, decisionId: string): Promise<TransitionRow[]> {
  return db<TransitionRow>('decision_transitions')
    .where({ decision_id: decisionId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
}

export async function insertTransition(
  db: Knex,
  input: Omit<TransitionRow, 'id' | 'created_at'>,
): Promise<void> {
  await db('decision_transitions').insert({ id: crypto.randomUUID(), ...input });
}

const policyFromRow = (row: Record<string, unknown>): DecisionPolicy => ({
  quorum: row.quorum as number,
  reminder_interval_seconds: row.reminder_interval_seconds as number,
  version: row.version as number,
});

export async function policyOf(db: Knex, workspaceId: string): Promise<DecisionPolicy> {
  const row = await db('decision_policies').where({ workspace_id: workspaceId }).first();
  if (!row) return DEFAULT_POLICY;
  return policyFromRow(row);
}

/** Sets a workspace's approval policy; each change bumps its version (recorded on approvals). */
export async function setPolicy(
  db: Knex,
  workspaceId: string,
  values: { quorum?: number; reminder_interval_seconds?: number },
): Promise<DecisionPolicy> {
  const current = await policyOf(db, workspaceId);
  const next = {
    quorum: values.quorum ?? current.quorum,
    reminder_interval_seconds:
      values.reminder_interval_seconds ?? current.reminder_interval_seconds,
  };
  const [row] = await db('decision_policies')
    .insert({ workspace_id: workspaceId, ...next, version: 1 })
    .onConflict('workspace_id')
    .merge({
      ...next,
      version: db.raw('decision_policies.version + 1'),
      updated_at: db.raw("date_trunc('milliseconds', now())"),
    })
    .returning('*');
  return policyFromRow(row);
}

/** Workflow ids of a repository's decisions waiting for verification. */
export async function implementedDecisionWorkflows(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Promise<string[]> {
  const rows = await db('decisions')
    .where({ workspace_id: workspaceId, repository_id: repositoryId, status: 'implemented' })
    .select('workflow_id');
  return rows.map((r: { workflow_id: string }) => r.workflow_id);
}

/**
 * Removes a just-proposed decision whose workflow could not be started, and its status history.
 * False when the decision was moved since (it is no longer proposed at version 1): then it stays.
 */
export async function discardUnstartedDecision(db: Knex, id: string): Promise<boolean> {
  const deleted = await db('decisions').where({ id, status: 'proposed', version: 1 }).delete();
  return deleted > 0;
}
