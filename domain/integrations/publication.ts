/**
 * What an audit publishes back to its forge: a commit status (state and a one-line summary) or a
 * GitHub check run (a conclusion, a Markdown summary and an annotation on the evidence of each
 * blocked or reviewed change) and, for a pull request, one comment in Markdown kept up to date in
 * place. Every string that comes
 * from the audited repository (change keys, labels, reasons, owners, paths, branch names) goes
 * through domain/output/markdown.ts, so the comment shows it as text and nothing else.
 */
import type { ChangeGateOutcome } from '../contract/values';
import type { AuditGate, GateLocation } from '../changes/service';
import { mdCode, mdText } from '../output/markdown';
import { plainLine, plainText } from '../output/plain';
import type { Provider } from './webhooks';

/** The status context (GitHub) or name (GitLab) our statuses are posted under. */
export const STATUS_CONTEXT = 'archaudit/architecture-gate';

/** The hidden first line of our comment: how a retried post finds the comment it already made. */
export const commentMarker = (integrationId: string): string =>
  `<!-- archaudit:gate integration=${integrationId} -->`;

/** The description of the status posted while the audit runs. */
export const PENDING_DESCRIPTION = 'architecture audit running';

/** Gate outcomes that may fail a status (pass never does). */
export const FAILING_OUTCOMES = ['review', 'blocked', 'insufficient_evidence'] as const;
export type FailingOutcome = (typeof FAILING_OUTCOMES)[number];

/** How a GitHub integration reports an audit on its commit. */
export const PUBLISH_AS = ['commit_status', 'check_run', 'both'] as const;
export type PublishAs = (typeof PUBLISH_AS)[number];

/** `cancelled`: the audit was withdrawn (a newer head, the pull request closed), no verdict. */
export type StatusState = 'success' | 'failure' | 'error' | 'pending' | 'cancelled';

/** The longest change list a comment shows (GitHub refuses comments over 65 536 characters). */
export const COMMENT_MAX_CHANGES = 25;
/** A status description is at most 140 characters on GitHub (255 on GitLab). */
const DESCRIPTION_MAX = 140;

export interface PublishedAudit {
  id: string;
  status: string;
  error_code: string | null;
  commit_sha: string;
  branch_ref: string | null;
}

const cutTo = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}\u2026`);

/**
 * The status of an audit: its gate's outcome under `failOn`, an error when it has none, or
 * `cancelled` when it was withdrawn before its verdict (`withdrawn` says why).
 */
export function statusOf(
  audit: PublishedAudit,
  gate: AuditGate | null,
  failOn: readonly FailingOutcome[],
  withdrawn: string | null = null,
): { state: StatusState; description: string } {
  const cut = (s: string) => cutTo(s, DESCRIPTION_MAX);
  if (withdrawn)
    return { state: 'cancelled', description: cut(`not audited to the end: ${withdrawn}`) };
  if (audit.status !== 'completed')
    return {
      state: 'error',
      description: cut(`audit ${audit.status}${audit.error_code ? `: ${audit.error_code}` : ''}`),
    };
  if (!gate) return { state: 'error', description: 'audit completed without a change gate' };
  const failing = (failOn as readonly string[]).includes(gate.outcome);
  const c = gate.counts;
  const counted = ['blocked', 'review']
    .filter((k) => (c[k] ?? 0) > 0)
    .map((k) => `${c[k]} ${k}`)
    .join(', ');
  return {
    state: failing ? 'failure' : 'success',
    description: cut(
      `gate ${gate.outcome}${counted ? ` (${counted})` : ''}: ${gate.changes.length} architecture changes`,
    ),
  };
}

/** GitLab's name for a status state. */
export function gitlabState(state: StatusState): 'success' | 'failed' | 'pending' | 'canceled' {
  if (state === 'cancelled') return 'canceled';
  return state === 'success' ? 'success' : state === 'pending' ? 'pending' : 'failed';
}

/** GitHub's commit status state (it has no cancelled one: `error`, the description says why). */
export function githubState(state: StatusState): 'success' | 'failure' | 'error' | 'pending' {
  return state === 'cancelled' ? 'error' : state;
}

const HEADLINE: Record<ChangeGateOutcome, string> = {
  pass: 'passes',
  review: 'needs review',
  blocked: 'is blocked',
  insufficient_evidence: 'has insufficient evidence',
};

export interface GateReport {
  integrationId: string;
  provider: Provider;
  audit: PublishedAudit;
  gate: AuditGate | null;
  locations: Record<string, GateLocation>;
  status: { state: StatusState; description: string };
  /** Where the audit can be read (PUBLIC_BASE_URL's API path), or null. */
  auditUrl: string | null;
  /** Why the audit was withdrawn before its verdict, or null. */
  withdrawn?: string | null;
  /** The pull request closed: `merged` or `closed`; null while open. */
  closed?: 'merged' | 'closed' | null;
}

/** The verdict in Markdown: headline, reasons, the changes that matter (comment, check run). */
function gateMarkdown(input: GateReport): string[] {
  const { audit, gate } = input;
  const lines: string[] = [];
  const commit = mdCode(audit.commit_sha.slice(0, 12));
  if (input.withdrawn) {
    lines.push(
      `### Architecture gate: no verdict`,
      '',
      `The audit of ${commit} was cancelled before its verdict: ${mdText(input.withdrawn)}.`,
    );
  } else if (!gate) {
    lines.push(
      `### Architecture gate: no verdict`,
      '',
      `The audit of ${commit} ${audit.status === 'completed' ? 'computed no change gate' : `ended ${mdText(audit.status)}`}${audit.error_code ? ` (${mdCode(audit.error_code)})` : ''}.`,
    );
  } else {
    lines.push(
      `### Architecture gate ${HEADLINE[gate.outcome]}: ${mdCode(gate.outcome)}`,
      '',
      `Commit ${commit}${audit.branch_ref ? ` on ${mdCode(audit.branch_ref)}` : ''}; status ${mdCode(input.status.state)}.`,
      '',
    );
    const counts = Object.entries(gate.counts)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${mdText(k)}: ${n}`);
    if (counts.length) lines.push(`Changes by consequence: ${counts.join(', ')}.`, '');
    if (gate.reasons.length) {
      lines.push('**Why**', '');
      for (const r of gate.reasons.slice(0, COMMENT_MAX_CHANGES)) lines.push(`- ${mdText(r.text)}`);
      lines.push('');
    }
    const notable = gate.changes.filter((c) => c.consequence !== 'informational');
    const shown = notable.slice(0, COMMENT_MAX_CHANGES);
    if (shown.length) {
      lines.push('| Consequence | Change | Where | Owners |', '| --- | --- | --- | --- |');
      for (const c of shown) {
        const at = input.locations[c.key];
        const where = at ? mdCode(`${at.path}:${at.start_line}`, true) : '';
        lines.push(
          `| ${mdText(c.consequence)} | ${mdCode(c.key, true)} ${mdText(c.label)} | ${where} | ${c.owner_hint ? mdText(c.owner_hint) : ''} |`,
        );
      }
      if (notable.length > shown.length)
        lines.push('', `… and ${notable.length - shown.length} more (see the audit's gate).`);
      lines.push('');
    }
  }
  return lines;
}

/** The comment body: marker, closing line, verdict, reasons, changes, where to read more. */
export function commentBody(input: GateReport): string {
  const lines = [commentMarker(input.integrationId)];
  if (input.closed)
    lines.push(
      `**This ${input.provider === 'gitlab' ? 'merge request' : 'pull request'} was ${input.closed}**: its change set is closed and no further commit is audited. The last verdict stands below.`,
      '',
    );
  lines.push(...gateMarkdown(input));
  lines.push(
    `<sub>archaudit audit ${mdCode(input.audit.id)}${input.auditUrl ? ` · ${mdCode(input.auditUrl)}` : ''} · ${input.closed ? 'final' : 'updated on every push'}</sub>`,
  );
  return lines.join('\n');
}

/** GitHub takes at most 50 annotations per check run request. */
export const ANNOTATIONS_PER_REQUEST = 50;
/** The most annotations one check run carries (GitHub shows them all; we stop here). */
export const ANNOTATIONS_MAX = 500;
/** GitHub's bounds: summary 65 535 characters, annotation title 255, message 64 KB. */
const SUMMARY_MAX = 65_535;
const ANNOTATION_TITLE_MAX = 255;
const ANNOTATION_MESSAGE_MAX = 4_000;

export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'failure' | 'warning';
  title: string;
  message: string;
}

export interface CheckRunReport {
  conclusion: 'success' | 'failure' | 'cancelled';
  output: { title: string; summary: string };
  annotations: CheckAnnotation[];
}

/**
 * A GitHub check run for the audit: its conclusion (from the status), a title and the verdict
 * in Markdown, and one annotation per blocked (failure) or reviewed (warning) change whose
 * evidence has a file and line. Annotation titles and messages are plain text on GitHub: they
 * go through plainLine/plainText (no control characters, no bidi overrides), paths likewise.
 */
export function checkRunOf(input: GateReport): CheckRunReport {
  const { gate, status } = input;
  const conclusion =
    status.state === 'success' ? 'success' : status.state === 'cancelled' ? 'cancelled' : 'failure';
  const annotations: CheckAnnotation[] = [];
  if (gate && !input.withdrawn)
    for (const c of gate.changes) {
      if (c.consequence === 'informational') continue;
      const at = input.locations[c.key];
      if (!at) continue;
      const start = Math.max(1, at.start_line || 1);
      annotations.push({
        path: plainLine(at.path),
        start_line: start,
        end_line: Math.max(start, at.end_line || start),
        annotation_level: c.consequence === 'blocked' ? 'failure' : 'warning',
        title: cutTo(plainLine(`${c.consequence}: ${c.key}`), ANNOTATION_TITLE_MAX),
        message: cutTo(
          plainText(
            `${c.label}\n${c.change_type.replace(/_/g, ' ')}${c.owner_hint ? `; owners: ${c.owner_hint}` : ''}`,
          ),
          ANNOTATION_MESSAGE_MAX,
        ),
      });
      if (annotations.length >= ANNOTATIONS_MAX) break;
    }
  const summary = [...gateMarkdown(input), `<sub>archaudit audit ${mdCode(input.audit.id)}</sub>`]
    .join('\n')
    .slice(0, SUMMARY_MAX);
  return {
    conclusion,
    output: { title: cutTo(plainLine(status.description), ANNOTATION_TITLE_MAX), summary },
    annotations,
  };
}
