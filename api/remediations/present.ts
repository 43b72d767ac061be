/** Rows of the remediations feature as API responses. */
import { presentApprovalRecord } from '../registry/approvals';
import type { RemediationApprovalRow, RemediationRow } from '../../db/remediations';
import { iso, isoOrNull } from '../shared';

export function presentRemediation(
  row: RemediationRow,
  findingIds: readonly string[],
  approvals: readonly RemediationApprovalRow[],
) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    repository_id: row.repository_id,
    audit_id: row.audit_id,
    finding_ids: [...findingIds],
    title: row.title,
    summary: row.summary,
    steps: row.steps,
    affected_entity_keys: row.affected_entity_keys,
    risk: row.risk,
    effort: row.effort,
    source: row.source,
    agent_run_id: row.agent_run_id,
    status: row.status,
    created_by: row.created_by,
    approved_by: row.approved_by,
    approved_at: isoOrNull(row.approved_at),
    rejected_at: isoOrNull(row.rejected_at),
    started_at: isoOrNull(row.started_at),
    done_at: isoOrNull(row.done_at),
    verified_at: isoOrNull(row.verified_at),
    verification: row.verification,
    latest_rationale: row.latest_rationale,
    approvals: approvals.map(presentApprovalRecord),
    workflow_id: row.workflow_id,
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
