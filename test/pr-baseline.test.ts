/**
 * Base-aware gates on the real stack: a feature branch's audit is gated against the default
 * branch at the merge-base, which is audited first when it never was (one baseline audit, reused
 * by the next push), not against the branch's own previous audit; the repository's latest
 * architecture stays the default branch's; the branch keeps one observed change set.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { CHANGES_V1, CHANGES_V2 } from './fixtures/changes-repo';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let repositoryId: string;
let mergeBase: string;

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const get = (path: string) => call(h.app.url, 'GET', `${ws()}${path}`, { token: tenant.token });

async function audit(body: Record<string, unknown>) {
  const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: repositoryId, ...body },
  });
  if (started.status !== 202) throw new Error(started.text);
  const done = await waitForAudit(
    h.app.url,
    tenant.token,
    tenant.workspaceId,
    started.body.id,
    240_000,
  );
  if (done.body.status !== 'completed') throw new Error(JSON.stringify(done.body.stages));
  return done.body;
}

const auditsOfRepo = async () =>
  (await get(`/audits?repository_id=${repositoryId}&limit=100`)).body.items as any[];

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db, { login: 'alice' });
  repo = createRepo(CHANGES_V1);
  mergeBase = repo.git('rev-parse', 'HEAD');
  repo.git('checkout', '--quiet', '-b', 'feature/reports');
  repo.commit(CHANGES_V2, 'reports service, payments API, legacy-db retired');
  // main moves on after the fork: the baseline is the merge-base, not main's tip.
  repo.git('checkout', '--quiet', 'main');
  repo.commit({ 'NOTES.md': 'main moved on\n' }, 'notes');
  const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'orders-system', url: `file://${repo.dir}` },
  });
  repositoryId = created.body.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

test.serial(
  "a feature branch's first audit is gated against main at the merge-base, audited first",
  async (t) => {
    const feature = await audit({ branch_ref: 'feature/reports' });
    t.deepEqual(feature.source.base, { ref: 'main', merge_base_sha: mergeBase });
    // One baseline audit of main at the merge-base ran, recorded as such.
    const baselines = (await auditsOfRepo()).filter((a) => a.origin === 'baseline');
    t.is(baselines.length, 1);
    t.like(baselines[0], {
      status: 'completed',
      branch_ref: 'main',
      commit_sha: mergeBase,
      origin_ref: feature.id,
    });
    const snaps = (await get(`/repositories/${repositoryId}/architecture/snapshots`)).body.items;
    const baseSnap = snaps.find((s: any) => s.audit_id === baselines[0].id).id;

    const gate = await get(`/audits/${feature.id}/gate`);
    t.is(gate.body.previous_snapshot_id, baseSnap);
    // Not insufficient_evidence for want of a baseline: the reports service's new use of
    // orders-db is blocked.
    t.is(gate.body.outcome, 'blocked');
    t.regex(
      gate.body.reasons[0].text,
      new RegExp(`^baseline: the default branch main at the merge-base ${mergeBase}$`),
    );
    t.true(
      gate.body.changes.some(
        (c: any) =>
          c.key === 'connects_to:service:reports->datastore:orders-db' &&
          c.consequence === 'blocked',
      ),
    );
    // getArchitectureChanges of the branch's snapshot compares with the same baseline as its gate.
    const featureSnap = snaps.find((s: any) => s.audit_id === feature.id).id;
    const changes = await get(
      `/repositories/${repositoryId}/architecture/changes?to_snapshot_id=${featureSnap}`,
    );
    t.is(changes.status, 200);
    t.like(changes.body, { previous_snapshot_id: baseSnap, current_snapshot_id: featureSnap });
    t.is(changes.body.gate.outcome, 'blocked');
  },
);

test.serial(
  'a new push reuses the baseline and updates the branch change set in place',
  async (t) => {
    repo.git('checkout', '--quiet', 'feature/reports');
    const head = repo.commit({ 'README.md': 'reports\n' }, 'docs');
    repo.git('checkout', '--quiet', 'main');
    const again = await audit({ branch_ref: 'feature/reports' });
    t.is(again.commit_sha, head);
    t.is((await auditsOfRepo()).filter((a) => a.origin === 'baseline').length, 1);
    const gate = await get(`/audits/${again.id}/gate`);
    t.is(gate.body.outcome, 'blocked');
    const sets = (await get(`/repositories/${repositoryId}/change-sets?state=observed`)).body;
    const mine = (sets.items as any[]).filter((s) => s.change_key === 'branch:feature/reports');
    t.is(mine.length, 1, JSON.stringify(sets.items?.map((s: any) => s.change_key)));
    t.like(mine[0], {
      source_ref: head,
      baseline_snapshot_id: gate.body.previous_snapshot_id,
      result_snapshot_id: gate.body.current_snapshot_id,
      gate_result: { outcome: 'blocked' },
    });
  },
);

test.serial(
  "the repository's latest architecture is the default branch's full audit, not the branch's",
  async (t) => {
    const latest = await get(`/repositories/${repositoryId}/architecture`);
    t.is(latest.status, 200);
    const keys = latest.body.entities.map((e: any) => e.canonical_key);
    t.false(keys.includes('service:reports'), 'the feature branch is not the latest');
    t.true(keys.includes('datastore:legacy-db'));
    // A full audit of main at its tip becomes the latest; a scoped one afterwards does not.
    const tip = await audit({});
    const scoped = await audit({ source_scope: { source_types: ['code'] } });
    const after = await get(`/repositories/${repositoryId}/architecture`);
    t.is(after.body.audit_id, tip.id);
    t.not(after.body.audit_id, scoped.id);
  },
);
