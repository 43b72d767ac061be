/**
 * The change gate: a workspace's policy applied to the changes between two snapshots.
 *
 * Every change item gets a consequence from the policy's rules (the strictest rule that
 * matches). The outcome, in order of precedence: `blocked` when a blocked change rests on
 * evidence at or above the confidence floor (whatever the other changes say); else
 * `insufficient_evidence` when the evidence cannot carry a verdict (no previous snapshot, source
 * coverage that differs between the two, a reviewed or blocked change below the floor, or a
 * blocking uncertainty case on a changed item); else `review`; else `pass`. Approved decisions take part: a change whose key a
 * decision names (or whose audit carries the decision's candidate change id) is allowed, and a
 * change that leaves an approved decision's success criterion unmet is blocked. Pure.
 */
import canonicalize from 'canonicalize';
import type {
  ArchitectureChangeType,
  ChangeConsequence,
  ChangeGateOutcome,
} from '../contract/values';
import type { CriterionInput } from '../decisions/rules';
import { evaluateCriterion } from '../decisions/rules';
import type { ChangeItem, SnapshotSide } from './diff';
import { serviceCycles } from './diff';

export const GATE_CONDITIONS = [
  'change',
  'service_cycle_introduced',
  'shared_datastore_new_client',
  'control_failure_introduced',
] as const;
export type GateCondition = (typeof GATE_CONDITIONS)[number];

export interface GateRule {
  id: string;
  description: string;
  condition: GateCondition;
  consequence: Exclude<ChangeConsequence, 'informational'>;
  /** `change` rules: which change types, item kinds, and (relationships) endpoint kinds match. */
  change_types?: ArchitectureChangeType[];
  kinds?: string[];
  source_kinds?: string[];
  target_kinds?: string[];
  /** `change` rules: attributes the item must carry with these values. */
  attributes?: Record<string, string | number | boolean>;
  /** `change` rules: only items at or above this confidence. */
  min_confidence?: number;
  /** `control_failure_introduced`: the lowest severity that counts. */
  min_severity?: 'low' | 'medium' | 'high';
}

export interface GatePolicy {
  enabled: boolean;
  /** Below this confidence a change cannot carry a verdict by itself. */
  confidence_floor: number;
  rules: GateRule[];
}

/** The policy of a workspace that never set one (docs/decisions.md, change gate). */
export const DEFAULT_GATE_POLICY: GatePolicy = {
  enabled: true,
  confidence_floor: 0.5,
  rules: [
    {
      id: 'external-egress-added',
      description: 'A new call to an external system needs a review.',
      condition: 'change',
      consequence: 'review',
      change_types: ['relationship_added'],
      target_kinds: ['external'],
    },
    {
      id: 'datastore-removed',
      description: 'Removing a datastore, queue or bucket is blocked until a decision allows it.',
      condition: 'change',
      consequence: 'blocked',
      change_types: ['entity_removed'],
      kinds: ['datastore', 'queue', 'bucket'],
    },
    {
      id: 'shared-datastore-new-client',
      description:
        'A service newly connecting to a datastore another service already uses is blocked (evidence does not tell reads from writes, so every new client counts as a possible writer).',
      condition: 'shared_datastore_new_client',
      consequence: 'blocked',
    },
    {
      id: 'service-cycle-introduced',
      description: 'A new cycle of service calls is blocked.',
      condition: 'service_cycle_introduced',
      consequence: 'blocked',
    },
    {
      id: 'high-severity-control-failure',
      description: 'A control of high severity that newly fails is blocked.',
      condition: 'control_failure_introduced',
      consequence: 'blocked',
      min_severity: 'high',
    },
    {
      id: 'service-added',
      description: 'A new service needs a review.',
      condition: 'change',
      consequence: 'review',
      change_types: ['entity_added'],
      kinds: ['service'],
    },
  ],
};

/**
 * Whether a policy is the built-in default: same switch, floor and rules (rule order included;
 * key order not, as stored JSON reorders keys).
 */
export function isDefaultGatePolicy(policy: GatePolicy): boolean {
  return (
    policy.enabled === DEFAULT_GATE_POLICY.enabled &&
    policy.confidence_floor === DEFAULT_GATE_POLICY.confidence_floor &&
    canonicalize(policy.rules) === canonicalize(DEFAULT_GATE_POLICY.rules)
  );
}

/** What is wrong with a policy beyond its schema, each with the JSON pointer of the field. */
export function policyProblems(policy: GatePolicy): Array<{ pointer: string; message: string }> {
  const out: Array<{ pointer: string; message: string }> = [];
  const seen = new Map<string, number>();
  policy.rules.forEach((r, i) => {
    const at = (f: string) => `/rules/${i}/${f}`;
    const before = seen.get(r.id);
    if (before !== undefined) out.push({ pointer: at('id'), message: `duplicates rule ${before}` });
    else seen.set(r.id, i);
    const changeOnly = ['change_types', 'kinds', 'source_kinds', 'target_kinds', 'attributes'];
    if (r.condition !== 'change')
      for (const f of changeOnly)
        if ((r as unknown as Record<string, unknown>)[f] !== undefined)
          out.push({ pointer: at(f), message: `applies to condition "change" only` });
    if (r.condition !== 'control_failure_introduced' && r.min_severity !== undefined)
      out.push({
        pointer: at('min_severity'),
        message: 'applies to condition "control_failure_introduced" only',
      });
    if (r.condition === 'control_failure_introduced' && r.min_severity === undefined)
      out.push({ pointer: at('min_severity'), message: 'is required for this condition' });
  });
  return out;
}

/** An assessment of one audit, as the gate reads it. */
export interface GateAssessment {
  control_key: string;
  title: string;
  severity: string;
  status: string;
  evidence_ids: string[];
  exception_id?: string | null;
}

/** An approved or implemented decision of the repository. */
export interface GateDecision {
  id: string;
  number: number;
  title: string;
  status: string;
  affected_entity_keys: string[];
  affected_relationship_keys: string[];
  candidate_change_id: string | null;
  success_criteria: CriterionInput[];
}

export interface GateUncertainty {
  id: string;
  subject_key: string;
  blocking: boolean;
  state: string;
}

export interface GateInput {
  policy: GatePolicy;
  policyVersion: number;
  /** Null when the repository has no earlier comparable snapshot. */
  previous: (SnapshotSide & { snapshot_id: string }) | null;
  current: SnapshotSide & { snapshot_id: string };
  changes: ChangeItem[];
  coverageComparable: boolean;
  previousAssessments: GateAssessment[];
  currentAssessments: GateAssessment[];
  decisions: GateDecision[];
  uncertainties: GateUncertainty[];
  /** The references the audit was started for (branch, origin ref): a decision's candidate change. */
  changeRefs: string[];
}

export interface GatedItem extends ChangeItem {
  consequence: ChangeConsequence;
  /** The rules (or decisions) that set the consequence. */
  rule_ids: string[];
}

export interface GateReason {
  code: string;
  text: string;
  rule_id: string | null;
  key: string | null;
  evidence_ids: string[];
}

export interface GateResult {
  outcome: ChangeGateOutcome;
  reasons: GateReason[];
  policy_enabled: boolean;
  policy_version: number;
  items: GatedItem[];
  counts: Record<string, number>;
}

const SEVERITY_RANK: Record<string, number> = { low: 1, medium: 2, high: 3, critical: 4 };
const CONSEQUENCE_RANK: Record<ChangeConsequence, number> = {
  informational: 0,
  review: 1,
  blocked: 2,
};

function kindOf(side: SnapshotSide | null, key: string | null): string | null {
  if (!side || !key) return null;
  return side.entities.find((e) => e.canonical_key === key)?.kind ?? null;
}

function matchesChangeRule(rule: GateRule, item: ChangeItem, input: GateInput): boolean {
  if (rule.change_types && !rule.change_types.includes(item.change_type)) return false;
  if (rule.kinds && !rule.kinds.includes(item.kind)) return false;
  const endpointSide = item.current ? input.current : input.previous;
  if (rule.source_kinds) {
    const k = kindOf(endpointSide, item.source_key);
    if (!k || !rule.source_kinds.includes(k)) return false;
  }
  if (rule.target_kinds) {
    const k = kindOf(endpointSide, item.target_key);
    if (!k || !rule.target_kinds.includes(k)) return false;
  }
  if (rule.attributes) {
    const attrs = (item.current ?? item.previous)!.attributes;
    for (const [k, v] of Object.entries(rule.attributes)) if (attrs[k] !== v) return false;
  }
  if (rule.min_confidence !== undefined && item.confidence < rule.min_confidence) return false;
  return true;
}

/** The relationship items that give a datastore a new client while another one already used it. */
function sharedDatastoreNewClients(input: GateInput): Set<string> {
  const out = new Set<string>();
  if (!input.previous) return out;
  const previous = input.previous;
  const stores = new Set(
    input.current.entities
      .filter((e) => ['datastore', 'queue', 'bucket'].includes(e.kind))
      .map((e) => e.canonical_key),
  );
  const clientsBefore = new Map<string, Set<string>>();
  for (const r of previous.relationships) {
    if (!r.target_key || !r.source_key) continue;
    const set = clientsBefore.get(r.target_key) ?? new Set<string>();
    set.add(r.source_key);
    clientsBefore.set(r.target_key, set);
  }
  for (const item of input.changes) {
    if (item.change_type !== 'relationship_added' || !item.target_key || !item.source_key) continue;
    if (!stores.has(item.target_key)) continue;
    const before = clientsBefore.get(item.target_key);
    if (before && [...before].some((c) => c !== item.source_key)) out.add(item.key);
  }
  return out;
}

/** The added service relationships that close a cycle the previous snapshot did not have. */
function cycleClosers(input: GateInput): Map<string, string> {
  const out = new Map<string, string>();
  if (!input.previous) return out;
  const before = serviceCycles(input.previous);
  for (const cycle of serviceCycles(input.current)) {
    if (before.has(cycle)) continue;
    const members = new Set(cycle.split(','));
    for (const item of input.changes)
      if (
        item.subject === 'relationship' &&
        (item.change_type === 'relationship_added' ||
          item.change_type === 'relationship_changed') &&
        item.source_key &&
        item.target_key &&
        members.has(item.source_key) &&
        members.has(item.target_key)
      )
        out.set(item.key, cycle);
  }
  return out;
}

function describe(item: ChangeItem): string {
  return `${item.change_type} ${item.key}`;
}

/** Applies the policy, the decisions and the evidence floor to the changes. */
export function evaluateGate(input: GateInput): GateResult {
  const { policy } = input;
  const reasons: GateReason[] = [];
  const items: GatedItem[] = input.changes.map((c) => ({
    ...c,
    consequence: 'informational',
    rule_ids: [],
  }));
  const raise = (item: GatedItem, rule: GateRule, text: string) => {
    if (CONSEQUENCE_RANK[rule.consequence] > CONSEQUENCE_RANK[item.consequence])
      item.consequence = rule.consequence;
    item.rule_ids.push(rule.id);
    reasons.push({
      code: rule.consequence,
      text,
      rule_id: rule.id,
      key: item.key,
      evidence_ids: item.evidence_ids.slice(0, 20),
    });
  };

  if (policy.enabled) {
    const shared = sharedDatastoreNewClients(input);
    const closers = cycleClosers(input);
    for (const rule of policy.rules) {
      for (const item of items) {
        if (rule.condition === 'change' && matchesChangeRule(rule, item, input))
          raise(
            item,
            rule,
            `${rule.consequence}: ${describe(item)} (rule ${rule.id}: ${rule.description})`,
          );
        if (rule.condition === 'shared_datastore_new_client' && shared.has(item.key))
          raise(
            item,
            rule,
            `${rule.consequence}: ${item.source_key} newly connects to ${item.target_key}, which other services already use (rule ${rule.id})`,
          );
        if (rule.condition === 'service_cycle_introduced' && closers.has(item.key))
          raise(
            item,
            rule,
            `${rule.consequence}: ${describe(item)} closes the service cycle ${closers.get(item.key)} (rule ${rule.id})`,
          );
      }
      if (rule.condition === 'control_failure_introduced' && input.previous) {
        const floor = SEVERITY_RANK[rule.min_severity ?? 'high'] ?? 3;
        const failedBefore = new Set(
          input.previousAssessments.filter((a) => a.status === 'fail').map((a) => a.control_key),
        );
        for (const a of input.currentAssessments) {
          if (a.status !== 'fail' || failedBefore.has(a.control_key)) continue;
          if ((SEVERITY_RANK[a.severity] ?? 0) < floor || a.exception_id) continue;
          reasons.push({
            code: rule.consequence,
            text: `${rule.consequence}: control ${a.control_key} (${a.severity}) newly fails: ${a.title} (rule ${rule.id})`,
            rule_id: rule.id,
            key: `control:${a.control_key}`,
            evidence_ids: a.evidence_ids.slice(0, 20),
          });
        }
      }
    }
  }

  // Decisions in the loop: an approved change is allowed; a criterion left unmet is blocked.
  const changedKeys = new Set(items.map((i) => i.key));
  for (const d of input.decisions) {
    const allowsAll =
      d.candidate_change_id !== null && input.changeRefs.includes(d.candidate_change_id);
    const named = new Set([...d.affected_entity_keys, ...d.affected_relationship_keys]);
    for (const item of items) {
      if (item.consequence === 'informational') continue;
      if (!allowsAll && !named.has(item.key)) continue;
      item.consequence = 'informational';
      item.rule_ids.push(`decision:${d.id}`);
      for (const r of reasons)
        if (r.key === item.key && (r.code === 'review' || r.code === 'blocked')) r.code = 'allowed';
      reasons.push({
        code: 'allowed',
        text: `allowed: ${describe(item)} is covered by ${d.status} decision ${d.number} "${d.title}" (${d.id})`,
        rule_id: null,
        key: item.key,
        evidence_ids: [],
      });
    }
    for (const c of d.success_criteria) {
      if (!changedKeys.has(c.check.key)) continue;
      const evaluated = evaluateCriterion(
        c,
        { id: input.current.snapshot_id, ...input.current },
        '1970-01-01T00:00:00.000Z',
      );
      if (evaluated.status !== 'unmet') continue;
      const item = items.find((i) => i.key === c.check.key)!;
      item.consequence = 'blocked';
      item.rule_ids.push(`decision:${d.id}`);
      reasons.push({
        code: 'blocked',
        text: `blocked: ${describe(item)} contradicts criterion "${c.id}" (${c.description}) of ${d.status} decision ${d.number} "${d.title}" (${d.id})`,
        rule_id: null,
        key: item.key,
        evidence_ids: item.evidence_ids.slice(0, 20),
      });
    }
  }

  // What the evidence cannot carry.
  const insufficient: GateReason[] = [];
  const insufficientReason = (text: string, key: string | null = null, ids: string[] = []) =>
    insufficient.push({
      code: 'insufficient_evidence',
      text,
      rule_id: null,
      key,
      evidence_ids: ids,
    });
  if (!input.previous)
    insufficientReason(
      'insufficient_evidence: no earlier completed snapshot of this repository and branch to compare with (first audit)',
    );
  else if (!input.coverageComparable)
    insufficientReason(
      `insufficient_evidence: source coverage differs (previous read ${[...input.previous.sources].sort().join(', ') || 'nothing'}; current read ${[...input.current.sources].sort().join(', ') || 'nothing'})`,
    );
  /** Keys whose verdict the evidence cannot carry (below the floor, or an open blocking case). */
  const doubtful = new Set<string>();
  for (const item of items) {
    if (item.consequence === 'informational') continue;
    if (item.confidence < policy.confidence_floor) {
      doubtful.add(item.key);
      insufficientReason(
        `insufficient_evidence: ${describe(item)} rests on evidence of confidence ${item.confidence.toFixed(2)}, below the policy's floor ${policy.confidence_floor}`,
        item.key,
        item.evidence_ids.slice(0, 20),
      );
    }
  }
  const touched = new Map<string, string[]>();
  const touch = (key: string, itemKey: string) =>
    touched.set(key, [...(touched.get(key) ?? []), itemKey]);
  for (const item of items) {
    touch(item.key, item.key);
    if (item.source_key) touch(item.source_key, item.key);
    if (item.target_key) touch(item.target_key, item.key);
  }
  for (const u of input.uncertainties) {
    if (!u.blocking || (u.state !== 'open' && u.state !== 'investigating')) continue;
    const on = touched.get(u.subject_key);
    if (!on) continue;
    for (const k of on) doubtful.add(k);
    insufficientReason(
      `insufficient_evidence: blocking uncertainty case ${u.id} is open on changed item ${u.subject_key}`,
      u.subject_key,
    );
  }

  // Precedence (docs/decisions.md, verdicts that hold): a blocked change the evidence carries
  // blocks whatever else is unsure; doubt only wins over review and pass.
  const active = reasons.filter((r) => r.code === 'review' || r.code === 'blocked');
  const wellEvidenced = (r: GateReason) => r.key === null || !doubtful.has(r.key);
  let outcome: ChangeGateOutcome = 'pass';
  if (active.some((r) => r.code === 'blocked' && wellEvidenced(r))) outcome = 'blocked';
  else if (insufficient.length > 0) outcome = 'insufficient_evidence';
  else if (active.some((r) => r.code === 'review')) outcome = 'review';

  const counts: Record<string, number> = {};
  for (const item of items) counts[item.change_type] = (counts[item.change_type] ?? 0) + 1;
  for (const c of ['informational', 'review', 'blocked'] as const)
    counts[c] = items.filter((i) => i.consequence === c).length;

  return {
    outcome,
    reasons: [...insufficient, ...reasons],
    policy_enabled: policy.enabled,
    policy_version: input.policyVersion,
    items,
    counts,
  };
}
