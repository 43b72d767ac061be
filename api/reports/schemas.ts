/** An audit's report and its approval. */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Decimal, Nullable, Strict, Uuid } from '../schema-kit';
import { Rationale } from '../schema-parts';

const Location = Strict('ReportLocation', {
  path: Type.String(),
  start_line: Type.Integer({ minimum: 0 }),
  end_line: Type.Integer({ minimum: 0 }),
});

const counts = (description: string) =>
  Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description });

export const AuditReportContent = Strict(
  'AuditReportContent',
  {
    audit_id: Uuid(),
    report_version: Type.String({
      description: "The version of the audit's architecture snapshot: each audit has its own.",
    }),
    repository: Nullable(
      Strict('ReportRepository', { id: Uuid(), name: Type.String(), url: Type.String() }),
    ),
    upload: Type.Optional(
      Nullable(
        Strict(
          'ReportUpload',
          { id: Uuid(), filename: Type.String() },
          {
            description:
              'The uploaded archive an upload audit read (null for repository audits; absent from reports approved before it existed).',
          },
        ),
      ),
    ),
    branch_ref: Nullable(Type.String()),
    commit_sha: Nullable(Type.String()),
    audited_at: DateTime(),
    completed_at: Nullable(DateTime()),
    summary: Strict('ReportSummary', {
      entity_count: Type.Integer({ minimum: 0 }),
      relationship_count: Type.Integer({ minimum: 0 }),
      source_coverage: Decimal(),
      sources: Type.Array(Type.String()),
      missing_sources: Type.Array(Type.String()),
      assessments: counts('Assessments by status.'),
      open_findings: counts('Open findings by severity.'),
      open_uncertainty_cases: Type.Integer({ minimum: 0 }),
      blocking_uncertainty_cases: Type.Integer({ minimum: 0 }),
      gate_outcome: Nullable(Type.String()),
    }),
    architecture: Strict('ReportArchitecture', {
      snapshot_id: Uuid(),
      snapshot_version: Type.String(),
      status: Type.String(),
      entities: Type.Array(
        Strict('ReportEntity', {
          canonical_key: Type.String(),
          kind: Type.String(),
          name: Type.String(),
          confidence: Decimal(),
        }),
      ),
      relationships: Type.Array(
        Strict('ReportRelationship', {
          canonical_key: Type.String(),
          source_key: Type.String(),
          target_key: Type.String(),
          kind: Type.String(),
          confidence: Decimal(),
        }),
      ),
    }),
    assessments: Type.Array(
      Strict('ReportAssessment', {
        control_key: Type.String(),
        title: Type.String(),
        domain: Type.String(),
        severity: Type.String(),
        status: Type.String(),
        confidence: Decimal(),
        rationale: Type.String(),
        finding_ids: Type.Array(Uuid()),
        stale_evidence_ids: Type.Array(Type.String()),
      }),
    ),
    findings: Type.Array(
      Strict('ReportFinding', {
        id: Uuid(),
        control_key: Type.String(),
        severity: Type.String(),
        title: Type.String(),
        detail: Type.String(),
        fingerprint: Type.String(),
        status: Type.String(),
        entity_key: Nullable(Type.String()),
        evidence_ids: Type.Array(Type.String()),
        locations: Type.Array(Location),
      }),
    ),
    uncertainty_cases: Type.Array(
      Strict('ReportUncertaintyCase', {
        id: Uuid(),
        reason: Type.String(),
        subject_key: Type.String(),
        detail: Type.String(),
        blocking: Type.Boolean(),
        state: Type.String(),
      }),
    ),
    gate: Nullable(
      Strict('ReportGate', { outcome: Type.String(), reasons: Type.Array(Type.String()) }),
    ),
  },
  { description: 'The report document; its canonical JSON (RFC 8785) hashes to content_sha256.' },
);

export const ReportApprovalCreate = Strict(
  'ReportApprovalCreate',
  {
    rationale: Rationale('Why the approver signs the report off.'),
    content_sha256: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{64}$',
        description:
          'The content_sha256 of the report the approver read: when the report changed since (a finding was set aside, a case resolved), 409 report_changed and nothing is approved.',
      }),
    ),
  },
  { description: 'Approves the current version of an audit report.' },
);

export const ReportApprovalResponse = Strict(
  'ReportApprovalResponse',
  {
    id: Uuid(),
    audit_id: Uuid(),
    report_version: Type.String(),
    content_sha256: Type.String({ description: 'SHA-256 of the approved content.' }),
    actor_id: Uuid({ description: 'The approving member.' }),
    actor_role: Type.String({ description: "The approver's role in the workspace." }),
    authorization_scope: Type.String({ description: 'The scope the approval was made under.' }),
    policy_version: Nullable(
      Type.Integer({ description: 'Null: a report takes one approval (no versioned policy).' }),
    ),
    rationale: Type.String(),
    created_at: DateTime(),
  },
  { description: 'Who approved a report version, in which role, under which scope, and why.' },
);

export const AuditReportResponse = Strict(
  'AuditReportResponse',
  {
    audit_id: Uuid(),
    report_version: Type.String(),
    status: Type.Union([Type.Literal('draft'), Type.Literal('approved')], {
      description:
        'draft: built from the current rows on each read; approved: the stored content, served unchanged.',
    }),
    content_sha256: Type.String(),
    approval: Nullable(ReportApprovalResponse),
    content: AuditReportContent,
  },
  { description: "An audit's report with its version identity and approval." },
);

// The static types of the schemas that code elsewhere names.
export type ReportApprovalResponse = Static<typeof ReportApprovalResponse>;
