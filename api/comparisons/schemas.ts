/** Audit comparisons (the specification's schemas). */
import { Type, type Static } from '@sinclair/typebox';
import { FINDING_CHANGES } from '../../domain/contract/values';
import { ArchitectureDelta } from '../changes/schemas';
import { DateTime, Decimal, LiteralUnion, Nullable, Strict, Uuid } from '../schema-kit';
import { CursorPage, WorkspaceRecord } from '../schema-parts';

export const ComparisonAuditSide = Strict(
  'ComparisonAuditSide',
  {
    audit_id: Uuid(),
    status: Type.String({ description: 'Audit status at comparison time.' }),
    commit_sha: Nullable(Type.String({ description: 'Commit the audit read, if any.' })),
    completed_at: Nullable(DateTime()),
    source_coverage: Decimal({ description: 'Share of source types found, 0 to 1.' }),
  },
  { description: 'One side (baseline or candidate) of an audit comparison.' },
);

export const FindingDelta = Strict(
  'FindingDelta',
  {
    change: LiteralUnion(FINDING_CHANGES, {
      description: 'How the finding differs from baseline to candidate.',
    }),
    fingerprint: Type.String({ description: 'Stable finding fingerprint across audits.' }),
    control_key: Nullable(Type.String({ description: 'Control that raised the finding.' })),
    severity: Type.String(),
    title: Type.String(),
    baseline_finding_id: Nullable(Uuid()),
    candidate_finding_id: Nullable(Uuid()),
  },
  { description: 'A finding difference between two audits.' },
);

const counts = () =>
  Type.Record(Type.String(), Type.Integer(), { description: 'Counts by category.' });

export const AuditComparisonCreate = Strict(
  'AuditComparisonCreate',
  { baseline_audit_id: Uuid(), candidate_audit_id: Uuid() },
  { description: 'Request to compare two audits.' },
);

export const AuditComparisonListItem = Strict(
  'AuditComparisonListItem',
  {
    id: Uuid(),
    repository_id: Uuid(),
    baseline_audit_id: Uuid(),
    candidate_audit_id: Uuid(),
    content_sha256: Type.String({ description: 'SHA-256 of the comparison result.' }),
    created_at: DateTime(),
    coverage_comparable: Type.Boolean(),
    counts: counts(),
  },
  { description: 'A comparison in a list.' },
);

export const AuditComparisonPage = CursorPage('AuditComparisonPage', AuditComparisonListItem);

export const AuditComparisonResult = Strict(
  'AuditComparisonResult',
  {
    baseline: ComparisonAuditSide,
    candidate: ComparisonAuditSide,
    coverage_comparable: Type.Boolean(),
    architecture_comparable: Type.Boolean(),
    limitations: Type.Array(Type.String(), { description: 'What the comparison cannot tell.' }),
    counts: counts(),
    findings: Type.Array(FindingDelta),
    architecture_changes: Type.Array(ArchitectureDelta),
  },
  { description: 'Differences between a baseline and a candidate audit.' },
);

export const AuditComparisonResponse = Strict(
  'AuditComparisonResponse',
  {
    ...WorkspaceRecord,
    repository_id: Uuid(),
    content_sha256: Type.String({ description: 'SHA-256 of the comparison result.' }),
    snapshot: AuditComparisonResult,
    created_at: DateTime(),
  },
  { description: 'A stored audit comparison.' },
);

// The static types of the schemas that code elsewhere names.
export type AuditComparisonResult = Static<typeof AuditComparisonResult>;
