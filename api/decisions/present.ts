/** Rows of the decisions feature as API responses. */
import { presentApprovalRecord } from '../registry/approvals';
import { type ApprovalRow, type DecisionRow } from '../../db/decisions';
import { iso, isoOrNull } from '../shared';

export function presentDecision(row: DecisionRow, approvals: readonly ApprovalRow[]) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    repository_id: row.repository_id,
    snapshot_id: row.snapshot_id,
    candidate_change_id: row.candidate_change_id,
    title: row.title,
    question: row.question,
    context: row.context,
    status: row.status,
    owner_id: row.owner_id,
    created_by: row.created_by,
    options: row.options,
    selected_option_id: row.selected_option_id,
    evidence_ids: row.evidence_ids,
    uncertainties: row.uncertainties,
    affected_entity_keys: row.affected_entity_keys,
    affected_relationship_keys: row.affected_relationship_keys,
    success_criteria: row.success_criteria,
    latest_rationale: row.latest_rationale,
    approved_by: row.approved_by,
    approved_at: isoOrNull(row.approved_at),
    implemented_at: isoOrNull(row.implemented_at),
    verified_at: isoOrNull(row.verified_at),
    superseded_at: isoOrNull(row.superseded_at),
    verification_snapshot_id: row.verification_snapshot_id,
    verification_result: row.verification_result,
    supersedes_id: row.supersedes_id,
    version: row.version,
    approvals: approvals.map(presentApprovalRecord),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
