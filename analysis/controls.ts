/**
 * The built-in control catalog and its assessment. Each control family declares its controls
 * beside their evaluators (analysis/controls/ci.ts, containers.ts, storage.ts, supply.ts,
 * architecture.ts; shapes in catalog.ts); this module gathers them and assesses. Pure and deterministic: the same entities,
 * relationships, evidence and file list always give the same assessments, in the same order (by
 * control key), whatever order the inputs arrive in.
 *
 * How a control is assessed. Each control turns the inputs into checks: one per subject it looks
 * at (a third-party action use, a container, a Dockerfile, a datastore...). A check is `pass`,
 * `fail` or `unknown` (the attribute it needs is absent or null) and belongs to one requirement.
 * - not_applicable: no checks at all (nothing the control looks at exists, e.g. no CI workflow).
 * - insufficient_evidence: every check is unknown.
 * - fail: any check on a non-advisory requirement fails.
 * - partial: no failure, but some checks are unknown (the verdict holds only for what was seen).
 * - pass: otherwise. Advisory requirements (e.g. "images pinned by digest") are reported on their
 *   own but never fail or downgrade the control.
 * Requirement status: not_applicable without checks, unmet if any check fails, unknown if any
 * is unknown, else met.
 *
 * Confidence (decimal, 2 places): not_applicable 0.80 (absence is only as good as the coverage);
 * insufficient_evidence 0.00; fail 0.95 (a failing observation is direct evidence); pass and
 * partial 0.50 + 0.45 x (known checks / all checks), so a full pass is 0.95.
 *
 * Finding fingerprint: sha256 (hex) of `control_key` and the stable subject, joined with NUL.
 * For evidence-based findings the subject is the evidence's path, evidence_kind, subject_key,
 * object_key and a per-control discriminator (container name, variable name, workflow job...);
 * for graph findings it is the entity key(s) (the shared datastore, the sorted members of a
 * cycle); for owners-declared it is the literal `CODEOWNERS`. Evidence ids, line numbers and
 * content hashes are left out on purpose, so a finding keeps its fingerprint across audits of
 * unchanged (or merely shifted) code. Findings with the same fingerprint are merged.
 *
 * input_hash: sha256 of the sorted lines `<evidence ids>\t<relevant facts as canonical JSON>`,
 * one line per check.
 */
import crypto from 'node:crypto';
import { compareStrings, uniqueSorted } from './shared/text';
import { ARCHITECTURE_CONTROLS } from './controls/architecture';
import type {
  AssessedRequirement,
  Assessment,
  AssessmentStatus,
  Control,
  ControlInput,
  ControlRequirement,
  ControlSpec,
  Finding,
  RequirementStatus,
} from './controls/catalog';
import { compareLocation, type Check, type Context } from './controls/check';
import { CI_CONTROLS } from './controls/ci';
import { CONTAINER_CONTROLS } from './controls/containers';
import { scopeNote } from './controls/notes';
import { STORAGE_CONTROLS } from './controls/storage';
import { SUPPLY_CONTROLS } from './controls/supply';

export type {
  AssessedRequirement,
  Assessment,
  AssessmentStatus,
  Control,
  ControlDomain,
  ControlInput,
  ControlRequirement,
  Finding,
  RequirementStatus,
  Severity,
} from './controls/catalog';

/**
 * Bumped when a rule changes what a control finds. 2026.11.2 (issue 30): compose override
 * fragments and test compose files, .env and appsettings secrets, composite actions, unplaced
 * deployment variants. 2026.11.3 (issue 30): artifact-carrier and test-runner Dockerfiles nothing
 * deploys, registry storage modules, datastore owners (consoles, schema tools, separate Aspire
 * application models), telemetry collectors' probes in cycles.
 */
export const CONTROL_CATALOG_VERSION = '2026.11.3';

/** Every control, family by family (analysis/controls/<family>.ts), in catalog order. */
const SPECS: ControlSpec[] = [
  ...CI_CONTROLS,
  ...CONTAINER_CONTROLS,
  ...STORAGE_CONTROLS,
  ...SUPPLY_CONTROLS,
  ...ARCHITECTURE_CONTROLS,
];

export const CONTROLS: Control[] = SPECS.map((s) => s.control);

const EVALUATORS = new Map(SPECS.map((s) => [s.control.key, s.evaluate]));
const NOT_APPLICABLE_WHY = new Map(SPECS.map((s) => [s.control.key, s.notApplicable]));

const sha256 = (s: string): string => crypto.createHash('sha256').update(s).digest('hex');

/** JSON with object keys sorted, so equal facts always hash the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return v === undefined ? 'null' : JSON.stringify(v);
}

const fixed2 = (n: number): string => (Math.round(n * 100) / 100).toFixed(2);

function requirementOf(req: ControlRequirement, checks: Check[]): AssessedRequirement {
  const mine = checks.filter((c) => c.requirement === req.key);
  const fails = mine.filter((c) => c.verdict === 'fail');
  const unknown = mine.filter((c) => c.verdict === 'unknown');
  const status: RequirementStatus =
    mine.length === 0
      ? 'not_applicable'
      : fails.length > 0
        ? 'unmet'
        : unknown.length > 0
          ? 'unknown'
          : 'met';
  const advisory = req.advisory ? ' (advisory: does not affect the control status)' : '';
  const rationale =
    status === 'not_applicable'
      ? 'nothing to check'
      : status === 'unmet'
        ? `${fails.length} of ${mine.length} failing: ${uniqueSorted(fails.map((c) => c.title)).join('; ')}${advisory}`
        : status === 'unknown'
          ? `${unknown.length} of ${mine.length} without the needed facts${advisory}`
          : `all ${mine.length} checked subject(s) comply`;
  return {
    key: req.key,
    description: req.description,
    status,
    evidence_ids: uniqueSorted(mine.flatMap((c) => c.evidence_ids)),
    rationale,
  };
}

function assessOne(control: Control, ctx: Context): Assessment {
  const evaluate = EVALUATORS.get(control.key);
  const checks = (evaluate ? evaluate(ctx) : []).sort(
    (a, b) => compareStrings(a.requirement, b.requirement) || compareStrings(a.subject, b.subject),
  );
  const advisory = new Set(control.requirements.filter((r) => r.advisory).map((r) => r.key));
  const binding = checks.filter((c) => !advisory.has(c.requirement));
  const fails = binding.filter((c) => c.verdict === 'fail');
  const unknown = binding.filter((c) => c.verdict === 'unknown');
  const status: AssessmentStatus =
    binding.length === 0
      ? 'not_applicable'
      : unknown.length === binding.length
        ? 'insufficient_evidence'
        : fails.length > 0
          ? 'fail'
          : unknown.length > 0
            ? 'partial'
            : 'pass';
  const known = binding.length - unknown.length;
  const confidence =
    status === 'not_applicable'
      ? 0.8
      : status === 'insufficient_evidence'
        ? 0
        : status === 'fail'
          ? 0.95
          : 0.5 + (0.45 * known) / binding.length;
  const rationale =
    status === 'not_applicable'
      ? `Not applicable: ${NOT_APPLICABLE_WHY.get(control.key) ?? 'nothing to check'}.`
      : status === 'insufficient_evidence'
        ? `All ${binding.length} subject(s) lack the facts this control needs.`
        : status === 'fail'
          ? `${fails.length} of ${binding.length} check(s) fail: ${uniqueSorted(fails.map((c) => c.title)).join('; ')}.`
          : status === 'partial'
            ? `No failure among ${known} checked subject(s); ${unknown.length} could not be checked.`
            : `All ${binding.length} check(s) pass.`;

  const findings = new Map<string, Finding>();
  for (const c of fails) {
    const fingerprint = sha256(`${control.key}\u0000${c.subject}`);
    const prev = findings.get(fingerprint);
    if (prev) {
      prev.evidence_ids = uniqueSorted([...prev.evidence_ids, ...c.evidence_ids]);
      if (c.location && (!prev.location || compareLocation(c.location, prev.location) < 0))
        prev.location = c.location;
      continue;
    }
    findings.set(fingerprint, {
      fingerprint,
      title: `${control.title}: ${c.title}`,
      severity: control.severity,
      entity_key: c.entity_key,
      evidence_ids: [...c.evidence_ids],
      location: c.location,
    });
  }

  const inputLines = checks
    .map((c) => `${c.requirement}\t${c.evidence_ids.join(',')}\t${canonical(c.facts)}`)
    .sort(compareStrings);
  return {
    control_key: control.key,
    title: control.title,
    description: control.description,
    domain: control.domain,
    severity: control.severity,
    status,
    confidence: fixed2(confidence),
    rationale,
    applicability: status === 'not_applicable' ? 'not_applicable' : 'applicable',
    applicability_rationale:
      (status === 'not_applicable'
        ? (NOT_APPLICABLE_WHY.get(control.key) ?? 'nothing to check')
        : `${checks.length} check(s) on subjects this control covers`) +
      scopeNote(control.key, ctx),
    evidence_ids: uniqueSorted(checks.flatMap((c) => c.evidence_ids)),
    failing_evidence_ids: uniqueSorted(fails.flatMap((c) => c.evidence_ids)),
    requirements: control.requirements.map((r) => requirementOf(r, checks)),
    input_hash: sha256(`${CONTROL_CATALOG_VERSION}\n${control.key}\n${inputLines.join('\n')}`),
    findings: [...findings.values()].sort((a, b) => compareStrings(a.fingerprint, b.fingerprint)),
  };
}

/** Assesses every catalog control; output ordered by control key. */
export function assessControls(input: ControlInput): Assessment[] {
  const evidence = [...input.evidence].sort(
    (a, b) => compareLocation(a.location, b.location) || compareStrings(a.id, b.id),
  );
  const entities = [...input.entities].sort((a, b) =>
    compareStrings(a.canonical_key, b.canonical_key),
  );
  const relationships = [...input.relationships]
    .sort((a, b) => compareStrings(a.canonical_key, b.canonical_key))
    .map((r) => ({ ...r, evidence_ids: [...r.evidence_ids].sort(compareStrings) }));
  const entityOf = new Map<string, string>();
  for (const e of entities)
    for (const id of e.evidence_ids) if (!entityOf.has(id)) entityOf.set(id, e.canonical_key);
  const ctx: Context = {
    evidence,
    byId: new Map(evidence.map((e) => [e.id, e])),
    entityOf,
    entities,
    relationships,
    files: [...input.files].sort(compareStrings),
  };
  return [...CONTROLS].sort((a, b) => compareStrings(a.key, b.key)).map((c) => assessOne(c, ctx));
}
