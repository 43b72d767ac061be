/**
 * A report is of its audit, as it was then (issue 26): audit A of a repository, its report in
 * every format; the code changes and audit B moves one finding (another line) and resolves
 * another; A's report is byte for byte what it was (same content_sha256) and shows A's findings
 * as A saw them, B's report shows B's.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { CONTROLS_FIXTURE, PINNED_ACTION, workflow } from './fixtures/controls-repo';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let repositoryId: string;

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const get = (path: string) => call(h.app.url, 'GET', `${ws()}${path}`, { token: tenant.token });

async function audit(body: Record<string, unknown>) {
  const r = await call(h.app.url, 'POST', `${ws()}/audits`, { token: tenant.token, body });
  if (r.status !== 202) throw new Error(`createAudit ${r.status}: ${r.text}`);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, r.body.id, 180_000);
  if (done.body.status !== 'completed') throw new Error(`audit ended ${done.text}`);
  return done.body as { id: string; repository_id: string | null; upload_id: string | null };
}

const FORMATS = ['json', 'markdown', 'html', 'sarif', 'junit'] as const;

/** Every rendering of an audit's report, as served. */
async function reports(auditId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const format of FORMATS) {
    const r = await get(`/audits/${auditId}/report?format=${format}`);
    if (r.status !== 200) throw new Error(`report ${format} ${r.status}: ${r.text}`);
    out[format] = r.text;
  }
  return out;
}

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(CONTROLS_FIXTURE);
  const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  repositoryId = created.body.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

test.serial('a later audit changes no earlier report, in any format', async (t) => {
  const a = await audit({ repository_id: repositoryId });
  const before = await reports(a.id);
  const reportA = JSON.parse(before.json!);
  const byControl = (findings: Array<{ control_key: string }>) =>
    new Map(findings.map((f) => [f.control_key, f as Record<string, any>]));
  const seenByA = byControl(reportA.content.findings);
  t.deepEqual([...seenByA.keys()].sort(), [
    'ci-actions-pinned',
    'images-pinned',
    'lockfile-present',
  ]);
  const imageLineA = seenByA.get('images-pinned')!.locations[0].start_line;

  // The action is pinned (B resolves that finding) and a comment moves the compose file's lines
  // (B sees the image finding on another line).
  repo.commit(
    {
      '.github/workflows/ci.yml': workflow(PINNED_ACTION),
      'docker-compose.yml': `# services of the shop\n# (moved down two lines)\n${CONTROLS_FIXTURE['docker-compose.yml']}`,
    },
    'pin the action; comment the compose file',
  );
  const b = await audit({ repository_id: repositoryId });
  const pinned = seenByA.get('ci-actions-pinned')!;
  const live = (await get(`/findings/${pinned.id}`)).body;
  t.like(live, { status: 'resolved', resolved_audit_id: b.id });
  const image = (await get(`/findings/${seenByA.get('images-pinned')!.id}`)).body;
  t.is(image.locations[0].start_line, imageLineA + 2, 'the finding row follows B');

  const after = await reports(a.id);
  for (const format of FORMATS) t.is(after[format], before[format], `${format}: byte-identical`);
  const again = JSON.parse(after.json!);
  t.is(again.content_sha256, reportA.content_sha256);
  t.is(byControl(again.content.findings).get('ci-actions-pinned')!.status, 'open', 'as A saw it');
  t.is(byControl(again.content.findings).get('images-pinned')!.locations[0].start_line, imageLineA);

  const reportB = (await get(`/audits/${b.id}/report`)).body;
  const seenByB = byControl(reportB.content.findings);
  t.deepEqual([...seenByB.keys()].sort(), ['images-pinned', 'lockfile-present']);
  t.is(seenByB.get('images-pinned')!.locations[0].start_line, imageLineA + 2);
  t.not(reportB.content_sha256, reportA.content_sha256);
});
