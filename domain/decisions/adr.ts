/**
 * A decision as a Markdown ADR: context, question, options, the decision and its rationale,
 * evidence with file locations, uncertainties, success criteria and their verification,
 * approvals and status history. Pure: the caller reads the members and evidence it names.
 * Member- and repository-written text goes through domain/output/markdown (no raw HTML, links,
 * images or structure).
 */
import { mdBlock, mdCode, mdText } from '../output/markdown';
import type { DecisionStatus, EvaluatedCriterion, Verification } from './rules';

/** An option of a decision as documents show it (the ADR, the workspace export). */
export interface DecisionOptionText {
  id: string;
  title: string;
  description: string;
  benefits?: string[];
  tradeoffs?: string[];
  evidence_ids?: string[];
}

export interface AdrDecision {
  id: string;
  number: number;
  title: string;
  question: string;
  context: string;
  status: DecisionStatus;
  owner_id: string;
  created_by: string;
  snapshot_id: string;
  options: ReadonlyArray<DecisionOptionText>;
  selected_option_id: string | null;
  evidence_ids: readonly string[];
  uncertainties: ReadonlyArray<{ subject_key: string; description: string; blocking: boolean }>;
  success_criteria: readonly EvaluatedCriterion[];
  latest_rationale: string | null;
  superseded_at: Date | null;
  verification_result: Verification | null;
  supersedes_id: string | null;
  created_at: Date;
}

export interface AdrApproval {
  actor_id: string;
  actor_role: string;
  authorization_scope: string;
  policy_version: number | null;
  outcome: string;
  rationale: string;
  created_at: Date;
}

export interface AdrTransition {
  from_status: string | null;
  to_status: string;
  actor_id: string | null;
  actor_login: string | null;
  rationale: string | null;
  created_at: Date;
}

export interface AdrEvidence {
  source_type: string;
  provider: string;
  summary: string;
  location: Record<string, unknown> | null;
}

/** The members the ADR names: owner, proposer, approvers and the actors of its history. */
export function adrMemberIds(
  decision: Pick<AdrDecision, 'owner_id' | 'created_by'>,
  approvals: readonly Pick<AdrApproval, 'actor_id'>[],
  history: readonly Pick<AdrTransition, 'actor_id'>[],
): string[] {
  return [
    ...new Set([
      decision.owner_id,
      decision.created_by,
      ...approvals.map((a) => a.actor_id),
      ...history.flatMap((h) => (h.actor_id ? [h.actor_id] : [])),
    ]),
  ];
}

/** The evidence the ADR cites: the decision's own and its options'. */
export function adrEvidenceIds(decision: Pick<AdrDecision, 'evidence_ids' | 'options'>): string[] {
  return [
    ...new Set([
      ...decision.evidence_ids,
      ...decision.options.flatMap((o) => o.evidence_ids ?? []),
    ]),
  ];
}

export function renderAdr(input: {
  decision: AdrDecision;
  approvals: readonly AdrApproval[];
  history: readonly AdrTransition[];
  /** Logins by member id; a member not found is shown by id. */
  logins: ReadonlyMap<string, string>;
  /** Evidence by id; evidence not found is cited by id alone. */
  evidence: ReadonlyMap<string, AdrEvidence>;
}): string {
  const { decision: row, approvals, history, logins, evidence } = input;
  const iso = (d: Date) => d.toISOString();
  const who = (id: string | null) => mdText(id ? (logins.get(id) ?? id) : 'system');
  const t = mdText;
  const code = (x: string) => mdCode(x);
  const cite = (id: string): string => {
    const e = evidence.get(id);
    if (!e) return code(id);
    const loc = e.location as { path?: string; start_line?: number; end_line?: number } | null;
    const where = loc?.path
      ? code(
          `${loc.path}${loc.start_line ? `:${loc.start_line}${loc.end_line && loc.end_line !== loc.start_line ? `-${loc.end_line}` : ''}` : ''}`,
        )
      : '(no file location)';
    return `${where} — ${t(e.summary)} (${t(`${e.source_type}/${e.provider}`)}, ${code(id)})`;
  };
  const selected = row.options.find((o) => o.id === row.selected_option_id);
  const lines: string[] = [];
  const p = (...text: string[]) => lines.push(...text);
  p(`# ${String(row.number).padStart(4, '0')}. ${t(row.title)}`, '');
  p(`- Status: **${row.status}**`);
  p(`- Owner: ${who(row.owner_id)}; proposed by ${who(row.created_by)} on ${iso(row.created_at)}`);
  p(`- Decision id: ${code(row.id)}; snapshot ${code(row.snapshot_id)}`);
  if (row.supersedes_id) p(`- Supersedes: ${code(row.supersedes_id)}`);
  if (row.superseded_at) p(`- Superseded on ${iso(row.superseded_at)}`);
  p('', '## Context', '', mdBlock(row.context), '', '## Question', '', mdBlock(row.question));
  p('', '## Options', '');
  for (const o of row.options) {
    p(
      `### ${t(o.title)} (${code(o.id)})${o.id === row.selected_option_id ? ' — selected' : ''}`,
      '',
    );
    p(mdBlock(o.description), '');
    p(
      'Benefits:',
      ...(o.benefits?.length ? o.benefits.map((b) => `- ${t(b)}`) : ['- (none listed)']),
      '',
    );
    p(
      'Tradeoffs:',
      ...(o.tradeoffs?.length ? o.tradeoffs.map((b) => `- ${t(b)}`) : ['- (none listed)']),
      '',
    );
    if (o.evidence_ids?.length) p('Evidence:', ...o.evidence_ids.map((id) => `- ${cite(id)}`), '');
  }
  p('## Decision', '');
  if (selected) {
    p(`Selected option: **${t(selected.title)}** (${code(selected.id)}).`, '');
    p(`Rationale: ${t(row.latest_rationale ?? '(none given)')}`, '');
  } else {
    p(`No option selected yet (status ${row.status}).`, '');
  }
  p('## Evidence', '', ...row.evidence_ids.map((id) => `- ${cite(id)}`), '');
  if (row.uncertainties.length) {
    p('## Uncertainties', '');
    p(
      ...row.uncertainties.map(
        (u) => `- ${code(u.subject_key)}${u.blocking ? ' (blocking)' : ''}: ${t(u.description)}`,
      ),
      '',
    );
  }
  p('## Success criteria', '');
  for (const c of row.success_criteria) {
    const check = `${t(c.check.kind)} ${code(c.check.key)}${c.check.field ? ` ${t(c.check.field)} = ${code(JSON.stringify(c.check.value) ?? '')}` : ''}`;
    const evid = c.evidence_ids.length ? `; evidence ${c.evidence_ids.map(code).join(', ')}` : '';
    p(
      `- **${t(c.status)}** ${t(c.id)}: ${t(c.description)} (${check}${c.evaluated_at ? `; evaluated ${t(c.evaluated_at)}` : ''}${evid})`,
    );
  }
  p('', '## Verification', '');
  if (row.verification_result) {
    const v = row.verification_result;
    p(
      `Outcome **${t(v.outcome)}** against snapshot ${code(v.snapshot_id)} on ${t(v.evaluated_at)}: ${v.criteria.filter((c) => c.status === 'met').length} of ${v.criteria.length} criteria met.`,
    );
  } else {
    p(
      'Not verified yet: verification runs on the first audit snapshot completed after implementation.',
    );
  }
  p('', '## Approvals', '');
  if (approvals.length === 0) p('None yet.');
  for (const a of approvals)
    p(
      `- ${t(a.outcome)} by ${who(a.actor_id)} (role ${t(a.actor_role)}, scope ${code(a.authorization_scope)}, policy version ${a.policy_version ?? 'default'}) on ${iso(a.created_at)}: ${t(a.rationale)}`,
    );
  p(
    '',
    '## Status history',
    '',
    '| When | From | To | By | Rationale |',
    '| --- | --- | --- | --- | --- |',
  );
  const cell = (s: string | null) => t(s ?? '');
  for (const h of history)
    p(
      `| ${iso(h.created_at)} | ${cell(h.from_status ?? '—')} | ${cell(h.to_status)} | ${h.actor_login ? cell(h.actor_login) : who(h.actor_id)} | ${cell(h.rationale)} |`,
    );
  return lines.join('\n') + '\n';
}
