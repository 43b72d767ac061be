/** Spec 2.11: audits, their logs and cost. */
import { Type, type Static } from '@sinclair/typebox';
import { CursorPage, DateTime, Decimal, FreeObject, Nullable, Strict, Uuid } from '../schema-kit';
import { AUDIT_LOG_LEVELS, AUDIT_LOG_SOURCES, LiteralUnion } from '../../domain/contract/values';
import {
  AuditSourceResponse,
  AuditSourceScope,
  AuditStageResponse,
  AuditStatus,
  AuditType,
  CommitSha,
} from '../schemas/spec/gaps';

export const AuditCreate = Strict(
  'AuditCreate',
  {
    branch_ref: Type.Optional(
      Nullable(
        Type.String({ minLength: 1, maxLength: 500, description: 'Branch or ref to audit.' }),
      ),
    ),
    commit_sha: Type.Optional(Nullable(CommitSha({ description: 'Commit to audit (40 hex).' }))),
    deep_review: Type.Optional(Type.Boolean({ default: false })),
    profile_id: Type.Optional(Nullable(Uuid({ description: 'Audit profile to apply.' }))),
    profile_version: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    repository_id: Type.Optional(Nullable(Uuid())),
    source_scope: Type.Optional(AuditSourceScope),
    upload_id: Type.Optional(Nullable(Uuid())),
  },
  { description: 'Request to start an audit.' },
);
export type AuditCreate = Static<typeof AuditCreate>;

export const AuditResponse = Strict(
  'AuditResponse',
  {
    id: Uuid(),
    workspace_id: Uuid(),
    repository_id: Nullable(Uuid()),
    upload_id: Nullable(Uuid()),
    audit_type: AuditType,
    status: AuditStatus,
    commit_sha: Nullable(Type.String()),
    scanner_only: Type.Boolean({ description: 'True when no model-backed agent ran.' }),
    workflow_id: Nullable(Type.String()),
    stages: Type.Array(AuditStageResponse),
    coverage_gaps: Type.Array(FreeObject()),
    created_at: DateTime(),
    completed_at: Nullable(DateTime()),
    branch_ref: Type.Optional(Nullable(Type.String())),
    origin: Type.Optional(
      Type.String({ default: 'manual', description: 'What started the audit.' }),
    ),
    origin_ref: Type.Optional(Nullable(Type.String())),
    profile_snapshot: Type.Optional(Nullable(FreeObject())),
    source: Type.Optional(Nullable(AuditSourceResponse)),
    source_manifest: Type.Optional(FreeObject()),
    source_scope: Type.Optional(AuditSourceScope),
    structural_gate_result: Type.Optional(Nullable(FreeObject())),
    trigger_reason: Type.Optional(Nullable(Type.String())),
  },
  { description: 'An audit.' },
);
export type AuditResponse = Static<typeof AuditResponse>;

export const AuditPage = CursorPage('AuditPage', AuditResponse);
export type AuditPage = Static<typeof AuditPage>;

export const AuditLogItem = Strict(
  'AuditLogItem',
  {
    occurred_at: DateTime(),
    level: LiteralUnion(AUDIT_LOG_LEVELS),
    source: LiteralUnion(AUDIT_LOG_SOURCES),
    message: Type.String(),
    details: Type.Optional(FreeObject()),
  },
  { description: 'One audit log line.' },
);
export type AuditLogItem = Static<typeof AuditLogItem>;

export const AuditLogResponse = Strict(
  'AuditLogResponse',
  { audit_id: Uuid(), items: Type.Array(AuditLogItem) },
  { description: 'The log of an audit.' },
);
export type AuditLogResponse = Static<typeof AuditLogResponse>;

export const AuditCostResponse = Strict(
  'AuditCostResponse',
  {
    audit_id: Uuid(),
    cost_usd: Decimal({ description: 'Total cost in USD.' }),
    model_calls: Type.Integer(),
    input_tokens: Type.Integer(),
    cached_input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    models: Type.Array(Type.String(), { description: 'Models used.' }),
    analysis_cost_usd: Type.Optional(Decimal({ default: '0' })),
    remediation_cost_usd: Type.Optional(Decimal({ default: '0' })),
  },
  { description: 'Cost of an audit, summed over its agent runs.' },
);
export type AuditCostResponse = Static<typeof AuditCostResponse>;
