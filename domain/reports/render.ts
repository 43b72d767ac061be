/**
 * An audit report as Markdown, self-contained HTML (printable, the diagram inline as SVG),
 * SARIF 2.1.0 of its findings and JUnit XML of its control assessments. Each rendering reads the
 * report document alone, so an approved report renders the same bytes whenever it is asked for.
 */
import builder from 'junit-report-builder';
import {
  SarifBuilder,
  SarifResultBuilder,
  SarifRuleBuilder,
  SarifRunBuilder,
} from 'node-sarif-builder';
import type { Log, Result } from 'sarif';
import { diagramGraphOf, svg, xmlEscape } from '../../analysis/diagram';
import { CONTROL_SEVERITIES } from '../contract/values';
import { httpHost, mdCode, mdLink, mdText } from '../output/markdown';
import { plainJson, plainText } from '../output/plain';
import { SRCROOT, sarifUri } from '../output/sarif';
import { isOpenFinding, reportSubject, type AuditReportContent } from './report';
import {
  blockingQuestions,
  condensedRationale,
  findingGroups,
  titleInGroup,
  topFindings,
} from './sections';

/** Who approved the report, as renderings show it. */
export interface RenderedApproval {
  actor_login: string;
  actor_role: string;
  rationale: string;
  created_at: string;
}

export interface RenderContext {
  content_sha256: string;
  approval: RenderedApproval | null;
}

const TOOL = { name: 'archaudit', version: '1', url: 'https://example.invalid/archaudit' };

const where = (l: { path: string; start_line: number; end_line: number }) =>
  l.start_line === l.end_line
    ? `${l.path}:${l.start_line}`
    : `${l.path}:${l.start_line}-${l.end_line}`;

function title(r: AuditReportContent): string {
  return `Architecture audit report: ${reportSubject(r)}`;
}

function statusLine(r: AuditReportContent, ctx: RenderContext): string {
  return ctx.approval
    ? `Approved by ${ctx.approval.actor_login} (${ctx.approval.actor_role}) at ${ctx.approval.created_at}: ${ctx.approval.rationale}`
    : 'Draft: not approved.';
}

/**
 * The report as Markdown. Every string that came from the repository or a member goes through
 * domain/output/markdown (escaped text, code spans that cannot be broken, the only link the
 * repository's own URL).
 */
export function renderReportMarkdown(r: AuditReportContent, ctx: RenderContext): string {
  const s = r.summary;
  const t = mdText;
  const c = (x: string) => mdCode(x, true);
  const source = r.repository
    ? mdLink(r.repository.url, r.repository.url, httpHost(r.repository.url))
    : 'upload';
  const out = [
    `# ${t(title(r))}`,
    '',
    `- Audit: ${mdCode(r.audit_id)}, report version ${t(String(r.report_version))}`,
    `- Source: ${source}${r.branch_ref ? ` @ ${mdCode(r.branch_ref)}` : ''}${r.commit_sha ? ` (${mdCode(r.commit_sha.slice(0, 12))})` : ''}`,
    `- Audited: ${t(r.audited_at)}${r.completed_at ? `, completed ${t(r.completed_at)}` : ''}`,
    `- Status: ${t(statusLine(r, ctx))}`,
    `- Content SHA-256: ${mdCode(ctx.content_sha256)}`,
    '',
    '## Summary',
    '',
    `${s.entity_count} entities and ${s.relationship_count} relationships from ${t(s.sources.join(', ') || 'no source')} (coverage ${t(String(s.source_coverage))}${s.missing_sources.length ? `; missing ${t(s.missing_sources.join(', '))}` : ''}).`,
    '',
    `| controls | ${Object.keys(s.assessments).map(t).join(' | ')} |`,
    `| --- | ${Object.keys(s.assessments)
      .map(() => '---')
      .join(' | ')} |`,
    `| count | ${Object.values(s.assessments).join(' | ')} |`,
    '',
    `Open findings: ${CONTROL_SEVERITIES.map((k) => `${s.open_findings[k] ?? 0} ${k}`).join(', ')}. Open uncertainty cases: ${s.open_uncertainty_cases} (${s.blocking_uncertainty_cases} blocking). Gate: ${t(s.gate_outcome ?? 'not evaluated')}.`,
    '',
  ];
  // The summary a reader stops at: the gate and the changes behind it, the top findings, the
  // questions that block a decision.
  if (r.gate) {
    out.push(`**Change gate: ${t(r.gate.outcome)}.**`, '');
    for (const reason of r.gate.reasons) out.push(`- ${t(reason)}`);
    if (r.gate.reasons.length) out.push('');
  }
  const top = topFindings(r);
  if (top.length) {
    out.push('**Top findings**', '');
    for (const f of top)
      out.push(
        `- ${t(f.severity)}: ${t(f.title)}${f.locations[0] ? ` (${c(where(f.locations[0]))})` : ''}`,
      );
    out.push('');
  }
  const blocking = blockingQuestions(r);
  out.push(blocking.length ? '**Open blocking questions**' : 'No open blocking question.', '');
  for (const u of blocking) out.push(`- ${t(u.reason)} on ${c(u.subject_key)}: ${t(u.detail)}`);
  if (blocking.length) out.push('');
  out.push('## Findings', '');
  if (r.findings.length === 0) out.push('No findings.', '');
  // One section per control: its rationale once, then where it fails.
  for (const g of findingGroups(r)) {
    out.push(
      `### ${t(g.severity)}: ${t(g.title)} (${c(g.control_key)}, ${g.findings.length} finding(s), ${g.open} open)`,
      '',
      t(g.rationale),
      '',
      '| finding | location | status |',
      '| --- | --- | --- |',
    );
    for (const f of g.findings)
      out.push(
        `| ${t(titleInGroup(f.title, g.title))}${f.detail !== g.common_detail ? `: ${t(condensedRationale(f.detail))}` : ''} | ${f.locations.map((l) => c(where(l))).join(', ') || '—'} | ${t(f.status)} |`,
      );
    out.push('');
  }
  out.push(
    '## Controls',
    '',
    '| control | status | confidence | rationale |',
    '| --- | --- | --- | --- |',
  );
  for (const a of r.assessments)
    out.push(
      `| ${t(a.control_key)} | ${t(a.status)} | ${t(String(a.confidence))} | ${t(condensedRationale(a.rationale))} |`,
    );
  out.push(
    '',
    '## Architecture',
    '',
    `Snapshot ${t(String(r.architecture.snapshot_version))} (${t(r.architecture.status)}).`,
    '',
  );
  out.push('| entity | kind | confidence |', '| --- | --- | --- |');
  for (const e of r.architecture.entities)
    out.push(`| ${c(e.canonical_key)} | ${t(e.kind)} | ${t(String(e.confidence))} |`);
  out.push('', '| relationship | kind | confidence |', '| --- | --- | --- |');
  for (const x of r.architecture.relationships)
    out.push(
      `| ${c(x.source_key)} → ${c(x.target_key)} | ${t(x.kind)} | ${t(String(x.confidence))} |`,
    );
  out.push('', '## Uncertainty', '');
  if (r.uncertainty_cases.length === 0) out.push('No uncertainty cases.');
  for (const u of r.uncertainty_cases)
    out.push(
      `- ${u.blocking ? '**blocking** ' : ''}${t(u.reason)} (${t(u.state)}): ${t(u.detail)}`,
    );
  out.push('');
  return out.join('\n');
}

const h = xmlEscape;

function table(head: string[], rows: string[][]): string {
  return [
    '<table><thead><tr>',
    ...head.map((x) => `<th>${h(x)}</th>`),
    '</tr></thead><tbody>',
    ...rows.map((row) => `<tr>${row.map((c) => `<td>${c}</td>`).join('')}</tr>`),
    '</tbody></table>',
  ].join('');
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#0f172a;margin:2rem auto;max-width:60rem;padding:0 1rem;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.2rem;border-bottom:1px solid #cbd5e1;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0;font-size:.9rem}th,td{border:1px solid #cbd5e1;padding:.25rem .4rem;text-align:left;vertical-align:top}
th{background:#f1f5f9}code{font-family:ui-monospace,monospace;font-size:.85em}.meta{color:#475569}
.sev-critical,.sev-high{color:#b91c1c;font-weight:600}.sev-medium{color:#b45309}.approved{color:#15803d;font-weight:600}.draft{color:#b45309;font-weight:600}
figure{margin:1rem 0;overflow:auto;max-height:85vh;border:1px solid #e2e8f0}figure svg{max-width:none;height:auto}
h3{font-size:1rem;margin:1.2rem 0 .3rem}.rationale{color:#334155;margin:.2rem 0}section.control{break-inside:avoid-page}
@media print{body{margin:0;max-width:none}h2,h3{break-after:avoid}tr,figure{break-inside:avoid}figure{max-height:none;overflow:visible;border:0}figure svg{max-width:100%}a{color:inherit}}
`;

/** One HTML document with everything inline (style, diagram): it opens and prints offline. */
export function renderReportHtml(r: AuditReportContent, ctx: RenderContext): string {
  const s = r.summary;
  const diagram = svg(diagramGraphOf(r.architecture), {
    title: `Architecture of audit ${r.audit_id} (snapshot version ${r.architecture.snapshot_version})`,
  });
  const code = (x: string) => `<code>${h(x)}</code>`;
  const top = topFindings(r);
  const blocking = blockingQuestions(r);
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${h(title(r))}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<h1>${h(title(r))}</h1>`,
    '<p class="meta">',
    `Audit ${code(r.audit_id)}, report version ${h(r.report_version)}<br>`,
    `Source: ${h(r.repository?.url ?? 'upload')}${r.branch_ref ? ` @ ${h(r.branch_ref)}` : ''}${r.commit_sha ? ` (${code(r.commit_sha.slice(0, 12))})` : ''}<br>`,
    `Audited ${h(r.audited_at)}${r.completed_at ? `, completed ${h(r.completed_at)}` : ''}<br>`,
    `Content SHA-256 ${code(ctx.content_sha256)}`,
    '</p>',
    `<p class="${ctx.approval ? 'approved' : 'draft'}">${h(statusLine(r, ctx))}</p>`,
    '<h2>Summary</h2>',
    `<p>${s.entity_count} entities and ${s.relationship_count} relationships from ${h(s.sources.join(', ') || 'no source')} (coverage ${h(s.source_coverage)}${s.missing_sources.length ? `; missing ${h(s.missing_sources.join(', '))}` : ''}). Gate: ${h(s.gate_outcome ?? 'not evaluated')}. Open uncertainty cases: ${s.open_uncertainty_cases} (${s.blocking_uncertainty_cases} blocking).</p>`,
    table(
      ['controls', ...Object.keys(s.assessments)],
      [['count', ...Object.values(s.assessments).map(String)]],
    ),
    ...(r.gate
      ? [
          `<p><strong>Change gate: ${h(r.gate.outcome)}</strong></p>`,
          r.gate.reasons.length
            ? `<ul>${r.gate.reasons.map((x) => `<li>${h(x)}</li>`).join('')}</ul>`
            : '',
        ]
      : []),
    ...(top.length
      ? [
          '<h3>Top findings</h3>',
          `<ol>${top.map((f) => `<li><span class="sev-${h(f.severity)}">${h(f.severity)}</span> ${h(f.title)}${f.locations[0] ? ` ${code(where(f.locations[0]))}` : ''}</li>`).join('')}</ol>`,
        ]
      : []),
    blocking.length
      ? `<h3>Open blocking questions</h3><ul>${blocking.map((u) => `<li>${h(u.reason)} on ${code(u.subject_key)}: ${h(u.detail)}</li>`).join('')}</ul>`
      : '<p>No open blocking question.</p>',
    '<h2>Findings</h2>',
    r.findings.length === 0 ? '<p>No findings.</p>' : '',
    // One section per control: the rationale once, then its locations.
    ...findingGroups(r).map((g) =>
      [
        `<section class="control"><h3><span class="sev-${h(g.severity)}">${h(g.severity)}</span> ${h(g.title)} ${code(g.control_key)} <small>${g.findings.length} finding(s), ${g.open} open</small></h3>`,
        `<p class="rationale">${h(g.rationale)}</p>`,
        table(
          ['finding', 'location', 'status'],
          g.findings.map((f) => [
            `${h(titleInGroup(f.title, g.title))}${f.detail !== g.common_detail ? `<br><small>${h(condensedRationale(f.detail))}</small>` : ''}`,
            f.locations.map((l) => code(where(l))).join('<br>') || '—',
            h(f.status),
          ]),
        ),
        '</section>',
      ].join(''),
    ),
    '<h2>Architecture</h2>',
    `<figure>${diagram}</figure>`,
    '<h2>Controls</h2>',
    table(
      ['control', 'status', 'confidence', 'rationale'],
      r.assessments.map((a) => [
        code(a.control_key),
        h(a.status),
        h(a.confidence),
        h(condensedRationale(a.rationale)),
      ]),
    ),
    '<h2>Relationships</h2>',
    table(
      ['source', 'target', 'kind', 'confidence'],
      r.architecture.relationships.map((x) => [
        code(x.source_key),
        code(x.target_key),
        h(x.kind),
        h(x.confidence),
      ]),
    ),
    '<h2>Uncertainty</h2>',
    r.uncertainty_cases.length === 0
      ? '<p>No uncertainty cases.</p>'
      : table(
          ['reason', 'subject', 'state', 'detail'],
          r.uncertainty_cases.map((u) => [
            h(u.reason) + (u.blocking ? ' <strong>(blocking)</strong>' : ''),
            code(u.subject_key),
            h(u.state),
            h(u.detail),
          ]),
        ),
    '</body></html>',
    '',
  ].join('\n');
}

const LEVEL: Record<string, Result.level> = {
  high: 'error',
  medium: 'warning',
  low: 'note',
};

/**
 * SARIF 2.1.0: one rule per control, one result per finding not resolved. A finding set aside
 * (accepted_risk, false_positive) is a suppressed result; `partialFingerprints` carries the
 * finding's fingerprint, so code-scanning tools follow it across audits. Every result names a
 * file: the finding's locations, else the repository root.
 */
export function renderReportSarif(r: AuditReportContent): Log {
  const run = new SarifRunBuilder().initSimple({
    toolDriverName: TOOL.name,
    toolDriverVersion: TOOL.version,
    url: TOOL.url,
  });
  for (const a of r.assessments)
    run.addRule(
      new SarifRuleBuilder().initSimple({
        ruleId: a.control_key,
        shortDescriptionText: a.title,
      }),
    );
  for (const f of r.findings) {
    if (f.status === 'resolved') continue;
    const first = f.locations[0];
    const result = new SarifResultBuilder().initSimple({
      level: LEVEL[f.severity] ?? 'warning',
      messageText: `${f.title}: ${f.detail}`,
      ruleId: f.control_key,
      fileUri: sarifUri(first?.path ?? '.'),
      ...(first
        ? { startLine: Math.max(1, first.start_line), endLine: Math.max(1, first.end_line) }
        : {}),
    });
    const more = f.locations.slice(1).map((l) => ({
      physicalLocation: {
        artifactLocation: { uri: sarifUri(l.path), uriBaseId: SRCROOT },
        region: { startLine: Math.max(1, l.start_line), endLine: Math.max(1, l.end_line) },
      },
    }));
    const firstArtifact = result.result.locations?.[0]?.physicalLocation?.artifactLocation;
    if (firstArtifact) firstArtifact.uriBaseId = SRCROOT;
    if (more.length) result.result.locations = [...(result.result.locations ?? []), ...more];
    result.result.partialFingerprints = { 'archauditFinding/v1': f.fingerprint };
    if (!isOpenFinding(f))
      result.result.suppressions = [
        { kind: 'external', status: 'accepted', justification: f.status },
      ];
    result.result.properties = {
      finding_id: f.id,
      severity: f.severity,
      status: f.status,
      entity_key: f.entity_key,
      evidence_ids: f.evidence_ids,
    };
    run.addResult(result);
  }
  const sarif = new SarifBuilder();
  sarif.addRun(run);
  const log = sarif.buildSarifOutput();
  const runOut = log.runs[0]!;
  runOut.automationDetails = { id: `archaudit/${r.audit_id}` };
  if (r.commit_sha && r.repository)
    runOut.versionControlProvenance = [
      {
        repositoryUri: r.repository.url,
        revisionId: r.commit_sha,
        ...(r.branch_ref ? { branch: r.branch_ref } : {}),
      },
    ];
  // Every string of the log (messages, branch, keys) without a control character raw.
  return plainJson(log) as Log;
}

/**
 * JUnit XML: one test suite of the controls, one test case per assessment; a failing control is
 * a failure naming its findings, a partial one too, and a control that could not be assessed
 * (not_applicable, insufficient_evidence) is skipped.
 */
export function renderReportJunit(r: AuditReportContent): string {
  const report = builder.newBuilder();
  // XML 1.0 cannot carry most control characters at all: replaced, as everywhere.
  const suite = report.testSuite().name(plainText(`archaudit controls (${reportSubject(r)})`));
  const byId = new Map(r.findings.map((f) => [f.id, f]));
  for (const a of r.assessments) {
    const tc = suite.testCase().className(`archaudit.controls.${a.domain}`).name(a.control_key);
    if (a.status === 'fail' || a.status === 'partial') {
      const found = a.finding_ids
        .map((id) => byId.get(id))
        .filter((f) => f !== undefined)
        .map((f) => `${f.title}${f.locations[0] ? ` (${where(f.locations[0])})` : ''}`);
      tc.failure(plainText([a.rationale, ...found].join('\n')), a.status);
    } else if (a.status !== 'pass') tc.skipped();
  }
  return report.build();
}

/** The report's representations, by `format`. */
export const REPORT_FORMATS = ['json', 'markdown', 'html', 'sarif', 'junit'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const REPORT_CONTENT_TYPES = {
  markdown: 'text/markdown',
  html: 'text/html',
  sarif: 'application/sarif+json',
  junit: 'application/xml',
} as const;

/** The report rendered as `format` (every format but json, which is the document itself). */
export function renderReport(
  format: Exclude<ReportFormat, 'json'>,
  content: AuditReportContent,
  ctx: RenderContext,
): string | Log {
  if (format === 'markdown') return renderReportMarkdown(content, ctx);
  if (format === 'html') return renderReportHtml(content, ctx);
  if (format === 'sarif') return renderReportSarif(content);
  return renderReportJunit(content);
}
