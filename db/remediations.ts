/** Remediations, the findings they cover and their approvals. */
import { coversWholeRepository } from '../domain/audits/source-scope';
import { SOURCE_TYPES } from '../domain/contract/values';
import type { Knex } from 'knex';
import { approvalsBySubject, insertApprovalRow, type ApprovalRow } from './approvals';
import { keyset, type Keyset } from './paginate';
import { encodeJson, findInWorkspace, getById, updateVersioned } from './records';
import type { FindingRow } from './controls';
import type {
  RemediationEffort,
  RemediationRisk,
  RemediationStatus,
  RemediationStep,
  RemediationVerification,
} from '../domain/remediations/rules';

export interface RemediationRow {
  id: string;
  workspace_id: string;
  repository_id: string | null;
  audit_id: string | null;
  title: string;
  summary: string;
  steps: RemediationStep[];
  affected_entity_keys: string[];
  risk: RemediationRisk;
  effort: RemediationEffort;
  source: 'manual' | 'template' | 'model';
  status: RemediationStatus;
  created_by: string;
  approved_by: string | null;
  approved_at: Date | null;
  rejected_at: Date | null;
  started_at: Date | null;
  done_at: Date | null;
  verified_at: Date | null;
  verification_audit_id: string | null;
  verification: RemediationVerification | null;
  latest_rationale: string | null;
  agent_run_id: string | null;
  version: number;
  last_request_key: string | null;
  workflow_id: string;
  created_at: Date;
  updated_at: Date;
}

export interface RemediationApprovalRow extends ApprovalRow {
  remediation_id: string;
}

const JSON_COLUMNS = ['steps', 'affected_entity_keys', 'verification'] as const;

const encode = (values: Partial<RemediationRow>) => encodeJson(values, JSON_COLUMNS);

export type NewRemediation = Pick<
  RemediationRow,
  | 'id'
  | 'workspace_id'
  | 'repository_id'
  | 'audit_id'
  | 'title'
  | 'summary'
  | 'steps'
  | 'affected_entity_keys'
  | 'risk'
  | 'effort'
  | 'source'
  | 'created_by'
  | 'workflow_id'
>;

/** Inserts a remediation with its findings (in the order given). */
export async function insertRemediation(
  db: Knex,
  input: NewRemediation,
  findingIds: readonly string[],
): Promise<RemediationRow> {
  const [row] = await db('remediations')
    .insert(encode({ ...input, status: 'proposed', version: 1 }))
    .returning('*');
  await db('remediation_findings').insert(
    findingIds.map((finding_id, position) => ({ remediation_id: input.id, finding_id, position })),
  );
  return row as RemediationRow;
}

/** Removes a remediation whose workflow never started (nothing else refers to it yet). */
export async function discardUnstartedRemediation(db: Knex, id: string): Promise<boolean> {
  return (await db('remediations').where({ id, status: 'proposed', version: 1 }).delete()) > 0;
}

export const findRemediation = (db: Knex, workspaceId: string, id: string) =>
  findInWorkspace<RemediationRow>(db, 'remediations', workspaceId, id);

export const getRemediationById = (db: Knex, id: string, lock = false) =>
  getById<RemediationRow>(db, 'remediations', id, lock);

/** Updates a remediation and bumps its version. */
export const updateRemediation = (db: Knex, id: string, values: Partial<RemediationRow>) =>
  updateVersioned<RemediationRow>(db, 'remediations', id, encode(values));

export function remediationsQuery(
  db: Knex,
  workspaceId: string,
  filters: { status?: string; repositoryId?: string; findingId?: string },
): Keyset<RemediationRow> {
  const q = db('remediations')
    .select('remediations.*')
    .where('remediations.workspace_id', workspaceId);
  if (filters.status) q.where('remediations.status', filters.status);
  if (filters.repositoryId) q.where('remediations.repository_id', filters.repositoryId);
  if (filters.findingId)
    q.whereExists(
      db('remediation_findings')
        .whereRaw('remediation_findings.remediation_id = remediations.id')
        .where('remediation_findings.finding_id', filters.findingId),
    );
  return keyset(q, 'remediations');
}

/** The finding ids of each remediation, in plan order. */
export async function findingIdsOf(
  db: Knex,
  remediationIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (remediationIds.length === 0) return out;
  const rows = await db('remediation_findings')
    .whereIn('remediation_id', [...remediationIds])
    .orderBy([{ column: 'remediation_id' }, { column: 'position' }])
    .select<Array<{ remediation_id: string; finding_id: string }>>('remediation_id', 'finding_id');
  for (const r of rows)
    out.set(r.remediation_id, [...(out.get(r.remediation_id) ?? []), r.finding_id]);
  return out;
}

export const remediationApprovalsOf = (db: Knex, remediationIds: readonly string[]) =>
  approvalsBySubject<RemediationApprovalRow>(
    db,
    'remediation_approvals',
    'remediation_id',
    remediationIds,
  );

export const insertRemediationApproval = (
  db: Knex,
  input: Omit<RemediationApprovalRow, 'id' | 'created_at'>,
) => insertApprovalRow<RemediationApprovalRow>(db, 'remediation_approvals', input);

/** The workspace's findings among `ids` (others are unknown to it). */
export async function findingsByIds(
  db: Knex,
  workspaceId: string,
  ids: readonly string[],
): Promise<FindingRow[]> {
  if (ids.length === 0) return [];
  return db<FindingRow>('findings')
    .where({ workspace_id: workspaceId })
    .whereIn('id', [...ids]);
}

/** The findings of one remediation, in plan order. */
export async function findingsOfRemediation(
  db: Knex,
  remediationId: string,
): Promise<FindingRow[]> {
  return db('remediation_findings')
    .join('findings', 'findings.id', 'remediation_findings.finding_id')
    .where('remediation_findings.remediation_id', remediationId)
    .orderBy('remediation_findings.position')
    .select('findings.*') as Promise<FindingRow[]>;
}

/** The newest audit of a repository that completed at or after `since`. */
/**
 * The newest audit of the repository completed since `since` that read the whole repository
 * (a scoped audit neither verifies nor un-verifies: it did not look everywhere).
 */
export async function latestAuditCompletedSince(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  since: Date,
): Promise<{ id: string } | undefined> {
  const rows = await db('audits')
    // An upload audit naming the repository is not known to be all of it (issue 26).
    .where({
      workspace_id: workspaceId,
      repository_id: repositoryId,
      status: 'completed',
      audit_type: 'repository',
    })
    .where('completed_at', '>=', since)
    .orderBy([
      { column: 'completed_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(100)
    .select<Array<{ id: string; source_scope: Record<string, unknown> | null }>>(
      'id',
      'source_scope',
    );
  return rows.find((r) => coversWholeRepository(r.source_scope ?? {}, SOURCE_TYPES));
}

/** Workflow ids of a repository's remediations waiting for an audit to verify them. */
export async function doneRemediationWorkflows(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Promise<string[]> {
  const rows = await db('remediations')
    .where({ workspace_id: workspaceId, repository_id: repositoryId, status: 'done' })
    .select<Array<{ workflow_id: string }>>('workflow_id');
  return rows.map((r) => r.workflow_id);
}

/** Workspace and repository of an audit. */
export async function auditPlace(
  db: Knex,
  auditId: string,
): Promise<{ workspace_id: string; repository_id: string | null; audit_type: string } | undefined> {
  return db('audits').where({ id: auditId }).first('workspace_id', 'repository_id', 'audit_type');
}

/**
 * Remediation ids by affected entity key, for a repository's graph links (rejected ones are
 * left out: they plan nothing).
 */
export async function remediationIdsByEntity(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Promise<Map<string, string[]>> {
  const rows = await db('remediations')
    .where({ workspace_id: workspaceId, repository_id: repositoryId })
    .whereNot({ status: 'rejected' })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select<Array<{ id: string; affected_entity_keys: string[] }>>('id', 'affected_entity_keys');
  const out = new Map<string, string[]>();
  for (const r of rows)
    for (const key of r.affected_entity_keys) out.set(key, [...(out.get(key) ?? []), r.id]);
  return out;
}
