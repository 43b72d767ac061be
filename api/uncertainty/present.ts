/** Rows of the uncertainty feature as API responses. */
import { type UncertaintyCaseRow } from '../../db/uncertainty';
import { iso, isoOrNull } from '../shared';
import type { ArchitectureUncertaintyCaseResponse } from './schemas';

export function presentCase(row: UncertaintyCaseRow): ArchitectureUncertaintyCaseResponse {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    repository_id: row.repository_id,
    snapshot_id: row.snapshot_id,
    reason: row.reason as ArchitectureUncertaintyCaseResponse['reason'],
    scope: row.scope as ArchitectureUncertaintyCaseResponse['scope'],
    subject_key: row.subject_key,
    field: row.field,
    detail: row.detail,
    blocking: row.blocking,
    state: row.state,
    owner_id: row.owner_id,
    source_keys: row.source_keys,
    evidence_ids: row.evidence_ids,
    alternatives: row.alternatives,
    detected_at: iso(row.detected_at),
    last_observed_at: iso(row.last_observed_at),
    resolved_at: isoOrNull(row.resolved_at),
    resolution_summary: row.resolution_summary,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
