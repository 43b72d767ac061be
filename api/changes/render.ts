/**
 * An audit's gate as CI artifacts: SARIF 2.1.0 (code scanning), JUnit XML (test reports) and
 * Markdown (a pull-request comment). Each is rendered from the stored gate alone, so the same
 * gate always gives the same bytes.
 */
import crypto from 'node:crypto';
import builder from 'junit-report-builder';
import {
  SarifBuilder,
  SarifResultBuilder,
  SarifRuleBuilder,
  SarifRunBuilder,
} from 'node-sarif-builder';
import type { Log, Result } from 'sarif';
import type { AuditGate as AuditGateResponse, StoredGate } from '../../domain/changes/service';

export const GATE_FORMATS = ['json', 'sarif', 'junit', 'markdown'] as const;
export type GateFormat = (typeof GATE_FORMATS)[number];

export const GATE_CONTENT_TYPES = {
  sarif: 'application/sarif+json',
  junit: 'application/xml',
  markdown: 'text/markdown',
} as const;

const TOOL = { name: 'archaudit-gate', version: '1', url: 'https://example.invalid/archaudit' };

const fingerprint = (...parts: string[]) =>
  crypto.createHash('sha256').update(parts.join('\u0000')).digest('hex');

/** The rules that speak in a gate's reasons (policy rules, decisions and the evidence checks). */
function rulesOf(gate: AuditGateResponse): Map<string, string> {
  const rules = new Map<string, string>();
  for (const r of gate.reasons) {
    const id = r.rule_id ?? (r.code === 'insufficient_evidence' ? 'evidence' : 'decision');
    if (!rules.has(id)) rules.set(id, r.text.replace(/^[a-z_]+: /, ''));
  }
  return rules;
}

export function renderSarif(stored: StoredGate): Log {
  const gate = stored.response;
  const run = new SarifRunBuilder().initSimple({
    toolDriverName: TOOL.name,
    toolDriverVersion: TOOL.version,
    url: TOOL.url,
  });
  for (const [id, text] of rulesOf(gate))
    run.addRule(new SarifRuleBuilder().initSimple({ ruleId: id, shortDescriptionText: text }));
  for (const reason of gate.reasons) {
    if (reason.code === 'allowed') continue;
    const ruleId =
      reason.rule_id ?? (reason.code === 'insufficient_evidence' ? 'evidence' : 'decision');
    const level: Result.level =
      reason.code === 'blocked' ? 'error' : reason.code === 'review' ? 'warning' : 'note';
    const at = reason.key ? stored.locations[reason.key] : undefined;
    const result = new SarifResultBuilder().initSimple({
      level,
      messageText: reason.text,
      ruleId,
      // Every result names a file: the evidence it rests on, else the audit as a whole.
      fileUri: at?.path ?? '.',
      ...(at ? { startLine: Math.max(1, at.start_line), endLine: Math.max(1, at.end_line) } : {}),
    });
    result.result.partialFingerprints = {
      'archauditGate/v1': fingerprint(ruleId, reason.key ?? '', reason.code),
    };
    result.result.properties = {
      outcome: gate.outcome,
      change_key: reason.key,
      evidence_ids: reason.evidence_ids,
    };
    run.addResult(result);
  }
  const sarif = new SarifBuilder();
  sarif.addRun(run);
  return sarif.buildSarifOutput();
}

export function renderJunit(stored: StoredGate): string {
  const gate = stored.response;
  const report = builder.newBuilder();
  const suite = report.testSuite().name(`archaudit gate (${gate.outcome})`);
  const rules = rulesOf(gate);
  if (rules.size === 0) suite.testCase().className('archaudit.gate').name('no rule fired');
  for (const [id] of rules) {
    const reasons = gate.reasons.filter(
      (r) =>
        (r.rule_id ?? (r.code === 'insufficient_evidence' ? 'evidence' : 'decision')) === id &&
        r.code !== 'allowed',
    );
    const tc = suite.testCase().className('archaudit.gate').name(id);
    if (reasons.length > 0)
      tc.failure(reasons.map((r) => r.text).join('\n'), reasons.map((r) => r.code).join(','));
  }
  return report.build();
}

const escapeCell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

export function renderMarkdown(
  stored: StoredGate,
  auditId: string,
  commitSha: string | null,
): string {
  const gate = stored.response;
  const icon = { pass: '✅', review: '🟡', blocked: '⛔', insufficient_evidence: '❔' }[
    gate.outcome
  ];
  const lines = [
    `## ${icon} Architecture gate: ${gate.outcome}`,
    '',
    `Audit \`${auditId}\`${commitSha ? ` at \`${commitSha.slice(0, 12)}\`` : ''}; policy version ${gate.policy_version}${gate.policy_enabled ? '' : ' (disabled)'}; ${gate.changes.length} change(s).`,
    '',
  ];
  if (gate.reasons.length > 0) {
    lines.push('### Reasons', '');
    for (const r of gate.reasons) lines.push(`- ${r.text}`);
    lines.push('');
  }
  if (gate.changes.length > 0) {
    lines.push('### Changes', '', '| change | item | consequence |', '| --- | --- | --- |');
    for (const c of gate.changes.slice(0, 200))
      lines.push(`| ${c.change_type} | ${escapeCell(c.label)} | ${c.consequence} |`);
    if (gate.changes.length > 200) lines.push('', `… and ${gate.changes.length - 200} more.`);
    lines.push('');
  }
  return lines.join('\n');
}

export function renderGate(
  format: Exclude<GateFormat, 'json'>,
  stored: StoredGate,
  audit: { auditId: string; commitSha: string | null },
): unknown {
  if (format === 'sarif') return renderSarif(stored);
  if (format === 'junit') return renderJunit(stored);
  return renderMarkdown(stored, audit.auditId, audit.commitSha);
}
