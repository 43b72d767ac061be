/**
 * Uncertainty cases from real audits of the polyglot shop: a compose/Kubernetes image tag
 * disagreement is a ConflictingClaim and a case; a missing source type lowers coverage and opens
 * a case; the same commit audited twice gives the same confidences and the same cases; a case no
 * longer observed stays; people assign, resolve and dismiss cases through the API.
 */
import crypto from 'node:crypto';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call, isProblem } from './helpers/http';
import { polyglotFiles } from './fixtures/polyglot';

let h: AuditHarness;
let tenant: Tenant;
let other: Tenant;
let repo: TestRepo;
let repositoryId: string;

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  other = await createTenant(h.app.services.db);
  // Kubernetes deploys cart 1.9.0 while compose runs 1.8.0; no CI workflows at all; payment
  // calls a fraud-check service that no file declares.
  repo = createRepo(polyglotFiles(FIXTURE));
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

const FIXTURE = {
  k8sTags: { cart: '1.9.0' },
  ci: false,
  extraEnv: { payment: { FRAUD_URL: 'http://fraud-check:8090' } },
};
const ws = (t: Tenant = tenant) => `/v1/workspaces/${t.workspaceId}`;
const get = (path: string, token = tenant.token) => call(h.app.url, 'GET', path, { token });
const patch = (id: string, body: unknown, token = tenant.token) =>
  call(h.app.url, 'PATCH', `${ws()}/uncertainty-cases/${id}`, { token, body });

async function audit(commit?: string) {
  const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: repositoryId, ...(commit ? { commit_sha: commit } : {}) },
  });
  if (started.status !== 202) throw new Error(started.text);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  if (done.body.status !== 'completed') throw new Error(JSON.stringify(done.body.stages));
  const arch = await get(`${ws()}/audits/${started.body.id}/architecture`);
  const history = await get(`${ws()}/repositories/${repositoryId}/architecture/snapshots`);
  const snapshot = history.body.items.find((s: any) => s.audit_id === started.body.id);
  return { audit: done.body, truth: arch.body, snapshotId: snapshot.id as string };
}

async function cases(query = '') {
  const reply = await get(`${ws()}/uncertainty-cases?repository_id=${repositoryId}${query}`);
  if (reply.status !== 200) throw new Error(reply.text);
  return reply.body;
}
const caseOf = (page: any, reason: string, subject: string) =>
  page.items.find((c: any) => c.reason === reason && c.subject_key === subject);

const confidences = (truth: any) =>
  Object.fromEntries(
    [...truth.entities, ...truth.relationships].map((x: any) => [x.canonical_key, x.confidence]),
  );

test.serial(
  'a contradiction and a missing source open cases; a second audit updates them, with identical confidences',
  async (t) => {
    const first = await audit();
    // The snapshot: the cart's image tag is a ConflictingClaim between compose and Kubernetes.
    const cart = first.truth.entities.find((e: any) => e.canonical_key === 'service:cart');
    t.deepEqual(
      cart.contradictions.map((c: any) => [c.field, c.claims.map((x: any) => x.value)]),
      [['image_tag', ['1.8.0', '1.9.0']]],
    );
    const byId = new Map<string, any>(first.truth.evidence.map((e: any) => [e.id, e]));
    const claimFiles = cart.contradictions[0].claims.map((c: any) =>
      c.evidence_ids.map((id: string) => byId.get(id).location.path),
    );
    t.deepEqual(claimFiles, [['docker-compose.yml'], ['deploy/k8s/cart.yaml']]);
    // No CI: coverage drops to 2 of 3 source types.
    t.deepEqual(first.truth.missing_sources, ['cicd']);
    t.is(first.truth.source_coverage, '0.6667');
    t.is(first.truth.status, 'partial');

    const page = await cases();
    const conflict = caseOf(page, 'conflicting_evidence', 'service:cart');
    t.like(conflict, {
      scope: 'attribute',
      field: 'image_tag',
      blocking: true,
      state: 'open',
      owner_id: null,
      repository_id: repositoryId,
      snapshot_id: first.snapshotId,
      resolved_at: null,
    });
    t.deepEqual(
      conflict.alternatives.map((a: any) => [a.value, a.sources, a.evidence_ids]),
      cart.contradictions[0].claims.map((c: any) => [c.value, ['cloud'], c.evidence_ids]),
    );
    for (const a of conflict.alternatives) t.regex(a.confidence, /^0\.\d\d$/);
    t.deepEqual(conflict.source_keys, ['deploy/k8s/cart.yaml', 'docker-compose.yml']);
    t.regex(conflict.detail, /image_tag/);
    const missing = caseOf(page, 'missing_source', 'source:cicd');
    t.like(missing, { scope: 'source', field: null, blocking: true, state: 'open' });
    t.deepEqual(missing.source_keys, ['cicd']);
    // The reference to fraud-check names nothing declared: an unresolved, non-blocking case.
    const unresolved = caseOf(page, 'unresolved_reference', 'service:fraud-check');
    t.like(unresolved, { scope: 'entity', field: null, blocking: false, state: 'open' });
    t.true(unresolved.evidence_ids.length >= 1);
    for (const id of unresolved.evidence_ids) {
      const e = byId.get(id);
      t.is(e.subject_key, 'service:payment');
      t.is(e.object_key, 'service:fraud-check');
    }
    t.true(
      unresolved.source_keys.every((p: string) =>
        ['deploy/k8s/payment.yaml', 'docker-compose.yml'].includes(p),
      ),
    );
    // Nothing else is uncertain in this system: exactly these three cases, counted.
    t.is(page.items.length, 3, JSON.stringify(page.items.map((c: any) => c.subject_key)));
    t.like(page, { open_count: 3, blocking_count: 2, unassigned_count: 3 });

    // The same commit again: same confidences, same cases (updated, not duplicated).
    const second = await audit(first.audit.commit_sha);
    t.not(second.audit.id, first.audit.id);
    t.deepEqual(confidences(second.truth), confidences(first.truth));
    const again = await cases();
    t.deepEqual(again.items.map((c: any) => c.id).sort(), page.items.map((c: any) => c.id).sort());
    const conflict2 = again.items.find((c: any) => c.id === conflict.id);
    t.is(conflict2.detected_at, conflict.detected_at);
    t.true(conflict2.last_observed_at > conflict.last_observed_at);
    t.is(conflict2.snapshot_id, second.snapshotId);
    t.not(second.snapshotId, first.snapshotId);
    // Evidence ids belong to the newest snapshot.
    const ids2 = new Set(second.truth.evidence.map((e: any) => e.id));
    t.true(conflict2.evidence_ids.every((id: string) => ids2.has(id)));
    t.is(
      (await get(`${ws()}/uncertainty-cases/${conflict.id}`)).body.last_observed_at,
      conflict2.last_observed_at,
    );
    // Each audit's report shows the cases as its own snapshot observed them: the first report
    // keeps its three cases although a later audit has moved the case rows on.
    for (const run of [first, second]) {
      const report = await get(`${ws()}/audits/${run.audit.id}/report`);
      t.is(report.status, 200, report.text);
      t.deepEqual(
        report.body.content.uncertainty_cases.map((c: any) => c.id).sort(),
        page.items.map((c: any) => c.id).sort(),
        `report of audit ${run.audit.id}`,
      );
    }
  },
);

test.serial(
  'people assign, investigate, resolve and dismiss cases; bounds are enforced',
  async (t) => {
    const page = await cases();
    const conflict = caseOf(page, 'conflicting_evidence', 'service:cart');
    const missing = caseOf(page, 'missing_source', 'source:cicd');

    // Owner must be a member of this workspace.
    const stranger = await patch(conflict.id, { owner_id: other.memberId });
    t.is(stranger.status, 400);
    t.true(isProblem(stranger));
    t.is(stranger.body.errors[0].path, '/owner_id');
    const assigned = await patch(conflict.id, {
      owner_id: tenant.memberId,
      state: 'investigating',
    });
    t.is(assigned.status, 200);
    t.like(assigned.body, { owner_id: tenant.memberId, state: 'investigating', resolved_at: null });
    t.like(await cases(), { open_count: 3, blocking_count: 2, unassigned_count: 2 });

    // Resolving needs a summary of 3..2000 characters.
    const bare = await patch(conflict.id, { state: 'resolved' });
    t.is(bare.status, 400);
    t.is(bare.body.errors[0].path, '/resolution_summary');
    t.is((await patch(conflict.id, { state: 'resolved', resolution_summary: 'ab' })).status, 400);
    const tooLong = await patch(conflict.id, {
      state: 'resolved',
      resolution_summary: 'x'.repeat(2001),
    });
    t.is(tooLong.status, 400);
    t.is(tooLong.body.errors[0].path, '/resolution_summary');
    t.is(
      (await patch(conflict.id, { state: 'resolved', resolution_summary: 'x'.repeat(2000) }))
        .status,
      200,
    );
    t.is((await patch(conflict.id, { state: 'open' })).body.resolution_summary, null);
    t.is((await patch(conflict.id, { state: 'resolved', resolution_summary: 'abc' })).status, 200);
    const reopened = await patch(conflict.id, { state: 'investigating' });
    t.like(reopened.body, { state: 'investigating', resolved_at: null, resolution_summary: null });
    // A summary on an unsettled case, an unknown state, an empty body: 400.
    t.is((await patch(conflict.id, { resolution_summary: 'note' })).status, 400);
    t.is((await patch(conflict.id, { state: 'closed' })).status, 400);
    t.is((await patch(conflict.id, {})).status, 400);
    t.is((await patch(conflict.id, { blocking: false })).body.code, 'unknown_property');

    const dismissed = await patch(missing.id, {
      state: 'dismissed',
      resolution_summary: 'CI for this shop runs in the platform repository.',
    });
    t.is(dismissed.status, 200);
    t.like(dismissed.body, {
      state: 'dismissed',
      resolution_summary: 'CI for this shop runs in the platform repository.',
    });
    t.truthy(dismissed.body.resolved_at);
    t.like(await cases(), { open_count: 2, blocking_count: 1, unassigned_count: 1 });
    t.like(await cases('&state=dismissed'), { open_count: 0 });
    t.deepEqual(
      (await cases('&state=dismissed')).items.map((c: any) => c.id),
      [missing.id],
    );

    // Every change left an audit event.
    const events = await get(`${ws()}/audit-events?limit=50`);
    const mine = events.body.items.filter(
      (e: any) => e.action === 'uncertainty_case.updated' && e.resource_id === conflict.id,
    );
    t.true(mine.length >= 5);
    const feed = await get(`${ws()}/activity?limit=50`);
    t.true(feed.body.items.some((e: any) => e.action === 'uncertainty_case.updated'));

    // Tenancy (another workspace's token or path: 404, as for every resource) and scopes.
    t.is((await get(`${ws()}/uncertainty-cases/${conflict.id}`, other.token)).status, 404);
    const foreign = await get(`${ws(other)}/uncertainty-cases/${conflict.id}`, other.token);
    t.is(foreign.status, 404);
    t.true(isProblem(foreign));
    t.is(
      (
        await call(h.app.url, 'PATCH', `${ws(other)}/uncertainty-cases/${conflict.id}`, {
          token: other.token,
          body: { state: 'open' },
        })
      ).status,
      404,
    );
    t.is((await get(`${ws()}/uncertainty-cases/${crypto.randomUUID()}`)).status, 404);
    const reader = await createToken(h.app.services.db, tenant, ['findings:read']);
    t.is((await get(`${ws()}/uncertainty-cases/${conflict.id}`, reader.token)).status, 200);
    t.is((await patch(conflict.id, { state: 'open' }, reader.token)).status, 403);
    const noScope = await createToken(h.app.services.db, tenant, ['audits:read']);
    t.is((await get(`${ws()}/uncertainty-cases`, noScope.token)).status, 403);
  },
);

test.serial(
  'list filters, counts over the filtered set, pages by Link header, bounds',
  async (t) => {
    const all = await cases();
    const blocking = await cases('&blocking=true');
    t.true(blocking.items.every((c: any) => c.blocking));
    t.is(blocking.items.length, 2);
    const nonBlocking = await cases('&blocking=false');
    t.deepEqual(
      nonBlocking.items.map((c: any) => c.subject_key),
      ['service:fraud-check'],
    );
    t.like(nonBlocking, { open_count: 1, blocking_count: 0, unassigned_count: 1 });
    const first = await get(`${ws()}/uncertainty-cases?repository_id=${repositoryId}&limit=1`);
    t.is(first.body.items.length, 1);
    t.is(first.body.open_count, all.open_count, 'counts cover the filtered set, not the page');
    // Follow the Link header page by page: every case once, in the list's order.
    const seen = [first.body.items[0].id];
    let link = first.headers.get('link');
    while (link) {
      t.regex(link, /rel="next"/);
      const next = await get(/<([^>]+)>/.exec(link)![1]!);
      t.is(next.status, 200);
      t.is(next.body.items.length, 1);
      t.is(next.body.open_count, all.open_count);
      seen.push(next.body.items[0].id);
      link = next.headers.get('link');
    }
    t.deepEqual(
      seen,
      all.items.map((c: any) => c.id),
    );
    for (const bad of [
      'limit=0',
      'limit=201',
      'state=closed',
      'blocking=maybe',
      'repository_id=x',
      'cursor=zzz',
      'colour=red',
    ]) {
      const r = await get(`${ws()}/uncertainty-cases?${bad}`);
      t.is(r.status, 400, bad);
      t.true(isProblem(r), bad);
    }
    t.is((await get(`${ws()}/uncertainty-cases?limit=200`)).status, 200);
    t.is((await get(`${ws()}/uncertainty-cases?limit=1`)).status, 200);
    t.is((await get(`${ws()}/uncertainty-cases`)).body.items.length, all.items.length);
  },
);

test.serial(
  'a case no longer observed stays as it was; a settled case reopens only when its evidence changes',
  async (t) => {
    const before = await cases();
    const conflict = caseOf(before, 'conflicting_evidence', 'service:cart');
    const missing = caseOf(before, 'missing_source', 'source:cicd');
    // Fix the contradiction: Kubernetes deploys 1.8.0 too. CI is still missing.
    const fixed = repo.commit(
      {
        'deploy/k8s/cart.yaml': polyglotFiles({ ...FIXTURE, k8sTags: {} })['deploy/k8s/cart.yaml']!,
      },
      'deploy cart 1.8.0 everywhere',
    );
    const third = await audit(fixed);
    t.deepEqual(
      third.truth.entities.find((e: any) => e.canonical_key === 'service:cart').contradictions,
      [],
    );
    const after = await cases();
    // Not deleted, not changed: same state, owner, evidence and last observation.
    const kept = await get(`${ws()}/uncertainty-cases/${conflict.id}`);
    t.is(kept.status, 200);
    t.deepEqual(kept.body, conflict);
    t.deepEqual(
      after.items.map((c: any) => c.id).sort(),
      before.items.map((c: any) => c.id).sort(),
    );
    // The dismissed missing-source case, seen again on the same grounds, stays dismissed.
    const stillDismissed = after.items.find((c: any) => c.id === missing.id);
    t.like(stillDismissed, { state: 'dismissed', resolution_summary: missing.resolution_summary });
    t.true(stillDismissed.last_observed_at > missing.last_observed_at);
    t.is(stillDismissed.snapshot_id, third.snapshotId);

    // Resolve the conflict, then a new commit contradicts again with another value: it reopens.
    t.is(
      (await patch(conflict.id, { state: 'resolved', resolution_summary: 'Rolled out 1.8.0.' }))
        .status,
      200,
    );
    const drifted = repo.commit(
      {
        'deploy/k8s/cart.yaml': polyglotFiles({ ...FIXTURE, k8sTags: { cart: '2.0.0' } })[
          'deploy/k8s/cart.yaml'
        ]!,
      },
      'cart 2.0.0 in the cluster only',
    );
    await audit(drifted);
    const back = (await get(`${ws()}/uncertainty-cases/${conflict.id}`)).body;
    t.like(back, { state: 'open', resolved_at: null, resolution_summary: null });
    t.deepEqual(
      back.alternatives.map((a: any) => a.value),
      ['1.8.0', '2.0.0'],
    );
    const final = await cases();
    t.is(final.items.length, before.items.length, 'updated, never duplicated');
  },
);
