/**
 * The contract's value sets, as `as const` tuples: the API schemas (api/schema-kit.ts
 * `LiteralUnion`), domain rules, workflows and activities all take them from here. Imports
 * nothing. Values the interface specification fixes are marked "spec"; the others are ours.
 */

/** spec: the 25 token scopes, in the spec's order. */
export const SCOPES = [
  'audits:read',
  'audits:write',
  'decisions:approve',
  'decisions:read',
  'decisions:write',
  'evidence:write',
  'exports:write',
  'findings:read',
  'findings:write',
  'ingestion:read',
  'members:read',
  'policies:read',
  'policies:write',
  'remediations:approve',
  'remediations:read',
  'remediations:write',
  'reports:approve',
  'reports:read',
  'repositories:read',
  'repositories:write',
  'uploads:write',
  'usage:read',
  'workflow_actions:approve',
  'workflow_actions:read',
  'workflow_actions:request',
] as const;
export type ScopeName = (typeof SCOPES)[number];

/** spec: evidence source types. */
export const SOURCE_TYPES = ['code', 'cloud', 'cicd'] as const;

/** spec: decision states. */
export const DECISION_STATES = [
  'proposed',
  'in_review',
  'approved',
  'rejected',
  'implemented',
  'verified',
  'superseded',
] as const;

/** spec: decision approval outcomes. */
export const APPROVAL_OUTCOMES = ['approved', 'rejected'] as const;

/** spec: change gate outcomes. */
export const CHANGE_GATE_OUTCOMES = ['pass', 'review', 'blocked', 'insufficient_evidence'] as const;
/** spec: change item types. */
export const ARCHITECTURE_CHANGE_TYPES = [
  'entity_added',
  'entity_changed',
  'entity_removed',
  'entity_not_reobserved',
  'relationship_added',
  'relationship_changed',
  'relationship_removed',
  'relationship_not_reobserved',
] as const;
export type ArchitectureChangeType = (typeof ARCHITECTURE_CHANGE_TYPES)[number];
/** spec: what a change item does to the gate. */
export const CHANGE_CONSEQUENCES = ['informational', 'review', 'blocked'] as const;
export type ChangeConsequence = (typeof CHANGE_CONSEQUENCES)[number];
export type ChangeGateOutcome = (typeof CHANGE_GATE_OUTCOMES)[number];
/** spec: change set states. */
export const CHANGE_SET_STATES = ['candidate', 'observed'] as const;
/** spec: dependency path directions. */
export const DEPENDENCY_DIRECTIONS = ['upstream', 'downstream'] as const;

/** spec: assistant message roles. */
export const ASSISTANT_ROLES = ['user', 'assistant'] as const;
/**
 * Ours: assistant run status. `completed` (not the agent runs' `succeeded`) because a run ends
 * with an answer; `refused` when it could not answer without something missing (a model, budget).
 */
export const ASSISTANT_RUN_STATUSES = [
  'queued',
  'running',
  'completed',
  'failed',
  'cancelled',
  'refused',
] as const;
export type AssistantRunStatus = (typeof ASSISTANT_RUN_STATUSES)[number];
/** Ours: the specialists an assistant question is routed to. */
export const ASSISTANT_SPECIALISTS = [
  'graph',
  'changes',
  'decisions',
  'findings',
  'general',
] as const;
export type AssistantSpecialist = (typeof ASSISTANT_SPECIALISTS)[number];

/** spec: audit log levels and sources. */
export const AUDIT_LOG_LEVELS = ['info', 'warning', 'error'] as const;
export const AUDIT_LOG_SOURCES = ['control', 'stage', 'scanner', 'architecture'] as const;

/** spec: schedule cadences and missed-run policies. */
export const SCHEDULE_CADENCES = ['daily', 'weekly', 'biweekly', 'monthly'] as const;
export const MISSED_RUN_POLICIES = ['skip', 'run_once'] as const;

/** Ours: audit status and type. */
export const AUDIT_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export const AUDIT_TYPES = ['repository', 'upload'] as const;

/** Ours: audit stages, in run order (`code`, `cloud`, `cicd` run in parallel). */
export const STAGE_KEYS = [
  'source',
  'inventory',
  'code',
  'cloud',
  'cicd',
  'reconcile',
  'controls',
  'changes',
  'report',
] as const;
export type StageKeyName = (typeof STAGE_KEYS)[number];
export const STAGE_STATUSES = [
  'pending',
  'running',
  'completed',
  'failed',
  'skipped',
  'cancelled',
] as const;

/** Ours: agent run and assistant run status (the schemas keep `status` a plain string). */
/**
 * Agent run statuses (the spec leaves the values open). `abandoned`: the attempt was still
 * running when its audit failed (docs/decisions.md).
 */
export const RUN_STATUSES = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'cancelled',
  'abandoned',
] as const;

/** Ours: schedule state (the schema keeps `state` a plain string). */
export const SCHEDULE_STATES = ['active', 'paused', 'error'] as const;

/** Ours: finding status. */
export const FINDING_STATUSES = ['open', 'accepted_risk', 'false_positive', 'resolved'] as const;

/** Ours: control domains and the severity of the findings a control raises. */
export const CONTROL_DOMAINS = ['code', 'cloud', 'cicd', 'architecture'] as const;
export const CONTROL_SEVERITIES = ['high', 'medium', 'low'] as const;

/** Ours: control assessment status (the schema keeps `status` a plain string), in report order. */
export const ASSESSMENT_STATUSES = [
  'pass',
  'fail',
  'partial',
  'not_applicable',
  'insufficient_evidence',
] as const;

/** Ours: uncertainty reason, scope and state. */
export const UNCERTAINTY_REASONS = [
  'conflicting_evidence',
  'missing_source',
  'low_confidence',
  'stale_evidence',
  'unresolved_reference',
  'ambiguous_identity',
] as const;
export const UNCERTAINTY_SCOPES = ['entity', 'relationship', 'attribute', 'source'] as const;
export const UNCERTAINTY_STATES = ['open', 'investigating', 'resolved', 'dismissed'] as const;
export type UncertaintyStateName = (typeof UNCERTAINTY_STATES)[number];

/** Ours: decision success criteria and outcome verification. */
export const SUCCESS_CHECK_KINDS = [
  'entity_present',
  'entity_absent',
  'relationship_present',
  'relationship_absent',
  'attribute_equals',
] as const;
export const CRITERION_STATUSES = ['pending', 'met', 'unmet', 'unknown'] as const;
export const VERIFICATION_OUTCOMES = ['verified', 'failed', 'inconclusive'] as const;

/** Ours: comparison finding delta and requirement status. */
export const FINDING_CHANGES = ['added', 'resolved', 'unchanged', 'changed'] as const;
export const REQUIREMENT_STATUSES = ['met', 'unmet', 'unknown', 'not_applicable'] as const;

/** Ours: remediation lifecycle, plan risk and effort, and who wrote a plan. */
export const REMEDIATION_STATES = [
  'proposed',
  'approved',
  'rejected',
  'in_progress',
  'done',
  'verified',
  'not_verified',
] as const;
export const REMEDIATION_RISKS = ['low', 'medium', 'high'] as const;
export const REMEDIATION_EFFORTS = ['small', 'medium', 'large'] as const;
export const REMEDIATION_SOURCES = ['manual', 'template', 'model'] as const;

/** Ours: privileged actions that wait for a second person, and their states. */
export const WORKFLOW_ACTION_KINDS = [
  'delete_repository',
  'purge_attachments',
  'deep_review_audit',
  'change_gate_policy',
  'revoke_member_tokens',
] as const;
export const WORKFLOW_ACTION_STATES = [
  'pending',
  'approved',
  'rejected',
  'expired',
  'executed',
  'failed',
] as const;
