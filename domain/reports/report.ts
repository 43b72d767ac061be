/**
 * An audit's report: what was audited, the architecture found, control results, findings,
 * open questions and the gate, as one JSON document. Pure: the caller reads the rows. The
 * content is canonical JSON, so its SHA-256 names one version of the report; an approved
 * report's content is stored and served as it was approved (api/reports).
 */
import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { ASSESSMENT_STATUSES, CONTROL_SEVERITIES } from '../contract/values';

export interface ReportLocation {
  path: string;
  start_line: number;
  end_line: number;
}

export interface ReportFinding {
  id: string;
  control_key: string;
  severity: string;
  title: string;
  detail: string;
  fingerprint: string;
  status: string;
  entity_key: string | null;
  evidence_ids: string[];
  locations: ReportLocation[];
}

export interface ReportAssessment {
  control_key: string;
  title: string;
  domain: string;
  severity: string;
  status: string;
  confidence: string;
  rationale: string;
  finding_ids: string[];
  stale_evidence_ids: string[];
}

export interface ReportEntity {
  canonical_key: string;
  kind: string;
  name: string;
  confidence: string;
}

export interface ReportRelationship {
  canonical_key: string;
  source_key: string;
  target_key: string;
  kind: string;
  confidence: string;
}

export interface ReportUncertainty {
  id: string;
  reason: string;
  subject_key: string;
  detail: string;
  blocking: boolean;
  state: string;
}

/** The report document (AuditReportContent). */
export interface AuditReportContent {
  audit_id: string;
  report_version: string;
  repository: { id: string; name: string; url: string } | null;
  upload?: { id: string; filename: string } | null;
  branch_ref: string | null;
  commit_sha: string | null;
  audited_at: string;
  completed_at: string | null;
  summary: {
    entity_count: number;
    relationship_count: number;
    source_coverage: string;
    sources: string[];
    missing_sources: string[];
    assessments: Record<string, number>;
    open_findings: Record<string, number>;
    open_uncertainty_cases: number;
    blocking_uncertainty_cases: number;
    gate_outcome: string | null;
  };
  architecture: {
    snapshot_id: string;
    snapshot_version: string;
    status: string;
    entities: ReportEntity[];
    relationships: ReportRelationship[];
  };
  assessments: ReportAssessment[];
  findings: ReportFinding[];
  uncertainty_cases: ReportUncertainty[];
  gate: { outcome: string; reasons: string[] } | null;
}

export interface ReportInput {
  audit: {
    id: string;
    branch_ref: string | null;
    commit_sha: string | null;
    created_at: Date;
    completed_at: Date | null;
  };
  repository: { id: string; name: string; url: string } | null;
  upload: { id: string; filename: string } | null;
  snapshot: {
    id: string;
    version: string;
    status: string;
    sources: string[];
    missing_sources: string[];
    source_coverage: string;
    entities: ReadonlyArray<Record<string, unknown>>;
    relationships: ReadonlyArray<Record<string, unknown>>;
  };
  assessments: readonly ReportAssessment[];
  findings: readonly ReportFinding[];
  uncertainty: readonly ReportUncertainty[];
  gate: { outcome: string; reasons: ReadonlyArray<{ text: string }> } | null;
}

const SEVERITY_RANK = new Map<string, number>(CONTROL_SEVERITIES.map((s, i) => [s, i]));

const text = (v: unknown) => (typeof v === 'string' ? v : '');
const byKey = <T extends { canonical_key: string }>(a: T, b: T) =>
  a.canonical_key < b.canonical_key ? -1 : a.canonical_key > b.canonical_key ? 1 : 0;

/** Findings that count: the ones a person has not set aside or seen resolved. */
export const isOpenFinding = (f: Pick<ReportFinding, 'status'>) => f.status === 'open';

function counts(values: readonly string[], keys: readonly string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]));
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** Builds the report document; the same rows always give the same document. */
export function buildReport(input: ReportInput): AuditReportContent {
  const findings = [...input.findings].sort(
    (a, b) =>
      (SEVERITY_RANK.get(a.severity) ?? 9) - (SEVERITY_RANK.get(b.severity) ?? 9) ||
      a.control_key.localeCompare(b.control_key) ||
      a.fingerprint.localeCompare(b.fingerprint),
  );
  const assessments = [...input.assessments].sort((a, b) =>
    a.control_key.localeCompare(b.control_key),
  );
  const uncertainty = [...input.uncertainty].sort(
    (a, b) =>
      Number(b.blocking) - Number(a.blocking) ||
      a.subject_key.localeCompare(b.subject_key) ||
      a.id.localeCompare(b.id),
  );
  const open = uncertainty.filter((u) => u.state === 'open' || u.state === 'investigating');
  return {
    audit_id: input.audit.id,
    report_version: input.snapshot.version,
    repository: input.repository,
    upload: input.upload,
    branch_ref: input.audit.branch_ref,
    commit_sha: input.audit.commit_sha,
    audited_at: input.audit.created_at.toISOString(),
    completed_at: input.audit.completed_at?.toISOString() ?? null,
    summary: {
      entity_count: input.snapshot.entities.length,
      relationship_count: input.snapshot.relationships.length,
      source_coverage: input.snapshot.source_coverage,
      sources: [...input.snapshot.sources],
      missing_sources: [...input.snapshot.missing_sources],
      assessments: counts(
        assessments.map((a) => a.status),
        ASSESSMENT_STATUSES,
      ),
      open_findings: counts(
        findings.filter(isOpenFinding).map((f) => f.severity),
        CONTROL_SEVERITIES,
      ),
      open_uncertainty_cases: open.length,
      blocking_uncertainty_cases: open.filter((u) => u.blocking).length,
      gate_outcome: input.gate?.outcome ?? null,
    },
    architecture: {
      snapshot_id: input.snapshot.id,
      snapshot_version: input.snapshot.version,
      status: input.snapshot.status,
      entities: input.snapshot.entities
        .map((e) => ({
          canonical_key: text(e.canonical_key),
          kind: text(e.kind),
          name: text(e.name),
          confidence: text(e.confidence),
        }))
        .sort(byKey),
      relationships: input.snapshot.relationships
        .map((r) => ({
          canonical_key: text(r.canonical_key),
          source_key: text(r.source_key),
          target_key: text(r.target_key),
          kind: text(r.kind),
          confidence: text(r.confidence),
        }))
        .sort(byKey),
    },
    assessments,
    findings,
    uncertainty_cases: uncertainty,
    gate: input.gate
      ? { outcome: input.gate.outcome, reasons: input.gate.reasons.map((r) => r.text) }
      : null,
  };
}

/**
 * What the report is of, for titles: the repository's name, the uploaded archive's, or both
 * (an upload audit that named the repository it belongs to).
 */
export function reportSubject(r: Pick<AuditReportContent, 'repository' | 'upload' | 'audit_id'>) {
  if (r.repository && r.upload) return `${r.repository.name} (upload ${r.upload.filename})`;
  return r.repository?.name ?? (r.upload ? `${r.upload.filename} (upload)` : `audit ${r.audit_id}`);
}

/** SHA-256 (hex) of the report's canonical JSON (RFC 8785): the version's identity. */
export function reportContentSha256(content: AuditReportContent): string {
  return crypto
    .createHash('sha256')
    .update(canonicalize(content) ?? '')
    .digest('hex');
}
