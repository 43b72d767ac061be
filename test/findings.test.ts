/**
 * The controls stage end to end, through the HTTP API: audits of a real git repository assess
 * every catalog control; failing controls raise findings that keep their id and fingerprint
 * across audits of unchanged code, resolve when the code is fixed, reopen when it comes back,
 * and keep a user's accepted_risk. Then the finding API: filters, pages, bounds, tenancy.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call, isProblem } from './helpers/http';
import {
  CONTROLS_FIXTURE,
  PINNED_ACTION,
  UNPINNED_ACTION,
  workflow,
} from './fixtures/controls-repo';
import { CONTROLS, CONTROL_CATALOG_VERSION } from '../analysis/controls';
import { controlId, mappingVersionId } from '../db/controls';
import { DEMO_FEATURE_BRANCH, ensureDemoRepo } from '../platform/demo-repo';
import { tarGz } from './helpers/archives';

let h: AuditHarness;
let a: Tenant;
let b: Tenant;
let repo: TestRepo;
let repositoryId: string;
const dirs: string[] = [];

const ws = (t: Tenant) => `/v1/workspaces/${t.workspaceId}`;
const get = (t: Tenant, p: string, token = t.token) =>
  call(h.app.url, 'GET', `${ws(t)}${p}`, { token });
const patch = (t: Tenant, p: string, body: unknown, token = t.token) =>
  call(h.app.url, 'PATCH', `${ws(t)}${p}`, { token, body });

async function register(t: Tenant, name: string, dir: string): Promise<string> {
  const r = await call(h.app.url, 'POST', `${ws(t)}/repositories`, {
    token: t.token,
    body: { name, url: dir.startsWith('file://') ? dir : `file://${dir}` },
  });
  if (r.status !== 201) throw new Error(`createRepository ${r.status}: ${r.text}`);
  return r.body.id as string;
}

async function audit(t: Tenant, repository: string, extra: Record<string, unknown> = {}) {
  const r = await call(h.app.url, 'POST', `${ws(t)}/audits`, {
    token: t.token,
    body: { repository_id: repository, ...extra },
  });
  if (r.status !== 202) throw new Error(`createAudit ${r.status}: ${r.text}`);
  const done = await waitForAudit(h.app.url, t.token, t.workspaceId, r.body.id, 120_000);
  if (done.body.status !== 'completed') throw new Error(`audit ended ${done.text}`);
  return done.body as { id: string; stages: Array<{ key: string; summary: string | null }> };
}

const assessments = async (t: Tenant, auditId: string) =>
  (await get(t, `/audits/${auditId}/assessments?limit=200`)).body.items as any[];
const auditFindings = async (t: Tenant, auditId: string) =>
  (await get(t, `/audits/${auditId}/findings?limit=200`)).body.items as any[];
const byControl = (items: any[]) => new Map(items.map((f) => [f.control_key, f]));

test.before(async () => {
  h = await startAuditHarness();
  a = await createTenant(h.app.services.db);
  b = await createTenant(h.app.services.db);
  repo = createRepo(CONTROLS_FIXTURE);
  repositoryId = await register(a, 'fixture', repo.dir);
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const EXPECTED: Record<string, string> = {
  'ci-actions-pinned': 'fail',
  'ci-no-risky-triggers': 'pass',
  'ci-permissions-declared': 'pass',
  'containers-non-root': 'pass',
  'containers-not-privileged': 'pass',
  'containers-resource-limits': 'pass',
  'datastores-not-public': 'pass',
  'images-pinned': 'fail',
  'lockfile-present': 'fail',
  'no-committed-secrets': 'pass',
  'no-service-dependency-cycle': 'pass',
  'no-shared-database': 'pass',
  'owners-declared': 'pass',
  'storage-encrypted-at-rest': 'not_applicable',
};

test.serial(
  'the control catalog is served before any audit ran, and listing it writes nothing',
  async (t) => {
    const { db } = h.app.services;
    t.is(Number((await db('audits').count('* as n'))[0]!.n), 0, 'no audit yet');
    const before = Number((await db('controls').count('* as n'))[0]!.n);
    const catalog = (await get(a, '/controls?limit=200')).body.items as any[];
    t.is(catalog.length, CONTROLS.length);
    t.true(catalog.every((c) => c.catalog_version === CONTROL_CATALOG_VERSION));
    t.is(Number((await db('controls').count('* as n'))[0]!.n), before);
  },
);

test.serial(
  'findings follow the code: stable across unchanged audits, resolved by a fix, reopened by a regression, accepted_risk kept',
  async (t) => {
    // First audit: one assessment per catalog control with the verdict the fixture calls for.
    const first = await audit(a, repositoryId);
    const controls = first.stages.find((s) => s.key === 'controls')!;
    t.is(controls.summary, '14 controls: 10 pass, 3 fail, 1 not_applicable; 3 findings (3 new)');
    const list1 = await assessments(a, first.id);
    t.is(list1.length, CONTROLS.length);
    t.deepEqual(
      list1.map((x) => x.control_key),
      Object.keys(EXPECTED),
      'assessments come in control key order',
    );
    t.deepEqual(Object.fromEntries(list1.map((x) => [x.control_key, x.status])), EXPECTED);
    const catalog = (await get(a, '/controls?limit=200')).body.items as any[];
    t.is(catalog.length, CONTROLS.length);
    t.deepEqual(
      catalog.map((c) => c.key),
      Object.keys(EXPECTED),
      'the catalog is listed by key',
    );
    const catalogByKey = new Map(catalog.map((c) => [c.key, c]));
    for (const x of list1) {
      t.is(x.control_id, catalogByKey.get(x.control_key).id);
      t.is(x.mapping_version_id, catalogByKey.get(x.control_key).mapping_version_id);
      t.is(x.calculation_version, CONTROL_CATALOG_VERSION);
      t.is(x.overlay_version, 0);
      t.is(x.exception_id, null);
      t.deepEqual(x.stale_evidence_ids, []);
    }
    const pinned1 = list1.find((x) => x.control_key === 'ci-actions-pinned');
    t.is(pinned1.confidence, '0.95');
    t.like(
      pinned1.requirements.find((r: any) => r.key === 'third-party-actions-sha-pinned'),
      { status: 'unmet' },
    );
    t.like(
      pinned1.requirements.find((r: any) => r.key === 'first-party-actions-not-branch'),
      { status: 'met' },
    );
    t.regex(pinned1.rationale, /docker\/login-action@v3 is not pinned/);
    // The evidence the assessment names is the audit's own snapshot evidence.
    const truth = (await get(a, `/audits/${first.id}/architecture`)).body;
    const evidenceIds = new Set(truth.evidence.map((e: any) => e.id));
    t.true(pinned1.evidence_ids.length > 0);
    t.true(pinned1.evidence_ids.every((id: string) => evidenceIds.has(id)));

    const found1 = byControl(await auditFindings(a, first.id));
    t.deepEqual([...found1.keys()].sort(), [
      'ci-actions-pinned',
      'images-pinned',
      'lockfile-present',
    ]);
    const action1 = found1.get('ci-actions-pinned');
    t.like(action1, {
      status: 'open',
      severity: 'high',
      repository_id: repositoryId,
      first_seen_audit_id: first.id,
      last_seen_audit_id: first.id,
      occurrences: 1,
      resolved_at: null,
    });
    t.regex(action1.fingerprint, /^[0-9a-f]{64}$/);
    t.is(action1.locations[0].path, '.github/workflows/ci.yml');
    t.deepEqual(pinned1.finding_ids, [action1.id]);
    const logs = (await get(a, `/audits/${first.id}/logs`)).body.items as any[];
    const controlLogs = logs.filter((l) => l.source === 'control' && l.level === 'warning');
    t.deepEqual(
      controlLogs.map((l) => l.message.split(' ')[0]).sort(),
      ['ci-actions-pinned', 'images-pinned', 'lockfile-present'],
      'one control log line per failing control',
    );

    // The user accepts the missing lockfile as a risk.
    const lockId = found1.get('lockfile-present').id;
    const accepted = await patch(a, `/findings/${lockId}`, {
      status: 'accepted_risk',
      note: 'generated at deploy time',
    });
    t.is(accepted.status, 200, accepted.text);
    t.like(accepted.body, { status: 'accepted_risk', note: 'generated at deploy time' });

    // Second audit of the same commit: same findings (ids, fingerprints), seen twice.
    const second = await audit(a, repositoryId);
    t.regex(second.stages.find((s) => s.key === 'controls')!.summary!, /3 findings \(0 new\)/);
    const found2 = byControl(await auditFindings(a, second.id));
    for (const key of found1.keys()) {
      t.is(found2.get(key).id, found1.get(key).id);
      t.is(found2.get(key).fingerprint, found1.get(key).fingerprint);
      t.is(found2.get(key).occurrences, 2);
      t.is(found2.get(key).last_seen_audit_id, second.id);
      t.is(found2.get(key).first_seen_audit_id, first.id);
    }
    t.is(found2.get('lockfile-present').status, 'accepted_risk', 'kept by a later audit');

    // Pin the action in a new commit: the control passes and its finding is resolved.
    repo.commit({ '.github/workflows/ci.yml': workflow(PINNED_ACTION) }, 'pin the login action');
    const third = await audit(a, repositoryId);
    const list3 = byControl(await assessments(a, third.id));
    t.is(list3.get('ci-actions-pinned').status, 'pass');
    t.deepEqual(list3.get('ci-actions-pinned').finding_ids, []);
    const found3 = byControl(await auditFindings(a, third.id));
    t.deepEqual([...found3.keys()].sort(), ['images-pinned', 'lockfile-present']);
    const resolved = (await get(a, `/findings/${action1.id}`)).body;
    t.like(resolved, {
      status: 'resolved',
      resolved_audit_id: third.id,
      last_seen_audit_id: second.id,
    });
    t.truthy(resolved.resolved_at);
    t.is((await get(a, `/findings/${lockId}`)).body.status, 'accepted_risk');

    // The unpinned action comes back: the same finding reopens.
    repo.commit({ '.github/workflows/ci.yml': workflow(UNPINNED_ACTION) }, 'unpin again');
    const fourth = await audit(a, repositoryId);
    t.regex(fourth.stages.find((s) => s.key === 'controls')!.summary!, /1 reopened/);
    const reopened = (await get(a, `/findings/${action1.id}`)).body;
    t.like(reopened, {
      status: 'open',
      fingerprint: action1.fingerprint,
      resolved_at: null,
      resolved_audit_id: null,
      last_seen_audit_id: fourth.id,
      occurrences: 3,
    });

    // An audit narrowed to code files does not resolve cicd/cloud findings it could not see.
    const narrow = await audit(a, repositoryId, { source_scope: { source_types: ['code'] } });
    t.is((await get(a, `/findings/${action1.id}`)).body.status, 'open');
    t.true((await auditFindings(a, narrow.id)).every((f) => f.control_key !== 'ci-actions-pinned'));

    // The system's status changes are recorded as audit events.
    const events = (await get(a, '/audit-events?limit=200')).body.items as any[];
    const actions = events.filter((e) => e.resource_id === action1.id).map((e) => e.action);
    t.true(actions.includes('finding.resolved'));
    t.true(actions.includes('finding.reopened'));
  },
);

test.serial(
  'listFindings filters by status, severity, repository and control, and pages',
  async (t) => {
    const all = (await get(a, '/findings?limit=200')).body.items as any[];
    t.is(all.length, 3);
    const open = (await get(a, '/findings?status=open')).body.items as any[];
    t.deepEqual(open.map((f) => f.control_key).sort(), ['ci-actions-pinned', 'images-pinned']);
    const accepted = (await get(a, '/findings?status=accepted_risk')).body.items as any[];
    t.deepEqual(
      accepted.map((f) => f.control_key),
      ['lockfile-present'],
    );
    const high = (await get(a, '/findings?severity=high')).body.items as any[];
    t.deepEqual(
      high.map((f) => f.control_key),
      ['ci-actions-pinned'],
    );
    const byKey = (await get(a, '/findings?control_key=images-pinned&status=open')).body
      .items as any[];
    t.is(byKey.length, 1);
    t.is((await get(a, `/findings?repository_id=${repositoryId}`)).body.items.length, 3);
    const otherRepo = '00000000-0000-4000-8000-000000000000';
    t.is((await get(a, `/findings?repository_id=${otherRepo}`)).body.items.length, 0);
    t.is((await get(a, '/findings?status=resolved')).body.items.length, 0);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page: any = (await get(a, `/findings?limit=1${q}`)).body;
      seen.push(...page.items.map((f: any) => f.id));
      cursor = page.next_cursor;
      pages += 1;
      if (pages < 3) t.true(page.has_more);
    } while (cursor);
    t.is(pages, 3);
    t.deepEqual([...seen].sort(), all.map((f) => f.id).sort());

    for (const bad of [
      'limit=0',
      'limit=201',
      'status=closed',
      'severity=critical',
      'cursor=nope',
      'control_key=',
      'repository_id=x',
      'other=1',
    ]) {
      const r = await get(a, `/findings?${bad}`);
      t.is(r.status, 400, bad);
      t.true(isProblem(r), bad);
    }
    t.is((await get(a, '/findings?limit=200')).status, 200);
    t.is((await get(a, '/controls?limit=1')).body.items.length, 1);
  },
);

test.serial(
  'updateFinding: note bounds, statuses, resolved refused while observed, audit event',
  async (t) => {
    const open = (await get(a, '/findings?control_key=images-pinned')).body.items[0];
    const url = `/findings/${open.id}`;
    for (const [body, pointer, code] of [
      [{ status: 'false_positive', note: '' }, '/note', 'validation_failed'],
      [{ status: 'false_positive', note: 'x'.repeat(2001) }, '/note', 'validation_failed'],
      [{ status: 'false_positive' }, '/note', 'validation_failed'],
      [{ status: 'closed', note: 'x' }, '/status', 'validation_failed'],
      [{ note: 'x' }, '/status', 'validation_failed'],
      [{ status: 'open', note: 'x', extra: 1 }, 'extra', 'unknown_property'],
    ] as const) {
      const r = await patch(a, url, body);
      t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
      t.is(r.body.code, code);
      t.true(JSON.stringify(r.body).includes(pointer), `names ${pointer}`);
    }
    t.is((await get(a, url)).body.status, 'open', 'nothing changed');

    const one = await patch(a, url, { status: 'false_positive', note: 'x' });
    t.is(one.status, 200);
    t.like(one.body, { status: 'false_positive', note: 'x', id: open.id });
    const long = 'y'.repeat(2000);
    const max = await patch(a, url, { status: 'open', note: long });
    t.is(max.status, 200);
    t.is(max.body.note, long);
    t.true(Date.parse(max.body.updated_at) >= Date.parse(open.updated_at));

    const refused = await patch(a, url, { status: 'resolved', note: 'fixed, I promise' });
    t.is(refused.status, 409);
    t.is(refused.body.code, 'invalid_transition');
    t.is((await get(a, url)).body.status, 'open');

    const events = (await get(a, '/audit-events?limit=200')).body.items as any[];
    const mine = events.filter((e) => e.resource_id === open.id && e.action === 'finding.updated');
    t.is(mine.length, 2);
    const activity = (await get(a, '/activity?limit=200')).body.items as any[];
    t.true(activity.some((e) => e.resource_id === open.id && e.action === 'finding.updated'));

    const readOnly = await createToken(h.app.services.db, a, ['findings:read', 'policies:read']);
    const denied = await patch(a, url, { status: 'open', note: 'x' }, readOnly.token);
    t.is(denied.status, 403);
    const noPolicies = await createToken(h.app.services.db, a, ['findings:read']);
    t.is((await get(a, '/controls', noPolicies.token)).status, 403);
    t.is((await get(a, '/findings', noPolicies.token)).status, 200);
  },
);

test.serial(
  "another workspace's audits and findings are 404, and its lists are empty",
  async (t) => {
    const finding = (await get(a, '/findings')).body.items[0];
    const auditId = finding.first_seen_audit_id;
    t.is((await get(b, `/findings/${finding.id}`)).status, 404);
    t.is((await patch(b, `/findings/${finding.id}`, { status: 'open', note: 'x' })).status, 404);
    t.is((await get(b, `/audits/${auditId}/findings`)).status, 404);
    t.is((await get(b, `/audits/${auditId}/assessments`)).status, 404);
    t.is((await get(b, '/findings')).body.items.length, 0);
    t.is((await get(b, '/findings/00000000-0000-4000-8000-000000000000')).status, 404);
    // The catalog is global: the same control ids in every workspace.
    const ids = (t2: Tenant) =>
      get(t2, '/controls?limit=200').then((r) => r.body.items.map((c: any) => c.id).sort());
    t.deepEqual(await ids(b), await ids(a));
  },
);

test.serial(
  'the demo repository of npm start shows a graph, a diagram and findings on its first audit',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-demo-'));
    dirs.push(dir);
    const url = ensureDemoRepo(path.join(dir, 'demo-repo'));
    t.is(ensureDemoRepo(path.join(dir, 'demo-repo')), url, 'made once, then reused');
    const id = await register(b, 'demo', url);
    const done = await audit(b, id);
    const truth = (await get(b, `/audits/${done.id}/architecture`)).body;
    const keys = truth.entities.map((e: any) => e.canonical_key);
    for (const k of ['service:web', 'service:orders', 'service:worker', 'datastore:db'])
      t.true(keys.includes(k), k);
    t.true(truth.relationships.length >= 4);
    const diagram = await call(
      h.app.url,
      'GET',
      `${ws(b)}/audits/${done.id}/architecture/diagram?format=mermaid`,
      { token: b.token },
    );
    t.is(diagram.status, 200);
    t.regex(diagram.text, /orders/);
    const found = byControl(await auditFindings(b, done.id));
    for (const k of [
      'ci-actions-pinned',
      'ci-permissions-declared',
      'no-shared-database',
      'datastores-not-public',
    ])
      t.true(found.has(k), k);
    t.false(found.has('owners-declared'));
    // README's examples: an open case to resolve (compose and Kubernetes run different web
    // images), and a branch for the pull-request gate that adds a service to main.
    const cases = (await get(b, `/uncertainty-cases?repository_id=${id}&state=open`)).body.items;
    t.true(
      cases.some((c: any) => c.subject_key.includes('service:web')),
      JSON.stringify(cases.map((c: any) => c.subject_key)),
    );
    const changed = execFileSync(
      'git',
      ['-C', path.join(dir, 'demo-repo'), 'diff', '--name-only', `main...${DEMO_FEATURE_BRANCH}`],
      { encoding: 'utf8' },
    );
    t.true(changed.includes('services/reports/src/index.js'), changed);
    t.is(
      execFileSync('git', ['-C', path.join(dir, 'demo-repo'), 'branch', '--show-current'], {
        encoding: 'utf8',
      }).trim(),
      'main',
      'the checkout stays on main',
    );
  },
);

test.serial('an upload audit raises findings of its own, without a repository', async (t) => {
  const bytes = await tarGz(
    Object.entries(CONTROLS_FIXTURE).map(([name, data]) => ({ name: `./${name}`, data })),
  );
  const runUploadAudit = async () => {
    const up = await call(h.app.url, 'POST', `${ws(b)}/uploads?filename=fixture.tgz`, {
      token: b.token,
      raw: bytes,
      headers: { 'Content-Type': 'application/gzip' },
    });
    t.is(up.status, 201, up.text);
    const r = await call(h.app.url, 'POST', `${ws(b)}/audits`, {
      token: b.token,
      body: { upload_id: up.body.id },
    });
    const done = await waitForAudit(h.app.url, b.token, b.workspaceId, r.body.id, 120_000);
    t.is(done.body.status, 'completed');
    return done.body.id as string;
  };
  const first = await runUploadAudit();
  const second = await runUploadAudit();
  const f1 = await auditFindings(b, first);
  const f2 = await auditFindings(b, second);
  t.deepEqual(f1.map((f) => f.control_key).sort(), [
    'ci-actions-pinned',
    'images-pinned',
    'lockfile-present',
  ]);
  t.true(f1.every((f) => f.repository_id === null && f.first_seen_audit_id === first));
  t.deepEqual(
    f2.map((f) => f.fingerprint).sort(),
    f1.map((f) => f.fingerprint).sort(),
    'same content, same fingerprints',
  );
  t.true(
    f2.every((f) => !f1.some((g) => g.id === f.id)),
    'but separate findings per upload audit',
  );
  t.true(
    f1.every((f) => f.status === 'open'),
    'a later upload audit does not resolve them',
  );
});

test.serial('two audits of one repository at once share one finding per fingerprint', async (t) => {
  const c = await createTenant(h.app.services.db);
  const own = createRepo(CONTROLS_FIXTURE);
  dirs.push(own.dir);
  const id = await register(c, 'concurrent', own.dir);
  const [x, y] = await Promise.all([audit(c, id), audit(c, id)]);
  const all = (await get(c, '/findings?limit=200')).body.items as any[];
  t.deepEqual(all.map((f) => f.control_key).sort(), [
    'ci-actions-pinned',
    'images-pinned',
    'lockfile-present',
  ]);
  t.true(all.every((f) => f.occurrences === 2 && f.status === 'open'));
  const ids = (list: any[]) => list.map((f) => f.id).sort();
  t.deepEqual(ids(await auditFindings(c, x.id)), ids(all));
  t.deepEqual(ids(await auditFindings(c, y.id)), ids(all));
});

test.serial(
  'a catalog bump: audits assess with the new version; an older audit keeps its assessments and findings',
  async (t) => {
    const { db } = h.app.services;
    const OLD = '2026.11.1';
    t.not(CONTROL_CATALOG_VERSION, OLD, 'the catalog was bumped from 2026.11.1');
    const c = await createTenant(db);
    const r = createRepo(CONTROLS_FIXTURE);
    dirs.push(r.dir);
    const id = await register(c, 'bump', r.dir);
    // The catalog as a worker before the bump wrote it, and an audit assessed on it.
    const old = new Map(CONTROLS.map((x) => [x.key, controlId(OLD, x.key)]));
    await db('controls')
      .insert(
        CONTROLS.map((x) => ({
          id: old.get(x.key),
          mapping_version_id: mappingVersionId(OLD),
          catalog_version: OLD,
          key: x.key,
          title: x.title,
          description: x.description,
          domain: x.domain,
          severity: x.severity,
          requirements: JSON.stringify(x.requirements),
        })),
      )
      .onConflict(['catalog_version', 'key'])
      .ignore();
    const before = await audit(c, id);
    for (const [key, oldId] of old) {
      await db('control_assessments')
        .where({ audit_id: before.id, control_key: key })
        .update({ control_id: oldId, mapping_version_id: mappingVersionId(OLD) });
      await db('findings')
        .where({ workspace_id: c.workspaceId, control_key: key })
        .update({ control_id: oldId });
    }
    // A finding the old rules raised and the new ones no longer do.
    const [gone] = await db('findings').where({ workspace_id: c.workspaceId }).limit(1);
    const goneId = '00000000-0000-4000-8000-00000000b0b0';
    await db('findings').insert({
      ...gone,
      id: goneId,
      fingerprint: 'f'.repeat(64),
      evidence_ids: JSON.stringify(gone.evidence_ids),
      locations: JSON.stringify(gone.locations),
    });

    const after = await audit(c, id);
    const versionOf = async (auditId: string) =>
      (
        await db('control_assessments')
          .join('controls', 'controls.id', 'control_assessments.control_id')
          .where('control_assessments.audit_id', auditId)
          .distinct('controls.catalog_version')
      ).map((x: { catalog_version: string }) => x.catalog_version);
    t.deepEqual(await versionOf(after.id), [CONTROL_CATALOG_VERSION], 'the new audit: new version');
    t.deepEqual(await versionOf(before.id), [OLD], 'the older audit keeps its version');
    const listed = (await get(c, `/audits/${before.id}/assessments?limit=200`)).body.items as any[];
    t.is(listed.length, CONTROLS.length, 'the older audit still lists its assessments');
    t.true(listed.every((x) => x.control_id === old.get(x.control_key)));
    // The finding the new rules do not raise keeps its old control; re-observed ones move on.
    t.is((await db('findings').where({ id: goneId }).first()).control_id, gone.control_id);
    t.is((await get(c, `/findings/${goneId}`)).status, 200);
    const seen = await db('findings')
      .join('controls', 'controls.id', 'findings.control_id')
      .where({ 'findings.workspace_id': c.workspaceId, 'findings.last_seen_audit_id': after.id })
      .distinct('controls.catalog_version');
    t.deepEqual(
      seen.map((x: { catalog_version: string }) => x.catalog_version),
      [CONTROL_CATALOG_VERSION],
    );
    // The catalog listing is the new version's, once.
    const catalog = (await get(c, '/controls?limit=200')).body.items as any[];
    t.is(catalog.length, CONTROLS.length);
    t.true(catalog.every((x) => x.catalog_version === CONTROL_CATALOG_VERSION));
  },
);
