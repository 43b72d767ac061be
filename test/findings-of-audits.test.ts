/**
 * A report is of its audit, as it was then (issue 26): audit A of a repository, its report in
 * every format; the code changes and audit B moves one finding (another line) and resolves
 * another; A's report is byte for byte what it was (same content_sha256) and shows A's findings
 * as A saw them, B's report shows B's. An uploaded folder's audit that names the repository joins
 * its findings (no second, repository-less set) without becoming its architecture, baseline or
 * whole source; one that names none has findings that say they are the upload's.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { tarGz } from './helpers/archives';
import { CONTROLS_FIXTURE, PINNED_ACTION, workflow } from './fixtures/controls-repo';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let repositoryId: string;
let auditB: string;

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const get = (path: string) => call(h.app.url, 'GET', `${ws()}${path}`, { token: tenant.token });

async function audit(body: Record<string, unknown>) {
  const r = await call(h.app.url, 'POST', `${ws()}/audits`, { token: tenant.token, body });
  if (r.status !== 202) throw new Error(`createAudit ${r.status}: ${r.text}`);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, r.body.id, 180_000);
  if (done.body.status !== 'completed') throw new Error(`audit ended ${done.text}`);
  return done.body as {
    id: string;
    repository_id: string | null;
    upload_id: string | null;
    audit_type: string;
  };
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
  auditB = b.id;
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

/** Uploads `files` as a tar.gz; returns the upload's id. */
async function upload(files: Record<string, string>, filename = 'shop.tgz'): Promise<string> {
  const bytes = await tarGz(
    Object.entries(files).map(([name, data]) => ({ name: `./${name}`, data })),
  );
  const r = await call(h.app.url, 'POST', `${ws()}/uploads?filename=${filename}`, {
    token: tenant.token,
    raw: bytes,
    headers: { 'Content-Type': 'application/gzip' },
  });
  if (r.status !== 201) throw new Error(`upload ${r.status}: ${r.text}`);
  return r.body.id as string;
}

const list = async (query: string) =>
  (await get(`/findings?limit=200&${query}`)).body.items as Array<Record<string, any>>;

test.serial(
  'an upload audit naming the repository joins its findings, and is not its architecture or whole source',
  async (t) => {
    const before = await list(`repository_id=${repositoryId}`);
    const architectureBefore = (await get(`/repositories/${repositoryId}/architecture`)).body;
    t.is(architectureBefore.audit_id, auditB);

    // The folder as it was before the action was pinned.
    const u = await audit({
      upload_id: await upload(CONTROLS_FIXTURE),
      repository_id: repositoryId,
    });
    t.like(u, { repository_id: repositoryId, audit_type: 'upload' });
    t.truthy(u.upload_id);
    const seen = (await get(`/audits/${u.id}/findings?limit=200`)).body.items as any[];
    t.deepEqual(seen.map((f) => f.control_key).sort(), [
      'ci-actions-pinned',
      'images-pinned',
      'lockfile-present',
    ]);
    t.true(seen.every((f) => f.repository_id === repositoryId && f.source === 'repository'));
    t.true(seen.every((f) => f.source_label === 'shop' && f.upload_id === null));
    const after = await list(`repository_id=${repositoryId}`);
    t.is(after.length, before.length, 'no second set: the same findings, by fingerprint');
    t.deepEqual(after.map((f) => f.id).sort(), before.map((f) => f.id).sort());
    t.is((await list('source=upload')).length, 0, 'no repository-less findings');
    const action = after.find((f) => f.control_key === 'ci-actions-pinned')!;
    t.like(action, { status: 'open', last_seen_audit_id: u.id }, 'seen again in the folder');

    // Not the repository's latest architecture; its snapshot is its own.
    const architectureAfter = (await get(`/repositories/${repositoryId}/architecture`)).body;
    t.is(architectureAfter.audit_id, auditB);
    const snapshot = await h.app.services
      .db('architecture_snapshots')
      .where({ audit_id: u.id })
      .first('repository_id');
    t.is(snapshot.repository_id, null);

    // A folder that is not the whole repository resolves none of its findings.
    const partial = await audit({
      upload_id: await upload({ 'README.md': '# just the readme\n' }, 'readme.tgz'),
      repository_id: repositoryId,
    });
    const stillOpen = new Set(
      (await list(`repository_id=${repositoryId}&status=open`)).map((f) => f.control_key),
    );
    for (const key of ['ci-actions-pinned', 'images-pinned', 'lockfile-present'])
      t.true(stillOpen.has(key), `${key}: audit ${partial.id} resolved nothing`);

    // The report says both what the audit read and whose it is.
    const md = await get(`/audits/${u.id}/report?format=markdown`);
    t.regex(md.text, /Architecture audit report: shop \(upload shop\.tgz\)/);

    // A repository of another workspace (or none) is refused, with the field named.
    const other = await createTenant(h.app.services.db);
    const foreign = await call(h.app.url, 'POST', `/v1/workspaces/${other.workspaceId}/audits`, {
      token: other.token,
      body: { upload_id: u.upload_id, repository_id: repositoryId },
    });
    t.is(foreign.status, 400, foreign.text);
    t.is(foreign.body.code, 'validation_failed');
    t.is(foreign.body.errors[0].path, '/repository_id');
  },
);

test.serial(
  "an upload audit naming no repository: its findings say they are the upload's",
  async (t) => {
    const uploadId = await upload(CONTROLS_FIXTURE, 'loose.tgz');
    const u = await audit({ upload_id: uploadId });
    t.is(u.repository_id, null);
    const own = await list('source=upload');
    t.deepEqual(own.map((f) => f.control_key).sort(), [
      'ci-actions-pinned',
      'images-pinned',
      'lockfile-present',
    ]);
    for (const f of own) {
      t.like(f, { repository_id: null, source: 'upload', upload_id: uploadId });
      t.is(f.source_label, `upload loose.tgz (audit ${u.id.slice(0, 8)})`);
    }
    const all = await list('');
    t.true(all.every((f) => typeof f.source_label === 'string' && f.source_label.length > 0));
    t.is(
      all.filter((f) => f.source === 'repository').length,
      (await list('source=repository')).length,
    );
    const one = (await get(`/findings/${own[0]!.id}`)).body;
    t.is(one.source_label, own[0]!.source_label);
  },
);
