/**
 * Audit reports on the real stack: a repository audited, its report as JSON, Markdown, printable
 * HTML (diagram inline), SARIF (validated against the SARIF 2.1.0 schema) and JUnit (parsed);
 * approval by another member (self-approval, twice, a changed report and an audit that did not
 * complete refused with their codes); the approved version served unchanged; a later audit's
 * report a new version; the audits listed by their report's status (what waits for an approver).
 */
import fs from 'node:fs';
import test from 'ava';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { readXml } from '../analysis/code/xml';
import { runAudit, startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { addMember, type Member } from './helpers/decisions';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call, isProblem } from './helpers/http';
import { CHANGES_V1, CHANGES_V2 } from './fixtures/changes-repo';

let h: AuditHarness;
let tenant: Tenant;
let bob: Member;
let repo: TestRepo;
let repositoryId: string;
let auditId: string;

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const get = (path: string, token = tenant.token) =>
  call(h.app.url, 'GET', `${ws()}${path}`, { token });
const approve = (body: Record<string, unknown>, token = bob.token, id = auditId) =>
  call(h.app.url, 'POST', `${ws()}/audits/${id}/report/approval`, { token, body });

const audit = (body: Record<string, unknown> = {}) =>
  runAudit(h.app.url, tenant.token, tenant.workspaceId, { repository_id: repositoryId, ...body });

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db, { login: 'alice' });
  bob = await addMember(h.app.services.db, tenant, 'bob', 'maintainer');
  repo = createRepo(CHANGES_V1);
  const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'orders-system', url: `file://${repo.dir}` },
  });
  repositoryId = created.body.id;
  const first = await audit();
  if (first.status !== 'completed') throw new Error(`audit ${first.status}`);
  auditId = first.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

test.serial('the JSON report says what was audited, found and failed', async (t) => {
  const r = await get(`/audits/${auditId}/report`);
  t.is(r.status, 200, r.text);
  t.is(r.body.status, 'draft');
  t.is(r.body.approval, null);
  t.regex(r.body.content_sha256, /^[0-9a-f]{64}$/);
  t.is(r.headers.get('x-content-sha256'), r.body.content_sha256);
  const c = r.body.content;
  t.is(c.audit_id, auditId);
  t.is(c.repository.name, 'orders-system');
  t.regex(c.commit_sha, /^[0-9a-f]{40}$/);
  const keys = c.architecture.entities.map((e: { canonical_key: string }) => e.canonical_key);
  for (const k of [
    'service:orders',
    'service:billing',
    'datastore:orders-db',
    'datastore:legacy-db',
  ])
    t.true(keys.includes(k), k);
  t.true(c.findings.length > 0, 'the fixture has findings');
  t.true(c.assessments.length >= 10, 'every control of the catalog is assessed');
  const failing = c.assessments.filter((a: { status: string }) => a.status === 'fail').length;
  t.is(c.summary.assessments.fail, failing);
  // Each finding of the audit is in the report, as listAuditFindings has it.
  const listed = await get(`/audits/${auditId}/findings?limit=200`);
  t.deepEqual(
    c.findings.map((f: { id: string }) => f.id).sort(),
    listed.body.items.map((f: { id: string }) => f.id).sort(),
  );
  // Asked twice, the same rows give the same version.
  t.is((await get(`/audits/${auditId}/report`)).body.content_sha256, r.body.content_sha256);
});

test.serial('Markdown and printable HTML with the diagram inline', async (t) => {
  const md = await get(`/audits/${auditId}/report?format=markdown`);
  t.is(md.status, 200);
  t.regex(md.headers.get('content-type') ?? '', /^text\/markdown/);
  t.regex(md.text, /^# Architecture audit report: orders-system/);
  // Findings grouped by control (issue 30): a section per control, its rationale once, then rows.
  t.regex(
    md.text,
    /## Findings\n\n### \w+: .+ \(`[a-z-]+`, \d+ finding\(s\), \d+ open\)\n\n.+\n\n\| finding \| location \| status \|/,
  );
  t.true(md.text.indexOf('## Summary') < md.text.indexOf('## Findings'));
  t.regex(md.text, /Status: Draft: not approved\./);

  const html = await get(`/audits/${auditId}/report?format=html`);
  t.is(html.status, 200);
  t.regex(html.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(html.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  t.true(html.text.startsWith('<!DOCTYPE html>'));
  t.regex(html.text, /<figure><svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  t.regex(html.text, /@media print/);
  // Self-contained: no script, no stylesheet or image fetched from anywhere.
  t.notRegex(html.text, /<script|<link|<img|src=|@import|url\((?!#)/i);
  for (const name of ['orders', 'billing', 'orders-db', 'legacy-db'])
    t.regex(html.text, new RegExp(`>${name}<`), `${name} drawn`);
});

test.serial('SARIF 2.1.0 of the findings, valid against the official schema', async (t) => {
  const sarif = await get(`/audits/${auditId}/report?format=sarif`);
  t.is(sarif.status, 200);
  t.regex(sarif.headers.get('content-type') ?? '', /^application\/sarif\+json/);
  const schema = JSON.parse(
    fs.readFileSync(require.resolve('schemastore/schemas/json/sarif-2.1.0.json'), 'utf8'),
  );
  delete schema.$schema;
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  t.true(validate(sarif.body), JSON.stringify(validate.errors));
  const findings = (await get(`/audits/${auditId}/report`)).body.content.findings as Array<{
    fingerprint: string;
    control_key: string;
    locations: Array<{ path: string; start_line: number }>;
  }>;
  const results = sarif.body.runs[0].results as Array<Record<string, any>>;
  t.is(results.length, findings.length);
  for (const r of results) {
    t.true(r.locations.length >= 1, 'every result has a location');
    t.truthy(r.locations[0].physicalLocation.artifactLocation.uri);
  }
  t.deepEqual(
    results.map((r) => r.partialFingerprints['archauditFinding/v1']).sort(),
    findings.map((f) => f.fingerprint).sort(),
  );
  const located = findings.find((f) => f.locations.length > 0)!;
  const result = results.find(
    (r) => r.partialFingerprints['archauditFinding/v1'] === located.fingerprint,
  )!;
  t.is(result.ruleId, located.control_key);
  t.is(result.locations[0].physicalLocation.artifactLocation.uri, located.locations[0]!.path);
  t.is(
    result.locations[0].physicalLocation.region.startLine,
    Math.max(1, located.locations[0]!.start_line),
  );
  t.is(sarif.body.runs[0].versionControlProvenance[0].revisionId.length, 40);
});

test.serial('JUnit XML: one test case per control, failures for failing controls', async (t) => {
  const junit = await get(`/audits/${auditId}/report?format=junit`);
  t.is(junit.status, 200);
  t.regex(junit.headers.get('content-type') ?? '', /^application\/xml/);
  const doc = readXml(junit.text);
  t.deepEqual(doc.errors, []);
  t.is(doc.root?.name, 'testsuites');
  const cases = doc.root!.children.flatMap((s) => s.children.filter((c) => c.name === 'testcase'));
  const report = (await get(`/audits/${auditId}/report`)).body.content;
  t.is(cases.length, report.assessments.length);
  const failed = cases.filter((c) => c.children.some((x) => x.name === 'failure'));
  t.is(failed.length, report.summary.assessments.fail + report.summary.assessments.partial);
});

test.serial('bad formats, unknown audits and another workspace are refused', async (t) => {
  const bad = await get(`/audits/${auditId}/report?format=pdf`);
  t.is(bad.status, 400);
  t.is(bad.body.code, 'validation_failed');
  const unknown = await get(`/audits/00000000-0000-4000-8000-000000000000/report`);
  t.is(unknown.status, 404);
  t.is(unknown.body.code, 'not_found');
  const other = await createTenant(h.app.services.db);
  const foreign = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${other.workspaceId}/audits/${auditId}/report`,
    { token: other.token },
  );
  t.is(foreign.status, 404);
  const noScope = await createToken(h.app.services.db, tenant, ['audits:read']);
  const refused = await get(`/audits/${auditId}/report`, noScope.token);
  t.is(refused.status, 403);
  t.deepEqual(refused.body.required_scopes, ['reports:read']);
});

test.serial('an audit that did not complete has no report to read or approve', async (t) => {
  const failed = await audit({ branch_ref: 'no-such-branch' });
  t.is(failed.status, 'failed');
  const r = await get(`/audits/${failed.id}/report`);
  t.is(r.status, 409);
  t.true(isProblem(r));
  t.is(r.body.code, 'audit_not_completed');
  t.is(r.body.audit_status, 'failed');
  const a = await approve({ rationale: 'looks fine' }, bob.token, failed.id);
  t.is(a.status, 409);
  t.is(a.body.code, 'audit_not_completed');
});

test.serial(
  'approval: not by the starter, only the version read, once; then immutable',
  async (t) => {
    const before = await get(`/audits/${auditId}/report`);

    const self = await approve({ rationale: 'I ran it, it is fine' }, tenant.token);
    t.is(self.status, 403);
    t.is(self.body.code, 'self_approval');

    const readOnly = await createToken(
      h.app.services.db,
      { ...tenant, memberId: bob.id } as Tenant,
      ['reports:read'],
    );
    const noScope = await approve({ rationale: 'fine' }, readOnly.token);
    t.is(noScope.status, 403);
    t.is(noScope.body.code, 'insufficient_scope');

    const short = await approve({ rationale: 'ok' });
    t.is(short.status, 400);
    t.is(short.body.code, 'validation_failed');

    // A finding set aside changes the draft report and its hash.
    const finding = before.body.content.findings[0];
    const set = await call(h.app.url, 'PATCH', `${ws()}/findings/${finding.id}`, {
      token: tenant.token,
      body: { status: 'accepted_risk', note: 'known, tracked elsewhere' },
    });
    t.is(set.status, 200, set.text);
    const changed = await get(`/audits/${auditId}/report`);
    t.not(changed.body.content_sha256, before.body.content_sha256);
    const stale = await approve({
      rationale: 'Reviewed with the team',
      content_sha256: before.body.content_sha256,
    });
    t.is(stale.status, 409);
    t.is(stale.body.code, 'report_changed');
    t.is(stale.body.content_sha256, changed.body.content_sha256);

    const ok = await approve({
      rationale: 'Reviewed with the team',
      content_sha256: changed.body.content_sha256,
    });
    t.is(ok.status, 201, ok.text);
    t.like(ok.body, {
      audit_id: auditId,
      actor_id: bob.id,
      actor_role: 'maintainer',
      authorization_scope: 'reports:approve',
      rationale: 'Reviewed with the team',
      content_sha256: changed.body.content_sha256,
      report_version: changed.body.report_version,
    });

    const twice = await approve({ rationale: 'again' });
    t.is(twice.status, 409);
    t.is(twice.body.code, 'already_decided');
    t.is(twice.body.current_status, 'approved');

    // The finding changes again: the approved report does not.
    const back = await call(h.app.url, 'PATCH', `${ws()}/findings/${finding.id}`, {
      token: tenant.token,
      body: { status: 'open', note: 'reopened for the next review' },
    });
    t.is(back.status, 200, back.text);
    const after = await get(`/audits/${auditId}/report`);
    t.is(after.body.status, 'approved');
    t.is(after.body.content_sha256, changed.body.content_sha256);
    t.deepEqual(after.body.content, changed.body.content);
    t.deepEqual(after.body.approval, ok.body);
    const md = await get(`/audits/${auditId}/report?format=markdown`);
    t.regex(md.text, /Status: Approved by bob \(maintainer\)/);
    t.regex(md.text, new RegExp(changed.body.content_sha256));
    const sarif = await get(`/audits/${auditId}/report?format=sarif`);
    const suppressed = sarif.body.runs[0].results.filter(
      (r: { partialFingerprints: Record<string, string> }) =>
        r.partialFingerprints['archauditFinding/v1'] === finding.fingerprint,
    )[0];
    t.is(suppressed.suppressions[0].justification, 'accepted_risk', 'as approved, set aside');

    // Recorded: an audit event and an activity item naming the approver.
    const events = await get(`/audit-events?limit=200`);
    const event = events.body.items.find((e: { action: string }) => e.action === 'report.approved');
    t.truthy(event);
    t.is(event.resource_id, auditId);
    const feed = await get(`/activity?limit=200`);
    t.true(
      feed.body.items.some((e: { action?: string; verb?: string; summary?: string }) =>
        JSON.stringify(e).includes('report.approved'),
      ),
    );
  },
);

test.serial('a later audit of the repository has a report version of its own', async (t) => {
  repo.commit(CHANGES_V2, 'reports service');
  const next = await audit();
  t.is(next.status, 'completed');
  const r = await get(`/audits/${next.id}/report`);
  t.is(r.status, 200);
  t.is(r.body.status, 'draft');
  const first = await get(`/audits/${auditId}/report`);
  t.not(r.body.report_version, first.body.report_version);
  t.true(
    r.body.content.architecture.entities.some(
      (e: { canonical_key: string }) => e.canonical_key === 'service:reports',
    ),
  );
  t.is(first.body.status, 'approved', 'the earlier approval stays with its version');
  // What waits for an approver, without reading any report: the audits filtered by their
  // report's status (only completed ones; the failed audit above has no report).
  const ids = async (status: string) => {
    const page = await get(`/audits?report_status=${status}`);
    t.is(page.status, 200, page.text);
    return (page.body.items as Array<{ id: string }>).map((a) => a.id);
  };
  t.deepEqual(await ids('draft'), [next.id]);
  t.deepEqual(await ids('approved'), [auditId]);
  const ok = await approve({ rationale: 'Second review done' }, bob.token, next.id);
  t.is(ok.status, 201);
  t.deepEqual(await ids('draft'), []);
  t.deepEqual(await ids('approved'), [next.id, auditId]);
  const bad = await get('/audits?report_status=pending');
  t.is(bad.status, 400);
  t.true(isProblem(bad), bad.text);
  t.is(bad.body.code, 'validation_failed');
});
