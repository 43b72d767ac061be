/** Audits: their sources, stages, logs, cost and agent runs, and the parameters of the audit operations. */
import { Type, type Static } from '@sinclair/typebox';
import {
  AUDIT_LOG_LEVELS,
  AUDIT_LOG_SOURCES,
  AUDIT_STATUSES,
  AUDIT_TYPES,
  STAGE_KEYS,
  STAGE_STATUSES,
} from '../../domain/contract/values';
import { SourceType } from '../architecture/schemas';
import {
  DateTime,
  Decimal,
  FreeObject,
  LiteralUnion,
  Nullable,
  pageFields,
  Strict,
  Uuid,
  Version,
  NamedUnion,
} from '../schema-kit';
import { CursorPage, ResourceParams, WorkspaceRecord } from '../schema-parts';

/** Commit SHA: exactly 40 hexadecimal characters. */
export const COMMIT_SHA_PATTERN = '^[0-9a-fA-F]{40}$';
export const CommitSha = (options: { description?: string } = {}) =>
  Type.String({ pattern: COMMIT_SHA_PATTERN, ...options });

export const AuditType = NamedUnion(
  'AuditType',
  AUDIT_TYPES,
  'What an audit runs against: a repository (branch or commit) or an upload.',
);

export const AuditStatus = NamedUnion(
  'AuditStatus',
  AUDIT_STATUSES,
  'Lifecycle status of an audit.',
);

/** Stage key and status: inline enums of AuditStageResponse (not named components). */
export const AuditStageKey = LiteralUnion(STAGE_KEYS, {
  description: 'Stage of the audit pipeline.',
});
export const AuditStageStatus = LiteralUnion(STAGE_STATUSES, {
  description: 'Status of the stage.',
});

export const AuditSourceScope = Strict(
  'AuditSourceScope',
  {
    include: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
        maxItems: 200,
        description: 'Glob patterns of paths to include (default: everything).',
      }),
    ),
    exclude: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
        maxItems: 200,
        description: 'Glob patterns of paths to exclude.',
      }),
    ),
    source_types: Type.Optional(
      Type.Array(SourceType, {
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        description: 'Source types to analyze (default: all three).',
      }),
    ),
    max_files: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100000, description: 'Maximum number of files read.' }),
    ),
  },
  { description: 'Which part of the source an audit reads.' },
);

export const AuditSourceResponse = Strict(
  'AuditSourceResponse',
  {
    kind: AuditType,
    repository_id: Nullable(Uuid({ description: 'Repository read, for repository audits.' })),
    upload_id: Nullable(Uuid({ description: 'Upload read, for upload audits.' })),
    url: Nullable(Type.String({ description: 'Location the source was fetched from.' })),
    branch_ref: Nullable(Type.String({ description: 'Branch or ref requested.' })),
    commit_sha: Nullable(CommitSha({ description: 'Commit the ref resolved to.' })),
    file_count: Type.Integer({ minimum: 0, description: 'Files in the source manifest.' }),
    byte_count: Type.Integer({ minimum: 0, description: 'Bytes in the source manifest.' }),
    manifest_sha256: Type.String({ description: 'SHA-256 of the source manifest.' }),
    base: Type.Optional(
      Nullable(
        Strict(
          'AuditSourceBase',
          {
            ref: Type.String({
              description:
                "The branch the audit is gated against: the repository's default branch, or the target branch of the pull request a webhook audited.",
            }),
            merge_base_sha: Nullable(
              CommitSha({
                description:
                  'Merge-base of the audited commit with that branch; null when they share no history or the branch is missing.',
              }),
            ),
          },
          {
            description:
              'For an audit of another branch than the default (or than its pull request target): where it left that branch. Its change gate compares with that branch snapshot at this commit.',
          },
        ),
      ),
    ),
  },
  { description: 'The resolved source an audit read.' },
);

export const AuditStageResponse = Strict(
  'AuditStageResponse',
  {
    key: AuditStageKey,
    status: AuditStageStatus,
    attempt: Type.Integer({ minimum: 0, description: 'Attempt number (0 before the first run).' }),
    started_at: Nullable(DateTime()),
    completed_at: Nullable(DateTime()),
    error_code: Nullable(Type.String({ description: 'Stable error code when the stage failed.' })),
    summary: Nullable(Type.String({ description: 'Short human-readable outcome of the stage.' })),
  },
  { description: 'One stage of an audit run.' },
);

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
    profile_version: Type.Optional(Nullable(Version())),
    repository_id: Type.Optional(Nullable(Uuid())),
    source_scope: Type.Optional(AuditSourceScope),
    upload_id: Type.Optional(Nullable(Uuid())),
  },
  { description: 'Request to start an audit.' },
);

export const AuditResponse = Strict(
  'AuditResponse',
  {
    ...WorkspaceRecord,
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

export const AuditPage = CursorPage('AuditPage', AuditResponse);

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

export const AuditLogResponse = Strict(
  'AuditLogResponse',
  { audit_id: Uuid(), items: Type.Array(AuditLogItem) },
  { description: 'The log of an audit.' },
);

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

export const AuditParams = ResourceParams('audit_id', 'The audit.');
export const AuditListQuery = Type.Object(
  {
    repository_id: Type.Optional(Uuid({ description: 'Only audits of this repository.' })),
    status: Type.Optional(
      LiteralUnion(AUDIT_STATUSES, { description: 'Only audits in this status.' }),
    ),
    report_status: Type.Optional(
      Type.Union([Type.Literal('draft'), Type.Literal('approved')], {
        description:
          'Only completed audits whose report is a draft (not approved yet: what waits for an approver) or approved.',
      }),
    ),
    ...pageFields(),
  },
  { additionalProperties: false },
);

export const AuditLogQuery = Type.Object(
  {
    level: Type.Optional(
      Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('error')], {
        description: 'Minimum level: `warning` returns warnings and errors.',
      }),
    ),
    since: Type.Optional(
      DateTime({
        description: 'Only lines strictly after this instant (to follow a running audit).',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 5000,
        default: 1000,
        description: 'At most this many lines, oldest first.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AgentArtifactResponse = Strict(
  'AgentArtifactResponse',
  {
    id: Uuid(),
    kind: Type.String(),
    title: Type.String(),
    artifact: FreeObject({ description: 'The structured output of the agent.' }),
    evidence_ids: Type.Array(Type.String(), { description: 'Evidence the artifact cites.' }),
    confidence: Decimal({ description: 'Confidence, 0 to 1.' }),
    created_at: DateTime(),
  },
  { description: 'Output of one agent run.' },
);

export const AgentRunResponse = Strict(
  'AgentRunResponse',
  {
    id: Uuid(),
    agent_key: Type.String({ description: 'Which agent ran.' }),
    agent_version: Type.String(),
    model_id: Type.String({ description: 'Model used by the agent.' }),
    reasoning_effort: Type.String(),
    status: Type.String({ description: 'One of queued, running, succeeded, failed, cancelled.' }),
    attempt: Type.Integer({ description: 'Attempt number of this run.' }),
    cache_hit: Type.Boolean({ description: 'True when an earlier artifact was reused.' }),
    started_at: Nullable(DateTime()),
    completed_at: Nullable(DateTime()),
    error_code: Nullable(Type.String({ description: 'Stable error code when the run failed.' })),
    artifact: Type.Optional(Nullable(AgentArtifactResponse)),
    cached_input_tokens: Type.Optional(Type.Integer({ default: 0 })),
    input_tokens: Type.Optional(Type.Integer({ default: 0 })),
    output_tokens: Type.Optional(Type.Integer({ default: 0 })),
    cost_usd: Type.Optional(Decimal({ default: '0', description: 'Cost in USD.' })),
  },
  { description: 'One attempt of one agent within an audit.' },
);

export const AgentTimelineResponse = Strict(
  'AgentTimelineResponse',
  {
    audit_id: Uuid(),
    context_hash: Nullable(Type.String({ description: 'Hash of the context the agents saw.' })),
    runs: Type.Array(AgentRunResponse),
  },
  { description: 'The agent runs of an audit, in order.' },
);

// The static types of the schemas that code elsewhere names.
export type AuditCreate = Static<typeof AuditCreate>;
export type AuditResponse = Static<typeof AuditResponse>;
export type AgentRunResponse = Static<typeof AgentRunResponse>;
