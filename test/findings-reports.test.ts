/**
 * Reports people read (issue 30, item 5): a summary first (gate, changes, top findings, open
 * blocking questions), findings grouped by control with the rationale said once, in Markdown and
 * HTML.
 */
import test from 'ava';
import { renderReportHtml, renderReportMarkdown } from '../domain/reports/render';
import type { AuditReportContent, ReportFinding } from '../domain/reports/report';

const RATIONALE = 'Dockerfiles set a non-root USER; Kubernetes containers set runAsNonRoot.';
const finding = (
  i: number,
  control: string,
  severity: string,
  detail = RATIONALE,
): ReportFinding => ({
  id: `00000000-0000-4000-8000-00000000000${i}`,
  control_key: control,
  severity,
  title: `finding ${i} of ${control}`,
  detail,
  fingerprint: String(i).repeat(64).slice(0, 64),
  status: 'open',
  entity_key: null,
  evidence_ids: [],
  locations: [{ path: `src/s${i}/Dockerfile`, start_line: i, end_line: i }],
});

const report: AuditReportContent = {
  audit_id: '11111111-1111-4111-8111-111111111111',
  report_version: '1',
  repository: {
    id: '22222222-2222-4222-8222-222222222222',
    name: 'shop',
    url: 'https://example.invalid/shop',
  },
  branch_ref: 'main',
  commit_sha: 'a'.repeat(40),
  audited_at: '2026-11-26T00:00:00.000Z',
  completed_at: '2026-11-26T00:01:00.000Z',
  summary: {
    entity_count: 2,
    relationship_count: 1,
    source_coverage: '1.00',
    sources: ['code', 'cloud', 'cicd'],
    missing_sources: [],
    assessments: { pass: 1, fail: 2 },
    open_findings: { high: 3, medium: 1, low: 0 },
    open_uncertainty_cases: 2,
    blocking_uncertainty_cases: 1,
    gate_outcome: 'blocked',
  },
  architecture: {
    snapshot_id: '33333333-3333-4333-8333-333333333333',
    snapshot_version: '1',
    status: 'complete',
    entities: [
      { canonical_key: 'service:web', kind: 'service', name: 'web', confidence: '0.90' },
      { canonical_key: 'datastore:db', kind: 'datastore', name: 'db', confidence: '0.90' },
    ],
    relationships: [
      {
        canonical_key: 'connects_to:service:web->datastore:db',
        source_key: 'service:web',
        target_key: 'datastore:db',
        kind: 'connects_to',
        confidence: '0.90',
      },
    ],
  },
  assessments: [
    {
      control_key: 'containers-non-root',
      title: 'Containers run as non-root',
      domain: 'cloud',
      severity: 'high',
      status: 'fail',
      confidence: '0.95',
      rationale: 'x',
      finding_ids: [],
      stale_evidence_ids: [],
    },
    {
      control_key: 'images-pinned',
      title: 'Container images pinned',
      domain: 'cloud',
      severity: 'medium',
      status: 'fail',
      confidence: '0.95',
      rationale: 'y',
      finding_ids: [],
      stale_evidence_ids: [],
    },
  ],
  findings: [
    finding(1, 'containers-non-root', 'high'),
    finding(2, 'containers-non-root', 'high'),
    finding(3, 'containers-non-root', 'high', 'runs as root because of USER 0'),
    finding(4, 'images-pinned', 'medium', 'Image references carry an explicit tag.'),
  ],
  uncertainty_cases: [
    {
      id: '44444444-4444-4444-8444-444444444444',
      reason: 'missing_source',
      subject_key: 'source:cicd',
      detail: 'No CI evidence.',
      blocking: true,
      state: 'open',
    },
    {
      id: '55555555-5555-4555-8555-555555555555',
      reason: 'low_confidence',
      subject_key: 'service:web',
      detail: 'Weak.',
      blocking: false,
      state: 'open',
    },
  ],
  gate: { outcome: 'blocked', reasons: ['service:web now runs as root (containers-non-root)'] },
};
const ctx = { content_sha256: 'f'.repeat(64), approval: null };
const count = (text: string, part: string) => text.split(part).length - 1;

test('Markdown: summary first, then findings grouped by control with the rationale once', (t) => {
  const md = renderReportMarkdown(report, ctx);
  const at = (s: string) => md.indexOf(s);
  t.true(at('**Change gate: blocked.**') > at('## Summary'));
  t.true(at('service:web now runs as root') < at('## Findings'), 'the changes behind the gate');
  t.true(at('**Top findings**') < at('## Findings'));
  t.true(at('**Open blocking questions**') < at('## Findings'));
  t.regex(md, /- missing_source on `source:cicd`: No CI evidence\./);
  t.notRegex(md.slice(0, at('## Findings')), /low_confidence on/, 'only blocking questions');
  t.is(count(md, RATIONALE), 1, 'the shared rationale once');
  t.regex(
    md,
    /### high: Containers run as non-root \(`containers-non-root`, 3 finding\(s\), 3 open\)/,
  );
  t.true(at('### high: Containers') < at('### medium: Container images pinned'));
  t.regex(
    md,
    /\| finding 3 of containers-non-root: runs as root because of USER 0 \|/,
    'a different detail stays with its finding',
  );
  t.false(md.includes('## Change gate'), 'the gate is said once, in the summary');
});

test('HTML: summary first, one section per control, the diagram in a readable scroll box', (t) => {
  const html = renderReportHtml(report, ctx);
  const at = (s: string) => html.indexOf(s);
  t.true(at('<h2>Summary</h2>') < at('Change gate: blocked'));
  t.true(at('<h3>Top findings</h3>') < at('<h2>Findings</h2>'));
  t.true(at('<h3>Open blocking questions</h3>') < at('<h2>Findings</h2>'));
  t.true(at('<h2>Findings</h2>') < at('<h2>Architecture</h2>'));
  t.is(count(html, '<section class="control">'), 2);
  t.is(count(html, RATIONALE), 1);
  t.regex(html, /figure\{[^}]*overflow:auto;max-height:85vh/);
  t.regex(html, /@media print\{[^}]*\}?.*figure svg\{max-width:100%\}/s);
  // Hostile text stays text.
  const evil = renderReportHtml(
    { ...report, findings: [finding(5, 'images-pinned', 'medium', '<script>alert(1)</script>')] },
    ctx,
  );
  t.false(evil.includes('<script>'));
});

test('a real audit detail (every failing check, then the control) is condensed: the rows are the list', (t) => {
  // The detail an audit stores on each finding (activities/controls): the assessment's rationale,
  // which names every failing check, then the control's description.
  const titles = [1, 2, 3].map((i) => `src/s${i}/Dockerfile runs as root (no USER instruction)`);
  const detail = `3 of 9 check(s) fail: ${titles.join('; ')}. Control: Dockerfiles set a non-root USER.`;
  const real: AuditReportContent = {
    ...report,
    assessments: report.assessments.map((a) =>
      a.control_key === 'containers-non-root'
        ? { ...a, rationale: detail.split(' Control:')[0]! }
        : a,
    ),
    findings: [
      ...[1, 2, 3].map((i) => ({
        ...finding(i, 'containers-non-root', 'high', detail),
        title: `Containers run as non-root: ${titles[i - 1]}`,
      })),
      finding(4, 'images-pinned', 'medium', 'Image references carry an explicit tag.'),
    ],
  };
  for (const out of [renderReportMarkdown(real, ctx), renderReportHtml(real, ctx)]) {
    t.is(count(out, '3 of 9 check(s) fail. Control: Dockerfiles set a non-root USER.'), 1);
    // Each failing check is named in its own row, in the top findings and nowhere else.
    for (const x of titles) t.true(count(out, x) <= 2, x);
    const findings = out.slice(out.search(/## Findings|<h2>Findings<\/h2>/));
    t.false(
      findings.includes('Containers run as non-root: src/s2/Dockerfile'),
      'rows drop the control title (the group heading says it)',
    );
    t.regex(out, /3 of 9 check\(s\) fail \(listed under Findings\)\./, 'the controls table too');
  }
});

test('top findings: one per control before a second of any', (t) => {
  const many: AuditReportContent = {
    ...report,
    findings: [
      ...[1, 2, 3, 4, 5, 6].map((i) => finding(i, 'containers-non-root', 'high')),
      finding(7, 'images-pinned', 'medium', 'Image references carry an explicit tag.'),
    ],
  };
  const md = renderReportMarkdown(many, ctx);
  const summary = md.slice(0, md.indexOf('## Findings'));
  t.is(count(summary, 'finding 7 of images-pinned'), 1, 'the other control is not hidden');
  t.is(count(summary, 'of containers-non-root'), 4);
});
