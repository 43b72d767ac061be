/**
 * Architecture decisions, pure logic shared by the API, the DecisionWorkflow and its activities:
 * the checks of a proposal, the state machine and the requests that move a decision through it
 * (approvals through the one approval model, domain/approvals), and the evaluation of success
 * criteria against an architecture snapshot.
 */
import {
  checkApproval,
  type ApprovalActor,
  type ApprovalPhase,
  type ApprovalRefusal,
} from '../approvals/model';

export type DecisionStatus =
  'proposed' | 'in_review' | 'approved' | 'rejected' | 'implemented' | 'verified' | 'superseded';

/**
 * Moves a person may request through transitionDecision. `verified` is reached only through
 * verification and `superseded` only when a decision naming this one in supersedes_id is
 * approved, so neither appears here. rejected and superseded are terminal.
 */
export const REQUESTABLE_MOVES: Readonly<Record<DecisionStatus, readonly DecisionStatus[]>> = {
  proposed: ['in_review'],
  in_review: ['approved', 'rejected', 'proposed'],
  approved: ['implemented'],
  rejected: [],
  implemented: [],
  verified: [],
  superseded: [],
};

/** States a decision can be superseded from. */
export const SUPERSEDABLE: readonly DecisionStatus[] = ['approved', 'implemented', 'verified'];

export const TERMINAL: readonly DecisionStatus[] = ['rejected', 'superseded'];

/** Moves that need `decisions:approve` and are recorded as approvals. */
export const APPROVAL_MOVES: readonly DecisionStatus[] = ['approved', 'rejected'];

export function allowedMoves(from: DecisionStatus): readonly DecisionStatus[] {
  return REQUESTABLE_MOVES[from];
}

export function canMove(from: DecisionStatus, to: DecisionStatus): boolean {
  return REQUESTABLE_MOVES[from].includes(to);
}

/** Where a decision in `status` stands toward approval. */
export function approvalPhase(status: DecisionStatus): ApprovalPhase {
  if (status === 'in_review') return 'awaiting';
  return status === 'proposed' ? 'before' : 'decided';
}

/** Why a requested move is refused, or null when it may go ahead. */
export type MoveRefusal =
  | { code: 'invalid_transition'; current: DecisionStatus; allowed: readonly DecisionStatus[] }
  | { code: 'unknown_option'; optionIds: readonly string[] }
  | ApprovalRefusal;

export interface MoveRequest {
  to: DecisionStatus;
  selectedOptionId: string | null;
  actorId: string;
}

export interface DecisionFacts {
  status: DecisionStatus;
  createdBy: string;
  optionIds: readonly string[];
  /** Members who already voted in the current review round. */
  votedThisRound: readonly string[];
}

/** Who asks for a move, as the API authenticated them. */
export interface DecisionActor extends ApprovalActor {
  scopes: string[];
}

/** A requested move as the API hands it to the DecisionWorkflow and its activity. */
export interface TransitionRequest {
  to: DecisionStatus;
  rationale: string;
  selectedOptionId: string | null;
  /** From If-Match; null when the client sent none. */
  expectedVersion: number | null;
  actor: DecisionActor;
}

/** The checks both the API and the workflow's Update validator apply to a requested move. */
export function checkMove(facts: DecisionFacts, move: MoveRequest): MoveRefusal | null {
  if (move.to === 'approved' || move.to === 'rejected') {
    const refused = checkApproval(
      {
        phase: approvalPhase(facts.status),
        status: facts.status,
        authorId: facts.createdBy,
        votedThisRound: facts.votedThisRound,
      },
      { outcome: move.to, actorId: move.actorId },
    );
    if (refused) return refused;
    if (
      move.to === 'approved' &&
      (!move.selectedOptionId || !facts.optionIds.includes(move.selectedOptionId))
    )
      return { code: 'unknown_option', optionIds: facts.optionIds };
    return null;
  }
  if (!canMove(facts.status, move.to))
    return {
      code: 'invalid_transition',
      current: facts.status,
      allowed: allowedMoves(facts.status),
    };
  return null;
}

// ---------------------------------------------------------------------------------------------
// Proposals

/** A proposal as far as its own consistency goes (what no schema can state). */
export interface ProposalShape {
  options: ReadonlyArray<{ id: string }>;
  success_criteria: ReadonlyArray<{
    id: string;
    check: { kind: string; field?: string; value?: unknown };
  }>;
}

/**
 * What is wrong with a proposal in itself, each with the JSON pointer of the field: option ids
 * and criterion ids are unique, and attribute_equals names a field and a value. Whether the
 * snapshot, owner, evidence and superseded decision exist is for the caller to check.
 */
export function proposalProblems(
  proposal: ProposalShape,
): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  const err = (path: string, message: string) => problems.push({ path, message });
  const firstSeen = new Map<string, number>();
  proposal.options.forEach((o, i) => {
    const before = firstSeen.get(o.id);
    if (before !== undefined)
      err(`/options/${i}/id`, `duplicates the id of option ${before}: ${JSON.stringify(o.id)}`);
    else firstSeen.set(o.id, i);
  });
  const criterionIds = new Map<string, number>();
  proposal.success_criteria.forEach((c, i) => {
    const before = criterionIds.get(c.id);
    if (before !== undefined)
      err(
        `/success_criteria/${i}/id`,
        `duplicates the id of criterion ${before}: ${JSON.stringify(c.id)}`,
      );
    else criterionIds.set(c.id, i);
    if (c.check.kind === 'attribute_equals') {
      if (c.check.field === undefined)
        err(`/success_criteria/${i}/check/field`, 'is required for attribute_equals');
      if (!('value' in c.check))
        err(`/success_criteria/${i}/check/value`, 'is required for attribute_equals');
    }
  });
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Success criteria

export interface SuccessCheck {
  kind:
    | 'entity_present'
    | 'entity_absent'
    | 'relationship_present'
    | 'relationship_absent'
    | 'attribute_equals';
  key: string;
  field?: string;
  value?: unknown;
}

export interface CriterionInput {
  id: string;
  description: string;
  check: SuccessCheck;
}

export interface EvaluatedCriterion extends CriterionInput {
  status: 'pending' | 'met' | 'unmet' | 'unknown';
  evaluated_at: string | null;
  evidence_ids: string[];
}

export interface SnapshotItem {
  canonical_key: string;
  kind?: string;
  name?: string;
  attributes?: Record<string, unknown>;
  evidence_ids?: string[];
}

export interface SnapshotGraph {
  id: string;
  entities: readonly SnapshotItem[];
  relationships: readonly SnapshotItem[];
}

export interface Verification {
  snapshot_id: string;
  outcome: 'verified' | 'failed' | 'inconclusive';
  criteria: EvaluatedCriterion[];
  evaluated_at: string;
}

export function pendingCriteria(input: readonly CriterionInput[]): EvaluatedCriterion[] {
  return input.map((c) => ({ ...c, status: 'pending', evaluated_at: null, evidence_ids: [] }));
}

/** Structural equality of JSON values (key order does not matter). No Node imports: workflows use this module. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.prototype.hasOwnProperty.call(b, k) &&
        jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

/** The value of `field` on an entity or relationship: its attributes first, then kind/name. */
function fieldOf(item: SnapshotItem, field: string): { found: boolean; value: unknown } {
  if (item.attributes && Object.prototype.hasOwnProperty.call(item.attributes, field))
    return { found: true, value: item.attributes[field] };
  if (field === 'kind' && item.kind !== undefined) return { found: true, value: item.kind };
  if (field === 'name' && item.name !== undefined) return { found: true, value: item.name };
  return { found: false, value: undefined };
}

/** Evaluates one criterion: met/unmet with the evidence of the item the check looked at. */
export function evaluateCriterion(
  c: CriterionInput,
  graph: SnapshotGraph,
  at: string,
): EvaluatedCriterion {
  const { check } = c;
  const entity = graph.entities.find((e) => e.canonical_key === check.key);
  const relationship = graph.relationships.find((r) => r.canonical_key === check.key);
  const result = (status: EvaluatedCriterion['status'], item?: SnapshotItem) => ({
    ...c,
    status,
    evaluated_at: at,
    evidence_ids: [...(item?.evidence_ids ?? [])],
  });
  switch (check.kind) {
    case 'entity_present':
      return entity ? result('met', entity) : result('unmet');
    case 'entity_absent':
      return entity ? result('unmet', entity) : result('met');
    case 'relationship_present':
      return relationship ? result('met', relationship) : result('unmet');
    case 'relationship_absent':
      return relationship ? result('unmet', relationship) : result('met');
    case 'attribute_equals': {
      const item = entity ?? relationship;
      if (check.field === undefined || !('value' in check)) return result('unknown', item);
      if (!item) return result('unmet');
      const got = fieldOf(item, check.field);
      return result(got.found && jsonEqual(got.value, check.value) ? 'met' : 'unmet', item);
    }
  }
}

/** Evaluates every criterion: all met -> verified; any unmet -> failed; otherwise inconclusive. */
export function verify(
  criteria: readonly CriterionInput[],
  graph: SnapshotGraph,
  at: Date,
): Verification {
  const iso = at.toISOString();
  const evaluated = criteria.map((c) =>
    evaluateCriterion({ id: c.id, description: c.description, check: c.check }, graph, iso),
  );
  const outcome = evaluated.every((c) => c.status === 'met')
    ? 'verified'
    : evaluated.some((c) => c.status === 'unmet')
      ? 'failed'
      : 'inconclusive';
  return { snapshot_id: graph.id, outcome, criteria: evaluated, evaluated_at: iso };
}

/** `0007-use-postgres-for-ledger.md`. */
export function briefFilename(number: number, title: string): string {
  const slug =
    title
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60)
      .replace(/-+$/g, '') || 'decision';
  return `${String(number).padStart(4, '0')}-${slug}.md`;
}
