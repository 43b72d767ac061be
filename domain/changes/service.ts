/**
 * Changes and their gate between two snapshots of one repository: what the API serves
 * (getArchitectureChanges) and what an audit's `changes` stage records. Takes its stores as
 * parameters; the callers pass the queries of db/changes.ts.
 */
import type { ChangeItem, GraphItem, SnapshotSide } from './diff';
import { coverageComparable, diffSnapshots } from './diff';
import type { ChangeGateOutcome } from '../contract/values';
import type {
  GateAssessment,
  GateDecision,
  GatePolicy,
  GateReason,
  GateResult,
  GateUncertainty,
  GatedItem,
} from './gate';
import { evaluateGate } from './gate';

/** A stored snapshot as the gate reads it. */
export interface SnapshotRecord {
  id: string;
  audit_id: string;
  workspace_id: string;
  repository_id: string | null;
  sources: string[];
  source_coverage: string;
  entities: Array<Record<string, unknown>>;
  relationships: Array<Record<string, unknown>>;
  generated_at: Date;
}

export interface ChangeStore {
  policy(workspaceId: string): Promise<{ policy: GatePolicy; version: number }>;
  assessments(auditId: string): Promise<GateAssessment[]>;
  decisions(workspaceId: string, repositoryId: string): Promise<GateDecision[]>;
  uncertainties(workspaceId: string, repositoryId: string): Promise<GateUncertainty[]>;
}

export interface ChangeEvaluation {
  gate: GateResult;
  coverage_comparable: boolean;
}

const sideOf = (s: GateSide): SnapshotSide & { snapshot_id: string } => ({
  snapshot_id: s.id,
  entities: s.entities as unknown as GraphItem[],
  relationships: s.relationships as unknown as GraphItem[],
  sources: s.sources,
});

/** What the gate reads besides the two graphs: the policy, assessments, decisions, uncertainties. */
export interface GateContext {
  policy: GatePolicy;
  version: number;
  currentAssessments: GateAssessment[];
  previousAssessments: GateAssessment[];
  decisions: GateDecision[];
  uncertainties: GateUncertainty[];
}

/** A snapshot's place, without its graph: what the gate's context is read by. */
type SnapshotPlace = Pick<SnapshotRecord, 'audit_id' | 'workspace_id' | 'repository_id'>;

/** Reads the gate's context for `current` against `previous` (null: none to compare with). */
export async function gateContextOf(
  store: ChangeStore,
  current: SnapshotPlace,
  previous: SnapshotPlace | null,
): Promise<GateContext> {
  const { policy, version } = await store.policy(current.workspace_id);
  const repo = current.repository_id;
  const [currentAssessments, previousAssessments, decisions, uncertainties] = await Promise.all([
    store.assessments(current.audit_id),
    previous ? store.assessments(previous.audit_id) : Promise.resolve([]),
    repo ? store.decisions(current.workspace_id, repo) : Promise.resolve([]),
    repo ? store.uncertainties(current.workspace_id, repo) : Promise.resolve([]),
  ]);
  return { policy, version, currentAssessments, previousAssessments, decisions, uncertainties };
}

/** One side of the gate: a snapshot's id, sources and graph. */
export type GateSide = Pick<SnapshotRecord, 'id' | 'sources' | 'entities' | 'relationships'>;

/**
 * Diffs `previous` (null: none to compare with) against `current` and applies the gate: pure,
 * so that a large snapshot's evaluation can run in the analysis pool (analysis/change-gate.ts).
 */
export function evaluateChangeGate(
  current: GateSide,
  previous: GateSide | null,
  context: GateContext,
  changeRefs: string[],
): ChangeEvaluation {
  const cur = sideOf(current);
  const prev = previous ? sideOf(previous) : null;
  const changes: ChangeItem[] = prev ? diffSnapshots(prev, cur) : [];
  const comparable = prev ? coverageComparable(prev, cur) : false;
  const gate = evaluateGate({
    policy: context.policy,
    policyVersion: context.version,
    previous: prev,
    current: cur,
    changes,
    coverageComparable: comparable,
    previousAssessments: context.previousAssessments,
    currentAssessments: context.currentAssessments,
    decisions: context.decisions,
    uncertainties: context.uncertainties,
    changeRefs,
  });
  return { gate, coverage_comparable: comparable };
}

/** Diffs `previous` (null: none to compare with) against `current` and applies the gate. */
export async function evaluateChanges(
  store: ChangeStore,
  current: SnapshotRecord,
  previous: SnapshotRecord | null,
  changeRefs: string[],
): Promise<ChangeEvaluation> {
  const context = await gateContextOf(store, current, previous);
  return evaluateChangeGate(current, previous, context, changeRefs);
}

/** One change as the contract shows it (ArchitectureChangeItem). */
export function presentChangeItem(item: GatedItem, ownerHint: string | null = null) {
  return {
    change_type: item.change_type,
    key: item.key,
    label: item.label,
    kind: item.kind,
    consequence: item.consequence,
    change_fields: item.change_fields,
    evidence_ids: item.evidence_ids,
    owner_hint: ownerHint,
    source_key: item.source_key,
    target_key: item.target_key,
  };
}

/** The gate as the contract shows it (ArchitectureChangeGate): reasons as sentences. */
export function presentGate(gate: GateResult) {
  return {
    outcome: gate.outcome,
    reasons: gate.reasons.map((r) => r.text),
    policy_enabled: gate.policy_enabled,
  };
}

/** Where a change's first evidence stands (path relative to the repository root). */
export interface GateLocation {
  path: string;
  start_line: number;
  end_line: number;
}

/** An audit's gate as stored and served (AuditGateResponse). */
export interface AuditGate {
  audit_id: string;
  repository_id: string | null;
  current_snapshot_id: string;
  previous_snapshot_id: string | null;
  outcome: ChangeGateOutcome;
  policy_enabled: boolean;
  policy_version: number;
  coverage_comparable: boolean;
  reasons: GateReason[];
  changes: Array<ReturnType<typeof presentChangeItem>>;
  counts: Record<string, number>;
  evaluated_at: string;
}

export interface StoredGate {
  response: AuditGate;
  /** By change key (or `control:<key>`): the location of the evidence it rests on. */
  locations: Record<string, GateLocation>;
}
