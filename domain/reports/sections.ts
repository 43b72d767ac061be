/**
 * The parts of a report people read first, shared by the Markdown and HTML renderings: findings
 * grouped by control (the rationale once per control, then its locations), the top findings, and
 * the open blocking questions. Pure; ordered deterministically so a report renders the same bytes.
 */
import { CONTROL_SEVERITIES } from '../contract/values';
import { isOpenFinding, type AuditReportContent, type ReportFinding } from './report';

/** How many findings the summary names. */
export const TOP_FINDINGS = 5;

export interface FindingGroup {
  control_key: string;
  title: string;
  severity: string;
  /**
   * Said once for the whole group: the detail most of its findings share, without the list of
   * every failing check (the group's rows are that list).
   */
  rationale: string;
  /** That detail as stored: a finding whose own detail differs says so in its row. */
  common_detail: string;
  open: number;
  findings: ReportFinding[];
}

const rank = (severity: string): number => {
  const i = (CONTROL_SEVERITIES as readonly string[]).indexOf(severity);
  // CONTROL_SEVERITIES runs from the most to the least severe; unknown ones last.
  return i < 0 ? CONTROL_SEVERITIES.length : i;
};

const byPlace = (a: ReportFinding, b: ReportFinding): number => {
  const pa = a.locations[0];
  const pb = b.locations[0];
  const key = (f: ReportFinding, l: typeof pa) =>
    `${l?.path ?? ''}\u0000${String(l?.start_line ?? 0).padStart(9, '0')}\u0000${f.fingerprint}`;
  return key(a, pa) < key(b, pb) ? -1 : key(a, pa) > key(b, pb) ? 1 : 0;
};

/** The detail most findings of a group share (ties: the smallest text), said once. */
function commonDetail(findings: ReportFinding[]): string {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.detail, (counts.get(f.detail) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? '';
}

/**
 * A control's rationale without its list of failing checks: `11 of 27 check(s) fail: a; b; c.
 * Control: why` reads `11 of 27 check(s) fail. Control: why` (the rows under it are the list).
 */
export function condensedRationale(text: string): string {
  const m = /^(\d+ of \d+ check\(s\) fail): [\s\S]*?(?:\.\s+(Control: [\s\S]*)|\.?)$/.exec(text);
  if (!m) return text;
  return m[2] ? `${m[1]}. ${m[2]}` : `${m[1]} (listed under Findings).`;
}

/** A finding's title without the control's title before it (the group's heading says it). */
export function titleInGroup(title: string, control: string): string {
  return title.startsWith(`${control}: `) ? title.slice(control.length + 2) : title;
}

/** Findings by control: most severe first, then most open findings, then control key. */
export function findingGroups(r: AuditReportContent): FindingGroup[] {
  const titles = new Map(r.assessments.map((a) => [a.control_key, a.title]));
  const groups = new Map<string, ReportFinding[]>();
  for (const f of r.findings) groups.set(f.control_key, [...(groups.get(f.control_key) ?? []), f]);
  return [...groups.entries()]
    .map(([control_key, list]) => {
      const findings = [...list].sort(byPlace);
      return {
        control_key,
        title: titles.get(control_key) ?? control_key,
        severity: findings[0]?.severity ?? 'low',
        rationale: condensedRationale(commonDetail(findings)),
        common_detail: commonDetail(findings),
        open: findings.filter(isOpenFinding).length,
        findings,
      };
    })
    .sort(
      (a, b) =>
        rank(a.severity) - rank(b.severity) ||
        b.open - a.open ||
        (a.control_key < b.control_key ? -1 : 1),
    );
}

/**
 * The open findings a reader should see first: most severe, then by place, one per control before
 * a second of any (five findings of one control would hide every other control's).
 */
export function topFindings(r: AuditReportContent, n = TOP_FINDINGS): ReportFinding[] {
  const open = r.findings
    .filter(isOpenFinding)
    .sort((a, b) => rank(a.severity) - rank(b.severity) || byPlace(a, b));
  const seen = new Set<string>();
  const first = open.filter((f) => !seen.has(f.control_key) && seen.add(f.control_key));
  const rest = open.filter((f) => !first.includes(f));
  return [...first, ...rest]
    .slice(0, n)
    .sort((a, b) => rank(a.severity) - rank(b.severity) || byPlace(a, b));
}

/** Open (or under investigation) uncertainty cases that block a decision. */
export function blockingQuestions(r: AuditReportContent): AuditReportContent['uncertainty_cases'] {
  return r.uncertainty_cases.filter(
    (u) => u.blocking && (u.state === 'open' || u.state === 'investigating'),
  );
}
