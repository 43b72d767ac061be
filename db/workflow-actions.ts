/** Workflow actions, and the effects only they have (purging a repository's history). */
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';
import { findInWorkspace, getById } from './records';
import type { AttachmentRow } from './attachments';
import type {
  WorkflowActionKind,
  WorkflowActionStatus,
  WorkflowActionTarget,
} from '../domain/workflow-actions/rules';

export interface WorkflowActionRow {
  id: string;
  workspace_id: string;
  kind: WorkflowActionKind;
  target: WorkflowActionTarget;
  reason: string;
  status: WorkflowActionStatus;
  requested_by: string;
  decided_by: string | null;
  decided_by_role: string | null;
  /** The scope and workspace policy version the decision was made under (the approval model). */
  decided_by_scope: string | null;
  decided_policy_version: number | null;
  decided_at: Date | null;
  decision_rationale: string | null;
  expires_at: Date;
  executed_at: Date | null;
  outcome: Record<string, unknown> | null;
  error_code: string | null;
  last_request_key: string | null;
  workflow_id: string;
  created_at: Date;
  updated_at: Date;
}

const NOW = "date_trunc('milliseconds', now())";

export async function insertWorkflowAction(
  db: Knex,
  input: Pick<
    WorkflowActionRow,
    'id' | 'workspace_id' | 'kind' | 'target' | 'reason' | 'requested_by' | 'workflow_id'
  > & { ttlSeconds: number },
): Promise<WorkflowActionRow> {
  const { ttlSeconds, ...values } = input;
  const [row] = await db('workflow_actions')
    .insert({
      ...values,
      target: JSON.stringify(values.target),
      status: 'pending',
      expires_at: db.raw(`${NOW} + make_interval(secs => ?)`, [ttlSeconds]),
    })
    .returning('*');
  return row as WorkflowActionRow;
}

export const findWorkflowAction = (db: Knex, workspaceId: string, id: string) =>
  findInWorkspace<WorkflowActionRow>(db, 'workflow_actions', workspaceId, id);

export const getWorkflowActionById = (db: Knex, id: string, lock = false) =>
  getById<WorkflowActionRow>(db, 'workflow_actions', id, lock);

export async function updateWorkflowAction(
  db: Knex,
  id: string,
  values: Partial<WorkflowActionRow>,
): Promise<WorkflowActionRow> {
  const out: Record<string, unknown> = { ...values };
  if ('outcome' in values)
    out.outcome = values.outcome === null ? null : JSON.stringify(values.outcome);
  const [row] = await db('workflow_actions')
    .where({ id })
    .update({ ...out, updated_at: db.raw(NOW) })
    .returning('*');
  return row as WorkflowActionRow;
}

/** Removes an action whose workflow never started (nothing else refers to it yet). */
export async function deleteUnstartedWorkflowAction(db: Knex, id: string): Promise<boolean> {
  return (await db('workflow_actions').where({ id, status: 'pending' }).delete()) > 0;
}

export function workflowActionsQuery(
  db: Knex,
  workspaceId: string,
  filters: { status?: string; kind?: string },
): Keyset<WorkflowActionRow> {
  const q = db('workflow_actions')
    .select('workflow_actions.*')
    .where('workflow_actions.workspace_id', workspaceId);
  if (filters.status) q.where('workflow_actions.status', filters.status);
  if (filters.kind) q.where('workflow_actions.kind', filters.kind);
  return keyset(q, 'workflow_actions');
}

/** Marks every available attachment of an audit deleted now; returns them. */
export async function purgeAuditAttachments(
  db: Knex,
  workspaceId: string,
  auditId: string,
): Promise<AttachmentRow[]> {
  return db<AttachmentRow>('audit_attachments')
    .where({ workspace_id: workspaceId, audit_id: auditId, status: 'available' })
    .update({ status: 'deleted', removed_at: db.raw(NOW) as never })
    .returning('*');
}

/** Revokes every live token of a member; returns how many. */
export async function revokeMemberTokens(
  db: Knex,
  workspaceId: string,
  memberId: string,
): Promise<string[]> {
  const rows = await db('api_tokens')
    .where({ workspace_id: workspaceId, member_id: memberId })
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now() })
    .returning<Array<{ id: string }>>('id');
  return rows.map((r) => r.id);
}

export interface PurgedHistory {
  audits_deleted: number;
  audits_kept: number;
  findings_deleted: number;
  remediations_deleted: number;
  uncertainty_cases_deleted: number;
  /** Blobs the deleted audits read: released once nothing else holds them. */
  blob_shas: string[];
}

/**
 * Deletes a repository's history: its findings, remediations and uncertainty cases, and its
 * finished audits (with everything that hangs off them: stages, logs, agent runs, snapshots,
 * evidence, assessments, attachments). Kept: audits still queued or running (their workflow owns
 * them) and audits whose snapshot a decision rests on (the decision cites it).
 */
export async function purgeRepositoryHistory(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Promise<PurgedHistory> {
  const scope = { workspace_id: workspaceId, repository_id: repositoryId };
  const findings = await db('findings').where(scope).delete();
  const remediations = await db('remediations').where(scope).delete();
  const cases = await db('uncertainty_cases').where(scope).delete();
  const cited = db('decisions')
    .join('architecture_snapshots as s', function () {
      this.on('s.id', 'decisions.snapshot_id').orOn('s.id', 'decisions.verification_snapshot_id');
    })
    .select('s.audit_id');
  const audits = await db('audits')
    .where(scope)
    .whereIn('status', ['completed', 'failed', 'cancelled'])
    .whereNotIn('id', cited)
    .select<Array<{ id: string }>>('id');
  const ids = audits.map((a) => a.id);
  const shas = ids.length
    ? await db('audit_source_files')
        .whereIn('audit_id', ids)
        .whereNotNull('sha256')
        .distinct<Array<{ sha256: string }>>('sha256')
    : [];
  const attachments = ids.length
    ? await db('audit_attachments')
        .whereIn('audit_id', ids)
        .distinct<Array<{ sha256: string }>>('sha256')
    : [];
  const deleted = ids.length ? await db('audits').whereIn('id', ids).delete() : 0;
  const total = await db('audits').where(scope).count<Array<{ count: string }>>('id as count');
  return {
    audits_deleted: deleted,
    audits_kept: Number(total[0]?.count ?? 0),
    findings_deleted: findings,
    remediations_deleted: remediations,
    uncertainty_cases_deleted: cases,
    blob_shas: [...new Set([...shas, ...attachments].map((r) => r.sha256))],
  };
}
