/**
 * What an audit publishes back to its forge: a commit status (state and a one-line summary) and,
 * for a pull request, one comment in Markdown kept up to date in place. Every string that comes
 * from the audited repository (change keys, labels, reasons, owners, paths, branch names) goes
 * through domain/output/markdown.ts, so the comment shows it as text and nothing else.
 */
import type { ChangeGateOutcome } from '../contract/values';
import type { AuditGate, GateLocation } from '../changes/service';
import { mdCode, mdText } from '../output/markdown';
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

export type StatusState = 'success' | 'failure' | 'error' | 'pending';

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

/** The status of an audit: its gate's outcome under `failOn`, or an error when it has none. */
export function statusOf(
  audit: PublishedAudit,
  gate: AuditGate | null,
  failOn: readonly FailingOutcome[],
): { state: StatusState; description: string } {
  const cut = (s: string) =>
    s.length <= DESCRIPTION_MAX ? s : `${s.slice(0, DESCRIPTION_MAX - 1)}\u2026`;
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
export function gitlabState(state: StatusState): 'success' | 'failed' | 'pending' {
  return state === 'success' ? 'success' : state === 'pending' ? 'pending' : 'failed';
}

const HEADLINE: Record<ChangeGateOutcome, string> = {
  pass: 'passes',
  review: 'needs review',
  blocked: 'is blocked',
  insufficient_evidence: 'has insufficient evidence',
};

/** The comment body: marker, verdict, reasons, the changes that matter, where to read more. */
export function commentBody(input: {
  integrationId: string;
  provider: Provider;
  audit: PublishedAudit;
  gate: AuditGate | null;
  locations: Record<string, GateLocation>;
  status: { state: StatusState; description: string };
  /** Where the audit can be read (PUBLIC_BASE_URL's API path), or null. */
  auditUrl: string | null;
}): string {
  const { audit, gate } = input;
  const lines = [commentMarker(input.integrationId)];
  const commit = mdCode(audit.commit_sha.slice(0, 12));
  if (!gate) {
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
  lines.push(
    `<sub>archaudit audit ${mdCode(audit.id)}${input.auditUrl ? ` · ${mdCode(input.auditUrl)}` : ''} · updated on every push</sub>`,
  );
  return lines.join('\n');
}
