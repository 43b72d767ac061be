/** Rows of the controls feature as API responses. */
import { type AssessmentRow, type ControlRow, type SourcedFindingRow } from '../../db/controls';
import { iso, isoOrNull } from '../shared';
import type { AssessmentResponse } from './schemas';

export function presentControl(row: ControlRow) {
  return {
    id: row.id,
    mapping_version_id: row.mapping_version_id,
    catalog_version: row.catalog_version,
    key: row.key,
    title: row.title,
    description: row.description,
    domain: row.domain as 'code' | 'cloud' | 'cicd' | 'architecture',
    severity: row.severity as 'high' | 'medium' | 'low',
    requirements: row.requirements.map((r) => ({
      key: r.key,
      description: r.description,
      advisory: r.advisory === true,
    })),
    created_at: iso(row.created_at),
  };
}

export function presentAssessment(row: AssessmentRow): AssessmentResponse {
  return {
    id: row.id,
    control_id: row.control_id,
    mapping_version_id: row.mapping_version_id,
    control_key: row.control_key,
    title: row.title,
    description: row.description,
    domain: row.domain,
    severity: row.severity,
    status: row.status,
    calculation_version: row.calculation_version,
    input_hash: row.input_hash,
    rationale: row.rationale,
    applicability: row.applicability,
    applicability_rationale: row.applicability_rationale,
    confidence: row.confidence,
    evidence_ids: row.evidence_ids,
    finding_ids: row.finding_ids,
    architecture_relationship_ids: row.architecture_relationship_ids,
    stale_evidence_ids: row.stale_evidence_ids,
    conflicting_evidence_ids: row.conflicting_evidence_ids,
    missing_requirement_keys: row.missing_requirement_keys,
    exception_id: row.exception_id,
    calculated_at: iso(row.calculated_at),
    requirements: row.requirements as AssessmentResponse['requirements'],
    overlay_version: row.overlay_version,
  };
}

/** Where a finding comes from, said in every list (never a repository-less row unexplained). */
export function findingSource(row: SourcedFindingRow) {
  if (row.repository_id)
    return {
      source: 'repository' as const,
      source_label: row.repository_name ?? row.repository_id,
      upload_id: null,
    };
  return {
    source: 'upload' as const,
    source_label: `upload ${row.upload_filename ?? row.upload_id ?? 'archive'} (audit ${row.first_seen_audit_id.slice(0, 8)})`,
    upload_id: row.upload_id,
  };
}

export function presentFinding(row: SourcedFindingRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    repository_id: row.repository_id,
    ...findingSource(row),
    control_id: row.control_id,
    control_key: row.control_key,
    severity: row.severity as 'high' | 'medium' | 'low',
    title: row.title,
    detail: row.detail,
    fingerprint: row.fingerprint,
    status: row.status,
    note: row.note,
    entity_key: row.entity_key,
    evidence_ids: row.evidence_ids,
    locations: row.locations,
    first_seen_audit_id: row.first_seen_audit_id,
    last_seen_audit_id: row.last_seen_audit_id,
    first_seen_at: iso(row.first_seen_at),
    last_seen_at: iso(row.last_seen_at),
    occurrences: row.occurrences,
    resolved_audit_id: row.resolved_audit_id,
    resolved_at: isoOrNull(row.resolved_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
