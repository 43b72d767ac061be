/**
 * Comparing two audits of one repository: findings by fingerprint, the architecture by the
 * snapshot diff, and what the comparison cannot tell. Pure and deterministic: the result is
 * sorted, and its `content_sha256` is the SHA-256 of its canonical JSON (RFC 8785), so the same
 * two audits always give the same hash.
 */
import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { diffSnapshots, type SnapshotSide } from '../changes/diff';

export interface ComparedFinding {
  id: string;
  fingerprint: string;
  control_key: string | null;
  title: string;
  severity: string;
}

export interface ComparedAudit {
  id: string;
  status: string;
  commit_sha: string | null;
  completed_at: string | null;
  scanner_only: boolean;
  source_scope: unknown;
  /** Null when the audit produced no architecture snapshot. */
  snapshot: (SnapshotSide & { source_coverage: string }) | null;
  findings: ComparedFinding[];
}

const SOURCE_TYPES = ['code', 'cloud', 'cicd'];

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** SHA-256 (hex) of the RFC 8785 canonical JSON of `value`. */
export function contentSha256(value: unknown): string {
  return crypto
    .createHash('sha256')
    .update(canonicalize(value) ?? 'null')
    .digest('hex');
}

export function compareAudits(baseline: ComparedAudit, candidate: ComparedAudit) {
  const side = (a: ComparedAudit) => ({
    audit_id: a.id,
    status: a.status,
    commit_sha: a.commit_sha,
    completed_at: a.completed_at,
    source_coverage: a.snapshot?.source_coverage ?? '0',
  });

  const limitations: string[] = [];
  for (const [name, a] of [
    ['baseline', baseline],
    ['candidate', candidate],
  ] as const) {
    if (a.status !== 'completed')
      limitations.push(`the ${name} audit is ${a.status}, not completed`);
    if (!a.snapshot) limitations.push(`the ${name} audit has no architecture snapshot`);
    else
      for (const t of SOURCE_TYPES)
        if (!a.snapshot.sources.includes(t))
          limitations.push(`the ${name} audit read no ${t} sources`);
    if (a.scanner_only)
      limitations.push(`the ${name} audit was scanner-only: no model-backed review ran`);
  }
  const sameScope = canonicalize(baseline.source_scope) === canonicalize(candidate.source_scope);
  if (!sameScope)
    limitations.push(
      `the source scopes differ (baseline ${canonicalize(baseline.source_scope)}, candidate ${canonicalize(candidate.source_scope)})`,
    );

  const architectureComparable = baseline.snapshot !== null && candidate.snapshot !== null;
  const sameSources =
    architectureComparable &&
    [...baseline.snapshot!.sources].sort().join(',') ===
      [...candidate.snapshot!.sources].sort().join(',');
  const coverageComparable = sameSources && sameScope;

  const architecture_changes = architectureComparable
    ? diffSnapshots(baseline.snapshot!, candidate.snapshot!).map((c) => ({
        subject: c.subject,
        key: c.key,
        name: c.label,
        operation: c.change_type.slice(c.subject.length + 1),
        evidence_ids: c.evidence_ids,
        source_key: c.source_key,
        target_key: c.target_key,
      }))
    : [];

  const before = new Map(baseline.findings.map((f) => [f.fingerprint, f]));
  const after = new Map(candidate.findings.map((f) => [f.fingerprint, f]));
  const fingerprints = [...new Set([...before.keys(), ...after.keys()])].sort(byString);
  const findings = fingerprints.map((fp) => {
    const b = before.get(fp) ?? null;
    const c = after.get(fp) ?? null;
    const change = !b
      ? 'added'
      : !c
        ? 'resolved'
        : b.severity !== c.severity
          ? 'changed'
          : 'unchanged';
    const shown = (c ?? b)!;
    return {
      change: change as 'added' | 'resolved' | 'changed' | 'unchanged',
      fingerprint: fp,
      control_key: shown.control_key,
      severity: shown.severity,
      title: shown.title,
      baseline_finding_id: b?.id ?? null,
      candidate_finding_id: c?.id ?? null,
    };
  });

  const counts: Record<string, number> = {
    findings_added: 0,
    findings_resolved: 0,
    findings_changed: 0,
    findings_unchanged: 0,
  };
  for (const f of findings) counts[`findings_${f.change}`]! += 1;
  for (const a of architecture_changes) {
    const k = `${a.subject === 'entity' ? 'entities' : 'relationships'}_${a.operation}`;
    counts[k] = (counts[k] ?? 0) + 1;
  }

  return {
    baseline: side(baseline),
    candidate: side(candidate),
    coverage_comparable: coverageComparable,
    architecture_comparable: architectureComparable,
    limitations,
    counts,
    findings,
    architecture_changes,
  };
}
