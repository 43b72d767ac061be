/** AuditResponse and friends from rows. */
import type { AgentRunRow, ArtifactRow } from '../../db/agents';
import type { AuditRow, StageRow } from '../../db/audits';
import type { StageKeyName } from '../../domain/contract/values';
import { iso, isoOrNull } from '../shared';
import type { AgentRunResponse, AuditResponse } from './schemas';

type StageStatus = AuditResponse['stages'][number]['status'];

export function presentAudit(row: AuditRow, stages: StageRow[]): AuditResponse {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    repository_id: row.repository_id,
    upload_id: row.upload_id,
    audit_type: row.audit_type,
    status: row.status,
    commit_sha: row.commit_sha,
    scanner_only: row.scanner_only,
    workflow_id: row.workflow_id,
    stages: stages.map((s) => ({
      key: s.key as StageKeyName,
      status: s.status as StageStatus,
      attempt: s.attempt,
      started_at: isoOrNull(s.started_at),
      completed_at: isoOrNull(s.completed_at),
      error_code: s.error_code,
      summary: s.summary,
    })),
    coverage_gaps: row.coverage_gaps,
    created_at: iso(row.created_at),
    completed_at: isoOrNull(row.completed_at),
    branch_ref: row.branch_ref,
    origin: row.origin,
    origin_ref: row.origin_ref,
    profile_snapshot: row.profile_snapshot,
    source: (row.source as AuditResponse['source']) ?? null,
    source_manifest: row.source_manifest,
    source_scope: row.source_scope,
    structural_gate_result: row.structural_gate_result,
    trigger_reason: row.trigger_reason,
  };
}

/** Decimal columns come back as strings like "0.012300"; trailing zeros are kept (exact). */
export function presentRun(run: AgentRunRow & { artifact: ArtifactRow | null }): AgentRunResponse {
  return {
    id: run.id,
    agent_key: run.agent_key,
    agent_version: run.agent_version,
    model_id: run.model_id,
    reasoning_effort: run.reasoning_effort,
    status: run.status,
    attempt: run.attempt,
    cache_hit: run.cache_hit,
    started_at: isoOrNull(run.started_at),
    completed_at: isoOrNull(run.completed_at),
    error_code: run.error_code,
    artifact: run.artifact
      ? {
          id: run.artifact.id,
          kind: run.artifact.kind,
          title: run.artifact.title,
          artifact: run.artifact.artifact,
          evidence_ids: run.artifact.evidence_ids,
          confidence: run.artifact.confidence,
          created_at: iso(run.artifact.created_at),
        }
      : null,
    input_tokens: run.input_tokens,
    cached_input_tokens: run.cached_input_tokens,
    output_tokens: run.output_tokens,
    cost_usd: run.cost_usd,
  };
}
