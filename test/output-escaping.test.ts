/**
 * Escaping by output: every string of the hostile corpus (test/fixtures/hostile) put in every
 * text field of a report, an export and a decision, then rendered in every format, each checked
 * for the safety property of where it is shown:
 * - Markdown (report, decision brief, MADR): no raw HTML, no image, no link but the
 *   repository's own http(s) URL (and MADR's index to its sibling files), no bare autolink,
 *   code spans that hold, no control character;
 * - HTML and SVG: no element or attribute but the renderer's own, no event handler;
 * - Mermaid and Structurizr: the text stays inside its quoted label (same lines as a benign run);
 * - SARIF: artifact URIs are RFC 3986 relative references under %SRCROOT% that stay inside it;
 * - JUnit: well-formed XML 1.0;
 * - Backstage: valid YAML;
 * - terminal (CLI tables, fields, JSON, text) and MCP text: no control character or escape.
 */
import test, { type ExecutionContext } from 'ava';
import { parseAllDocuments } from 'yaml';
import { readXml } from '../analysis/code/xml';
import { renderMadr, renderExportText } from '../domain/exports/render';
import { mdCode, mdLink, mdText } from '../domain/output/markdown';
import { sarifUri } from '../domain/output/sarif';
import { terminalText } from '../domain/output/terminal';
import {
  renderReportHtml,
  renderReportJunit,
  renderReportMarkdown,
  renderReportSarif,
} from '../domain/reports/render';
import { answerFromGraph } from '../domain/assistant/answers';
import type { AssistantContext } from '../domain/assistant/facts';
import { routeQuestion } from '../domain/assistant/route';
import { toolResult } from '../api/mcp/server';
import { asJson, fields, table } from '../cli/output';
import { HOSTILE_CORPUS } from './fixtures/hostile/corpus';
import { brief, exportInput, ID, report, REPO_URL } from './fixtures/hostile/documents';

/** Control characters, bidi controls and unpaired surrogates: never raw in any output. */
const RAW_CONTROL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Asserts `text` does not match `re`, showing only the text around the match when it does. */
function no(t: ExecutionContext, text: string, re: RegExp, what?: string): void {
  const m = re.exec(text);
  t.true(
    m === null,
    m
      ? `${what ?? re}: ${JSON.stringify(text.slice(Math.max(0, m.index - 40), m.index + 40))}`
      : '',
  );
}

/**
 * Markdown with its code spans (backslash escapes honoured, as CommonMark does) and the
 * repository's own link taken out: what is left is what a renderer reads as Markdown.
 */
function outsideCode(md: string): string {
  const body = md.replace(/^---\n[\s\S]*?\n---\n/, ''); // MADR's YAML front matter: data
  let out = '';
  for (let i = 0; i < body.length;) {
    if (body[i] === '\\') {
      out += body.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (body[i] === '`') {
      let j = i;
      while (body[j] === '`') j++;
      const fence = body.slice(i, j);
      const close = new RegExp(`(?<!\`)${fence}(?!\`)`, 'g');
      close.lastIndex = j;
      const m = close.exec(body);
      if (m) {
        out += ' CODE ';
        i = m.index + fence.length;
        continue;
      }
      out += fence;
      i = j;
      continue;
    }
    out += body[i];
    i++;
  }
  return out.replace(`(<${new URL(REPO_URL).href}>)`, '(OWN)');
}

function markdownSafe(t: ExecutionContext, md: string, what: string): void {
  no(t, md, RAW_CONTROL, `${what}: a control character`);
  const text = outsideCode(md);
  no(t, text, /<[A-Za-z/!?]/, `${what}: raw HTML`);
  no(t, text, /(^|[^\\])!\[/m, `${what}: an image`);
  // Every link destination is the repository's own URL or (MADR) a sibling file.
  for (const m of text.matchAll(/(^|[^\\])\]\(([^)]*)\)/gm))
    t.true(/^(OWN|\d{4}-[a-z0-9-]+\.md)$/.test(m[2]!), `${what}: a link to ${m[2]!.slice(0, 80)}`);
  no(t, text, /(^|[^\\])\]\[/m, `${what}: a reference link`);
  no(t, text, /^ {0,3}\[[^\]]*\]:/m, `${what}: a link definition`);
  no(t, text, /[a-z]:\/\//i, `${what}: a bare URL GFM would autolink`);
  no(t, text, /(^|[^\\])\bwww\./im, `${what}: a www. autolink`);
  no(t, text, /^ {0,3}(#{1,6} Owned|[-*+] item|1[.)] one|> quote)/m, `${what}: a block`);
}

const SAFE_TAGS = new Set(
  'html head meta title style body section h1 h2 h3 p br code ol table thead tbody tr th td span small strong ul li figure svg g rect text path defs marker polygon line title desc circle ellipse tspan'.split(
    ' ',
  ),
);

function markupSafe(t: ExecutionContext, doc: string, what: string): void {
  for (const m of doc.matchAll(/<\/?([A-Za-z][\w:-]*)/g))
    t.true(SAFE_TAGS.has(m[1]!.toLowerCase()), `${what}: element <${m[1]}>`);
  const tags = doc.replace(/"[^"]*"|'[^']*'/g, '""').match(/<[^>]*>/g) ?? [];
  for (const tag of tags) no(t, tag, /\son[a-z]+\s*=/i, `${what}: an event handler attribute`);
  no(t, doc, /(href|src)\s*=\s*["']?\s*javascript:/i, `${what}: a javascript: URL`);
  // XML keeps CR (whitespace to a browser); every other control character is gone.
  no(t, doc.replace(/\r/g, ''), RAW_CONTROL, `${what}: a control character`);
}

/** An RFC 3986 relative-path reference whose first segment has no ':' (no scheme). */
const RELATIVE_REF =
  /^(?:[A-Za-z0-9\-._~!$&'()*+,;=@]|%[0-9A-F]{2})+(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-F]{2})*)*$/;

const benignExport = exportInput('plain');

for (const { name, text: x } of HOSTILE_CORPUS) {
  test(`${name}: every output format`, (t) => {
    const r = report(x);
    const ctx = {
      content_sha256: 'a'.repeat(64),
      approval: { actor_login: x, actor_role: 'admin', rationale: x, created_at: '2026-11-26' },
    };

    // Markdown: report, decision brief, MADR files.
    markdownSafe(t, renderReportMarkdown(r, ctx), 'report markdown');
    markdownSafe(t, brief(x), 'decision brief');
    for (const f of renderMadr(exportInput(x))) {
      markdownSafe(t, f.text, `MADR ${f.path}`);
      t.regex(f.path, /^decisions\/[a-zA-Z0-9.-]+$/);
    }

    // HTML report and SVG diagram.
    markupSafe(t, renderReportHtml(r, ctx), 'report html');
    const input = exportInput(x);
    markupSafe(t, renderExportText('svg', input), 'svg');

    // Mermaid and Structurizr: the same lines as a benign system, the text inside its quotes.
    for (const format of ['mermaid', 'structurizr'] as const) {
      const out = renderExportText(format, input);
      no(t, out, RAW_CONTROL, `${format}: a control character`);
      t.is(
        out.split('\n').length,
        renderExportText(format, benignExport).split('\n').length,
        `${format}: the text added lines`,
      );
    }
    const mermaid = renderExportText('mermaid', input);
    no(
      t,
      mermaid.replace(/"[^"\n]*"/g, '""').replace(/-->/g, ''),
      /[<>`]/,
      'mermaid: markup outside a label',
    );

    // Backstage: YAML that parses, nothing raw.
    const yaml = renderExportText('backstage', input);
    t.true(
      parseAllDocuments(yaml).every((d) => d.errors.length === 0),
      'backstage: YAML',
    );
    no(t, yaml, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, 'backstage: control');

    // SARIF: relative URI references under %SRCROOT%, inside it; nothing raw in its JSON.
    const sarif = renderReportSarif(r);
    const locations = sarif.runs[0]!.results!.flatMap((res) => res.locations ?? []);
    t.true(locations.length >= 2);
    for (const l of locations) {
      const a = l.physicalLocation!.artifactLocation!;
      t.is(a.uriBaseId, '%SRCROOT%');
      t.regex(a.uri!, RELATIVE_REF, `sarif uri ${a.uri}`);
      t.false(a.uri!.split('/').includes('..'), `sarif uri ${a.uri} climbs out`);
      t.false(a.uri!.startsWith('/'));
    }
    no(t, JSON.stringify(sarif), RAW_CONTROL, 'sarif: a control character');
    no(t, renderExportText('sarif', input), RAW_CONTROL, 'sarif export');

    // JUnit: well-formed XML 1.0 holding the text.
    for (const xml of [renderReportJunit(r), renderExportText('junit', input)]) {
      t.notThrows(() => readXml(xml), 'junit: well-formed');
      no(t, xml, RAW_CONTROL, 'junit: a control character');
    }

    // Terminal: tables, fields, JSON and text the CLI prints.
    const rows = [
      [x, 'open'],
      ['b', x],
    ];
    const tab = table(['title', 'status'], rows);
    t.is(tab.trimEnd().split('\n').length, rows.length + 1, 'table: the text added rows');
    t.is(
      fields([
        ['title', x],
        ['status', 'open'],
      ])
        .trimEnd()
        .split('\n').length,
      2,
    );
    for (const out of [tab, fields([['title', x]]), asJson({ x }), terminalText(x)]) {
      t.false(out.includes('\u001b'), 'terminal: ESC');
      no(t, out, RAW_CONTROL, 'terminal: a control character');
    }
    t.deepEqual(JSON.parse(asJson({ x })), { x }, 'the JSON still means the same value');

    // MCP tool text: JSON, a text body and a text file.
    for (const body of [{ title: x }, `# ${x}`, Buffer.from(x, 'utf8')]) {
      const res = toolResult({ status: 200, type: 'text/markdown', body }, '/v1/x');
      const item = res.content[0]!;
      t.is(item.type, 'text');
      no(t, (item as { text: string }).text, RAW_CONTROL, 'mcp: a control character');
    }
  });
}

test('the assistant quotes finding titles plain, on one line', (t) => {
  for (const { text: x } of HOSTILE_CORPUS) {
    const q = 'what are the open findings';
    const ctx = assistantContext(x);
    const a = answerFromGraph(ctx, q, routeQuestion(q));
    if (a.kind !== 'answer') return t.fail(`not answered: ${a.kind}`);
    no(t, a.text, RAW_CONTROL);
    const lines = a.text.split('\n');
    t.is(lines.length, 2, 'the finding is one line');
    t.regex(lines[1]!, /^- finding \S+ \(high, sec\.secrets\) ".*"$/);
  }
});

function assistantContext(title: string): AssistantContext {
  return {
    snapshot: {
      id: 'snap-1',
      generated_at: '2026-11-26T00:00:00.000Z',
      sources: ['code'],
      graph: { entities: [], relationships: [] },
    },
    previous: null,
    history: [],
    cases: [],
    decisions: [],
    findings: [
      {
        id: ID,
        control_key: 'sec.secrets',
        severity: 'high',
        title,
        status: 'open',
        entity_key: null,
        evidence_ids: [],
      },
    ],
  };
}

test('Markdown links: only http(s) on the repository host, never javascript:', (t) => {
  t.is(mdLink('repo', REPO_URL, 'git.example.com'), `[repo](<${REPO_URL}>)`);
  t.is(mdLink('x', 'https://evil.example/', 'git.example.com'), 'x (`https://evil.example/`)');
  t.is(mdLink('x', 'javascript:alert(1)', 'git.example.com'), 'x (`javascript:alert(1)`)');
  t.is(mdLink('x', 'file:///etc/passwd', 'file'), 'x (`file:///etc/passwd`)');
  t.is(mdText('<b>&'), '&lt;b&gt;&amp;');
  t.is(mdText('[a](b)'), '\\[a\\](b)');
  t.is(mdCode('a`b'), '``a`b``');
  t.is(mdCode('`x'), '`` `x ``');
  t.is(mdCode('a|b', true), '`a\\|b`');
});

test('SARIF URIs: percent-encoded, relative, clamped at the root', (t) => {
  t.is(sarifUri('src/app.ts'), 'src/app.ts');
  t.is(sarifUri('dir name/a#b?.ts'), 'dir%20name/a%23b%3F.ts');
  t.is(sarifUri('../../etc/passwd'), 'etc/passwd');
  t.is(sarifUri('/abs/x'), 'abs/x');
  t.is(sarifUri('C:\\win.ini'), 'C%3A/win.ini');
  t.is(sarifUri('a\u001b[31m'), 'a%1B%5B31m');
  t.is(sarifUri('x\ud800'), 'x%EF%BF%BD');
  t.is(sarifUri('.'), '.');
  t.is(sarifUri('naïve(1).ts'), 'na%C3%AFve%281%29.ts');
});
