/**
 * The change gate on the real stack: a repository audited at two commits (a service added that
 * uses an existing datastore, an external call added, a datastore removed), then again with a
 * source type missing; the gate of each audit, its CI renderings (SARIF validated against the
 * SARIF 2.1.0 schema), the workspace policy with optimistic concurrency, and approved decisions
 * changing the outcome.
 */
import fs from 'node:fs';
import test from 'ava';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { addMember, type Member } from './helpers/decisions';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { CHANGES_V1, CHANGES_V2 } from './fixtures/changes-repo';
import { contentSha256 } from '../domain/comparisons/compare';

let h: AuditHarness;
let tenant: Tenant;
let bob: Member;
let repo: TestRepo;
let repositoryId: string;
const audits: Record<string, { id: string; snapshot: string }> = {};

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const get = (path: string, token = tenant.token) =>
  call(h.app.url, 'GET', `${ws()}${path}`, { token });

async function audit(body: Record<string, unknown> = {}) {
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
    120_000,
  );
  if (done.body.status !== 'completed') throw new Error(JSON.stringify(done.body.stages));
  const snaps = await get(`/repositories/${repositoryId}/architecture/snapshots`);
  const snap = snaps.body.items.find((s: { audit_id: string }) => s.audit_id === started.body.id);
  return { id: started.body.id as string, snapshot: snap.id as string, body: done.body };
}

const EXPECTED_V2 = [
  ['entity_added', 'external:api.payments.example.com', 'informational'],
  ['entity_added', 'service:reports', 'review'],
  ['entity_removed', 'datastore:legacy-db', 'blocked'],
  ['relationship_added', 'connects_to:service:orders->external:api.payments.example.com', 'review'],
  ['relationship_added', 'connects_to:service:reports->datastore:orders-db', 'blocked'],
  ['relationship_removed', 'connects_to:service:billing->datastore:legacy-db', 'informational'],
];

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
  audits.v1 = await audit();
  repo.commit(CHANGES_V2, 'reports service, payments API, legacy-db retired');
  audits.v2 = await audit();
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

test.serial('the first audit of a repository is insufficient_evidence and says why', async (t) => {
  const a = await get(`/audits/${audits.v1!.id}`);
  t.is(a.body.structural_gate_result.outcome, 'insufficient_evidence');
  t.regex(a.body.structural_gate_result.reasons.join('\n'), /first audit/);
  const gate = await get(`/audits/${audits.v1!.id}/gate`);
  t.is(gate.status, 200);
  t.like(gate.body, {
    outcome: 'insufficient_evidence',
    previous_snapshot_id: null,
    policy_version: 0,
    policy_enabled: true,
  });
  t.deepEqual(gate.body.changes, []);
});

test.serial(
  'the second audit shows each change with its consequence, and is blocked',
  async (t) => {
    const a = await get(`/audits/${audits.v2!.id}`);
    t.is(a.body.structural_gate_result.outcome, 'blocked');
    t.is(a.body.structural_gate_result.previous_snapshot_id, audits.v1!.snapshot);
    const gate = await get(`/audits/${audits.v2!.id}/gate`);
    t.is(gate.body.outcome, 'blocked');
    t.true(gate.body.coverage_comparable);
    const seen = gate.body.changes
      .filter(
        (c: any) => !c.key.startsWith('service:billing') || c.change_type !== 'entity_changed',
      )
      .map((c: any) => [c.change_type, c.key, c.consequence]);
    for (const expected of EXPECTED_V2)
      t.deepEqual(
        seen.find((s: string[]) => s[1] === expected[1]),
        expected,
      );
    // Nothing else is flagged.
    const flagged = gate.body.changes.filter((c: any) => c.consequence !== 'informational');
    t.is(flagged.length, EXPECTED_V2.filter((e) => e[2] !== 'informational').length);
    // Every reason names its rule; every change cites evidence and has an owner from CODEOWNERS.
    const rules = gate.body.reasons.map((r: any) => r.rule_id).sort();
    t.deepEqual(rules, [
      'datastore-removed',
      'external-egress-added',
      'service-added',
      'shared-datastore-new-client',
    ]);
    for (const c of gate.body.changes) {
      t.true(c.evidence_ids.length > 0, c.key);
      t.regex(c.owner_hint ?? '', /^@acme\/(platform|analytics)$/, c.key);
    }
    const shared = gate.body.reasons.find((r: any) => r.rule_id === 'shared-datastore-new-client');
    t.regex(shared.text, /service:reports newly connects to datastore:orders-db/);
    t.true(shared.evidence_ids.length > 0);
  },
);

test.serial('getArchitectureChanges compares the latest two snapshots by default', async (t) => {
  const r = await get(`/repositories/${repositoryId}/architecture/changes`);
  t.is(r.status, 200);
  t.like(r.body, {
    repository_id: repositoryId,
    current_snapshot_id: audits.v2!.snapshot,
    previous_snapshot_id: audits.v1!.snapshot,
    current_audit_id: audits.v2!.id,
    coverage_comparable: true,
    gate: { outcome: 'blocked', policy_enabled: true },
  });
  t.deepEqual([...r.body.current_sources].sort(), ['cicd', 'cloud', 'code']);
  const stored = await get(`/audits/${audits.v2!.id}/gate`);
  t.deepEqual(
    r.body.changes.map((c: any) => [c.change_type, c.key, c.consequence, c.owner_hint]),
    stored.body.changes.map((c: any) => [c.change_type, c.key, c.consequence, c.owner_hint]),
  );
  // Reversed, the removal is an addition and the additions are removals.
  const back = await get(
    `/repositories/${repositoryId}/architecture/changes?from_snapshot_id=${audits.v2!.snapshot}&to_snapshot_id=${audits.v1!.snapshot}`,
  );
  const types = new Map(back.body.changes.map((c: any) => [c.key, c.change_type]));
  t.is(types.get('datastore:legacy-db'), 'entity_added');
  t.is(types.get('service:reports'), 'entity_removed');
});

test.serial('bad snapshot parameters are clear problems', async (t) => {
  const base = `/repositories/${repositoryId}/architecture/changes`;
  const unknown = await get(`${base}?to_snapshot_id=00000000-0000-4000-8000-000000000000`);
  t.is(unknown.status, 404);
  const fromOnly = await get(`${base}?from_snapshot_id=${audits.v1!.snapshot}`);
  t.is(fromOnly.status, 400);
  t.is(fromOnly.body.code, 'validation_failed');
  const notUuid = await get(`${base}?to_snapshot_id=nope`);
  t.is(notUuid.status, 400);
  // A snapshot of another repository of the workspace.
  const other = createRepo(CHANGES_V1);
  try {
    const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
      token: tenant.token,
      body: { name: 'other', url: `file://${other.dir}` },
    });
    const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
      token: tenant.token,
      body: { repository_id: created.body.id },
    });
    await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id, 120_000);
    const snaps = await get(`/repositories/${created.body.id}/architecture/snapshots`);
    const mismatch = await get(
      `${base}?from_snapshot_id=${snaps.body.items[0].id}&to_snapshot_id=${audits.v2!.snapshot}`,
    );
    t.is(mismatch.status, 422);
    t.is(mismatch.body.code, 'snapshot_repository_mismatch');
    const cross = await call(h.app.url, 'POST', `${ws()}/audit-comparisons`, {
      token: tenant.token,
      body: { baseline_audit_id: audits.v1!.id, candidate_audit_id: started.body.id },
    });
    t.is(cross.status, 422);
    t.is(cross.body.code, 'audits_not_comparable');
  } finally {
    other.remove();
  }
  // Another workspace cannot see the repository.
  const stranger = await createTenant(h.app.services.db);
  const hidden = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${stranger.workspaceId}/repositories/${repositoryId}/architecture/changes`,
    { token: stranger.token },
  );
  t.is(hidden.status, 404);
});

test.serial('the gate renders as SARIF 2.1.0 (schema-valid), JUnit XML and Markdown', async (t) => {
  const sarif = await get(`/audits/${audits.v2!.id}/gate?format=sarif`);
  t.is(sarif.status, 200);
  t.regex(sarif.headers.get('content-type') ?? '', /^application\/sarif\+json/);
  const schema = JSON.parse(
    fs.readFileSync(require.resolve('schemastore/schemas/json/sarif-2.1.0.json'), 'utf8'),
  );
  // The official schema's language-tag pattern is not valid with the u flag.
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  t.true(validate(sarif.body), JSON.stringify(validate.errors));
  const results = sarif.body.runs[0].results;
  t.is(results.length, 4);
  for (const r of results) {
    t.truthy(r.locations?.[0]?.physicalLocation?.artifactLocation?.uri, r.message.text);
    t.regex(r.partialFingerprints['archauditGate/v1'], /^[0-9a-f]{64}$/);
  }
  const removed = results.find((r: any) => r.ruleId === 'datastore-removed');
  t.is(removed.level, 'error');
  t.is(removed.locations[0].physicalLocation.artifactLocation.uri, 'docker-compose.yml');
  // The same gate always renders the same.
  const again = await get(`/audits/${audits.v2!.id}/gate?format=sarif`);
  t.deepEqual(again.body, sarif.body);

  const junit = await get(`/audits/${audits.v2!.id}/gate?format=junit`);
  t.regex(junit.headers.get('content-type') ?? '', /^application\/xml/);
  for (const rule of ['datastore-removed', 'external-egress-added', 'service-added'])
    t.regex(junit.text, new RegExp(`<testcase[^>]*name="${rule}"`));
  t.is((junit.text.match(/<failure/g) ?? []).length, 4);

  const md = await get(`/audits/${audits.v2!.id}/gate?format=markdown`);
  t.regex(md.headers.get('content-type') ?? '', /^text\/markdown/);
  t.regex(md.text, /Architecture gate: blocked/);
  t.regex(md.text, /\| entity_removed \| legacy-db \| blocked \|/);

  const bad = await get(`/audits/${audits.v2!.id}/gate?format=pdf`);
  t.is(bad.status, 400);
  const noGate = await get(`/audits/00000000-0000-4000-8000-000000000000/gate`);
  t.is(noGate.status, 404);
  t.is(noGate.body.code, 'not_found');
});

test.serial(
  'the gate policy: default, replace with expected_version, conflicts and bad rules',
  async (t) => {
    const initial = await get('/policies/gate');
    t.like(initial.body, { version: 0, is_default: true, enabled: true, confidence_floor: 0.5 });
    const withoutServiceRule = initial.body.rules.filter((r: any) => r.id !== 'service-added');
    const put = (body: Record<string, unknown>, token = tenant.token) =>
      call(h.app.url, 'PUT', `${ws()}/policies/gate`, { token, body });
    const body = {
      enabled: true,
      confidence_floor: 0.5,
      rules: withoutServiceRule,
      expected_version: 0,
    };
    const updated = await put(body);
    t.is(updated.status, 200, updated.text);
    t.like(updated.body, { version: 1, is_default: false, updated_by: tenant.memberId });
    t.deepEqual(
      updated.body.missing_default_rules,
      ['service-added'],
      'the dropped default is named',
    );
    t.deepEqual(initial.body.missing_default_rules, []);
    const stale = await put(body);
    t.is(stale.status, 409);
    t.like(stale.body, { code: 'version_mismatch', current_version: 1 });
    const wrong = await put({
      ...body,
      expected_version: 1,
      rules: [
        {
          id: 'x',
          description: 'x',
          condition: 'change',
          consequence: 'review',
          min_severity: 'high',
        },
        {
          id: 'x',
          description: 'y',
          condition: 'control_failure_introduced',
          consequence: 'blocked',
        },
      ],
    });
    t.is(wrong.status, 400);
    t.deepEqual(
      wrong.body.errors.map((e: any) => e.path),
      ['/rules/0/min_severity', '/rules/1/id', '/rules/1/min_severity'],
    );
    const outOfRange = await put({ ...body, expected_version: 1, confidence_floor: 1.01 });
    t.is(outOfRange.status, 400);
    const readOnly = await createToken(h.app.services.db, tenant, ['policies:read']);
    t.is((await put({ ...body, expected_version: 1 }, readOnly.token)).status, 403);
    t.is((await get('/policies/gate', readOnly.token)).body.version, 1);

    // The next gate records the policy version it applied; the new service is no longer reviewed.
    const r = await get(
      `/repositories/${repositoryId}/architecture/changes?from_snapshot_id=${audits.v1!.snapshot}&to_snapshot_id=${audits.v2!.snapshot}`,
    );
    const reports = r.body.changes.find((c: any) => c.key === 'service:reports');
    t.is(reports.consequence, 'informational');
    // Put the default back (for the tests that follow): a reset, at the version last read.
    const reset = (expected_version: number, token = tenant.token) =>
      call(h.app.url, 'POST', `${ws()}/policies/gate/reset`, { token, body: { expected_version } });
    t.is((await reset(1, readOnly.token)).status, 403);
    const staleReset = await reset(0);
    t.is(staleReset.status, 409);
    t.like(staleReset.body, { code: 'version_mismatch', current_version: 1 });
    const restored = await reset(1);
    t.is(restored.status, 200, restored.text);
    t.like(restored.body, { version: 2, is_default: true, enabled: true, confidence_floor: 0.5 });
    t.deepEqual(restored.body.rules, initial.body.rules);
    t.deepEqual(restored.body.missing_default_rules, []);
    t.like((await get('/policies/gate')).body, { version: 2, is_default: true });
  },
);

test.serial(
  'a source type missing from the next audit: not_reobserved, not removed, and insufficient_evidence',
  async (t) => {
    audits.v3 = await audit({ source_scope: { source_types: ['code', 'cloud'] } });
    const gate = await get(`/audits/${audits.v3!.id}/gate`);
    t.is(gate.body.outcome, 'insufficient_evidence');
    t.false(gate.body.coverage_comparable);
    t.is(gate.body.policy_version, 2);
    t.is(gate.body.previous_snapshot_id, audits.v2!.snapshot);
    const types = new Map(gate.body.changes.map((c: any) => [c.key, c.change_type]));
    t.is(types.get('pipeline:github-actions/ci'), 'entity_not_reobserved');
    t.is(types.get('job:github-actions/ci/test'), 'entity_not_reobserved');
    t.false(gate.body.changes.some((c: any) => c.change_type.endsWith('_removed')));
    t.regex(gate.body.reasons[0].text, /source coverage differs/);
  },
);

test.serial(
  'approved decisions in the loop: covered changes are allowed, a contradicted criterion blocks',
  async (t) => {
    const arch = await get(`/audits/${audits.v2!.id}/architecture`);
    const evidence = arch.body.evidence[0].id;
    const propose = async (over: Record<string, unknown>) => {
      const proposed = await call(h.app.url, 'POST', `${ws()}/decisions`, {
        token: tenant.token,
        body: {
          title: 'Reports reads orders directly',
          question: 'How does reporting get order data?',
          context: 'Reporting needs orders; billing leaves MySQL; payments move to a provider.',
          snapshot_id: audits.v2!.snapshot,
          owner_id: tenant.memberId,
          options: [
            { id: 'direct', title: 'Direct', description: 'Read orders-db directly.' },
            { id: 'replica', title: 'Replica', description: 'Read a replica.' },
          ],
          evidence_ids: [evidence],
          uncertainties: [],
          success_criteria: [
            {
              id: 'reports-present',
              description: 'The reports service exists',
              check: { kind: 'entity_present', key: 'service:reports' },
            },
          ],
          ...over,
        },
      });
      t.is(proposed.status, 201, proposed.text);
      const id = proposed.body.id;
      const move = (status: string, token: string, extra = {}) =>
        call(h.app.url, 'POST', `${ws()}/decisions/${id}/transitions`, {
          token,
          body: { status, rationale: `to ${status}`, ...extra },
        });
      t.is((await move('in_review', tenant.token)).status, 200);
      const approved = await call(h.app.url, 'POST', `${ws()}/decisions/${id}/approval`, {
        token: bob.token,
        body: { rationale: 'to approved', selected_option_id: 'direct' },
      });
      t.is(approved.status, 200, approved.text);
      return id as string;
    };
    const changesV1V2 = () =>
      get(
        `/repositories/${repositoryId}/architecture/changes?from_snapshot_id=${audits.v1!.snapshot}&to_snapshot_id=${audits.v2!.snapshot}`,
      );
    t.is((await changesV1V2()).body.gate.outcome, 'blocked');

    const allowing = await propose({
      affected_entity_keys: ['service:reports', 'datastore:legacy-db'],
      affected_relationship_keys: EXPECTED_V2.filter((e) => e[0] === 'relationship_added').map(
        (e) => e[1],
      ),
    });
    const allowed = await changesV1V2();
    t.is(allowed.body.gate.outcome, 'pass', allowed.body.gate.reasons.join('\n'));
    t.true(allowed.body.changes.every((c: any) => c.consequence === 'informational'));
    t.true(
      allowed.body.gate.reasons.some(
        (r: string) => r.startsWith('allowed') && r.includes(allowing),
      ),
    );

    const contradicting = await propose({
      title: 'Reporting reads a replica, never the primary',
      success_criteria: [
        {
          id: 'no-direct-reads',
          description: 'reports does not connect to orders-db',
          check: {
            kind: 'relationship_absent',
            key: 'connects_to:service:reports->datastore:orders-db',
          },
        },
      ],
    });
    const blocked = await changesV1V2();
    t.is(blocked.body.gate.outcome, 'blocked');
    const reason = blocked.body.gate.reasons.find((r: string) => r.includes(contradicting));
    t.regex(reason, /^blocked: .*no-direct-reads/);
  },
);

test('content hashes are SHA-256 of RFC 8785 canonical JSON (pinned)', (t) => {
  // {"a":"é","b":[1,2],"c":{"y":null,"z":1.5}}: keys sorted, no white space, UTF-8.
  t.is(
    contentSha256({ c: { z: 1.5, y: null }, b: [1, 2], a: 'é' }),
    '40b3b975ab5ec007ea2ebfe86225bf3ccbed32f628c6a64660644f952847af31',
  );
});

test.serial(
  'audit comparisons: findings and architecture deltas, limitations, the same hash twice',
  async (t) => {
    const compare = (baseline: string, candidate: string, token = tenant.token) =>
      call(h.app.url, 'POST', `${ws()}/audit-comparisons`, {
        token,
        body: { baseline_audit_id: baseline, candidate_audit_id: candidate },
      });
    const first = await compare(audits.v1!.id, audits.v2!.id);
    t.is(first.status, 201, first.text);
    t.is(first.headers.get('location'), `${ws()}/audit-comparisons/${first.body.id}`);
    const result = first.body.snapshot;
    t.like(result, {
      coverage_comparable: true,
      architecture_comparable: true,
      baseline: { audit_id: audits.v1!.id, status: 'completed' },
      candidate: { audit_id: audits.v2!.id, status: 'completed' },
    });
    const ops = new Map(result.architecture_changes.map((d: any) => [d.key, d.operation]));
    t.is(ops.get('datastore:legacy-db'), 'removed');
    t.is(ops.get('service:reports'), 'added');
    t.is(ops.get('connects_to:service:reports->datastore:orders-db'), 'added');
    t.is(result.counts.entities_removed, 1);
    for (const f of result.findings) {
      if (f.change === 'added')
        t.true(f.baseline_finding_id === null && f.candidate_finding_id !== null);
      if (f.change === 'resolved')
        t.true(f.baseline_finding_id !== null && f.candidate_finding_id === null);
      if (f.change === 'unchanged') t.is(f.baseline_finding_id, f.candidate_finding_id);
    }
    t.is(
      result.findings.length,
      result.counts.findings_added +
        result.counts.findings_resolved +
        result.counts.findings_changed +
        result.counts.findings_unchanged,
    );
    t.deepEqual(result.limitations, [
      'the baseline audit was scanner-only: no model-backed review ran',
      'the candidate audit was scanner-only: no model-backed review ran',
    ]);

    const second = await compare(audits.v1!.id, audits.v2!.id);
    t.not(second.body.id, first.body.id);
    t.is(second.body.content_sha256, first.body.content_sha256);
    t.regex(first.body.content_sha256, /^[0-9a-f]{64}$/);

    const narrower = await compare(audits.v2!.id, audits.v3!.id);
    t.false(narrower.body.snapshot.coverage_comparable);
    t.true(narrower.body.snapshot.limitations.includes('the candidate audit read no cicd sources'));
    t.true(
      narrower.body.snapshot.limitations.some((l: string) =>
        l.startsWith('the source scopes differ'),
      ),
    );
    t.not(narrower.body.content_sha256, first.body.content_sha256);

    const got = await get(`/audit-comparisons/${first.body.id}`);
    t.deepEqual(got.body, first.body);
    const listed = await get(`/audit-comparisons?repository_id=${repositoryId}&limit=2`);
    t.is(listed.body.items.length, 2);
    t.true(listed.body.has_more);
    t.is(listed.body.items[0].id, narrower.body.id);
    t.is(listed.body.items[0].coverage_comparable, false);

    const stranger = await createTenant(h.app.services.db);
    const hidden = await call(
      h.app.url,
      'GET',
      `/v1/workspaces/${stranger.workspaceId}/audit-comparisons/${first.body.id}`,
      { token: stranger.token },
    );
    t.is(hidden.status, 404);
    const unknown = await compare(audits.v1!.id, '00000000-0000-4000-8000-000000000000');
    t.is(unknown.status, 404);
  },
);

test.serial(
  'change sets: each audit records an observed set; a candidate reconciles with it',
  async (t) => {
    const sets = await get(`/repositories/${repositoryId}/change-sets?state=observed`);
    t.is(sets.status, 200);
    // v1 had nothing to compare with; v2 and v3 each observed their changes.
    t.deepEqual(
      sets.body.items.map((s: any) => s.change_key),
      [`audit:${audits.v3!.id}`, `audit:${audits.v2!.id}`],
    );
    const observed = sets.body.items[1];
    t.like(observed, {
      state: 'observed',
      trigger: 'audit',
      baseline_snapshot_id: audits.v1!.snapshot,
      result_snapshot_id: audits.v2!.snapshot,
      gate_result: { outcome: 'blocked' },
    });
    const observedIds = new Set(
      observed.normalized_changes.map((c: any) => `${c.change_type} ${c.key}`),
    );
    t.true(observedIds.has('entity_removed datastore:legacy-db'));
    const reportsImpact = observed.impact_result.entities.find(
      (e: any) => e.entity_key === 'service:reports',
    );
    t.deepEqual(reportsImpact.affected_entity_keys, ['datastore:orders-db']);

    const declare = (body: Record<string, unknown>) =>
      call(h.app.url, 'POST', `${ws()}/repositories/${repositoryId}/change-sets`, {
        token: tenant.token,
        body: {
          change_key: 'pr-42',
          source_ref: 'feature/reports',
          trigger: 'pull_request',
          reason: 'Add reporting; retire the legacy billing database',
          baseline_snapshot_id: audits.v1!.snapshot,
          changes: [
            {
              change_type: 'entity_added',
              key: 'service:reports',
              kind: 'service',
              field: null,
              before: null,
              after: null,
            },
            {
              change_type: 'entity_removed',
              key: 'datastore:legacy-db',
              kind: 'datastore',
              field: null,
              before: null,
              after: null,
            },
            {
              change_type: 'entity_added',
              key: 'service:search',
              kind: 'service',
              field: null,
              before: null,
              after: null,
            },
          ],
          ...body,
        },
      });
    const bad = await declare({
      change_key: 'pr-bad',
      changes: [
        {
          change_type: 'entity_added',
          key: 'reports',
          kind: 'service',
          field: null,
          before: null,
          after: null,
        },
        {
          change_type: 'relationship_added',
          key: 'service:a->service:b',
          kind: 'calls',
          field: null,
          before: null,
          after: null,
        },
      ],
    });
    t.is(bad.status, 400);
    t.deepEqual(
      bad.body.errors.map((e: any) => e.path),
      ['/changes/0/key', '/changes/1/key'],
    );
    const created = await declare({});
    t.is(created.status, 201, created.text);
    t.like(created.body, {
      state: 'candidate',
      actor_id: tenant.memberId,
      reconciled_change_set_id: null,
    });
    t.is((await declare({})).status, 409);

    const reconcile = (id: string, body: Record<string, unknown>) =>
      call(h.app.url, 'POST', `${ws()}/change-sets/${id}/reconcile`, { token: tenant.token, body });
    const done = await reconcile(created.body.id, { observed_change_set_id: observed.id });
    t.is(done.status, 200, done.text);
    t.deepEqual(done.body.accuracy, {
      matched: 2,
      unexpected: 1,
      missed: observedIds.size - 2,
      precision: '0.6667',
      recall: (2 / observedIds.size).toFixed(4),
    });
    t.is(done.body.reconciled_change_set_id, observed.id);
    t.like(done.body.gate_result, { outcome: 'blocked' });
    t.true(done.body.impact_result.affected_entity_keys.includes('datastore:orders-db'));
    const again = await reconcile(created.body.id, { observed_change_set_id: observed.id });
    t.deepEqual(again.body, done.body);
    const other = await reconcile(created.body.id, {
      observed_change_set_id: sets.body.items[0].id,
    });
    t.like(other.body, { status: 409, code: 'already_reconciled' });
    const wrongWay = await reconcile(observed.id, {});
    t.like(wrongWay.body, { status: 409, code: 'change_set_not_candidate' });
    const later = await declare({ change_key: 'pr-43' });
    const none = await reconcile(later.body.id, {});
    t.like(none.body, { status: 409, code: 'no_observed_change_set' });
    const notObserved = await reconcile(later.body.id, { observed_change_set_id: created.body.id });
    t.like(notObserved.body, { status: 409, code: 'change_set_not_observed' });
    const unknownSet = await reconcile(later.body.id, {
      observed_change_set_id: '00000000-0000-4000-8000-000000000000',
    });
    t.is(unknownSet.status, 404);
    // A candidate of another repository cannot be reconciled with this repository's observed set.
    const elsewhere = createRepo(CHANGES_V1);
    try {
      const other = await call(h.app.url, 'POST', `${ws()}/repositories`, {
        token: tenant.token,
        body: { name: 'elsewhere', url: `file://${elsewhere.dir}` },
      });
      const foreign = await call(
        h.app.url,
        'POST',
        `${ws()}/repositories/${other.body.id}/change-sets`,
        {
          token: tenant.token,
          body: {
            change_key: 'pr-1',
            source_ref: 'main',
            trigger: 'manual',
            reason: 'Another repository',
            changes: [
              {
                change_type: 'entity_added',
                key: 'service:x',
                kind: 'service',
                field: null,
                before: null,
                after: null,
              },
            ],
          },
        },
      );
      t.is(foreign.status, 201, foreign.text);
      const mismatch = await reconcile(foreign.body.id, { observed_change_set_id: observed.id });
      t.like(mismatch.body, { status: 422, code: 'change_set_repository_mismatch' });
    } finally {
      elsewhere.remove();
    }
    t.deepEqual((await get(`/change-sets/${created.body.id}`)).body, done.body);
    const readOnly = await createToken(h.app.services.db, tenant, ['audits:read']);
    const denied = await call(
      h.app.url,
      'POST',
      `${ws()}/repositories/${repositoryId}/change-sets`,
      {
        token: readOnly.token,
        body: {},
      },
    );
    t.is(denied.status, 403);
  },
);

test.serial(
  'control exceptions: validated, applied to the next audit, and gone once revoked',
  async (t) => {
    const assessments = await get(`/audits/${audits.v2!.id}/assessments?limit=100`);
    const failing = assessments.body.items.find((a: any) => a.status === 'fail');
    t.truthy(failing, 'the fixture fails at least one control');
    const post = (body: Record<string, unknown>, token = tenant.token) =>
      call(h.app.url, 'POST', `${ws()}/control-exceptions`, { token, body });
    const inDays = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString();
    const base = {
      control_key: failing.control_key,
      scope: 'repository',
      repository_id: repositoryId,
      reason: 'Accepted until the platform migration lands',
      expires_at: inDays(30),
    };
    const past = await post({ ...base, expires_at: new Date(Date.now() - 60_000).toISOString() });
    t.is(past.status, 400);
    t.deepEqual(
      past.body.errors.map((e: any) => e.path),
      ['/expires_at'],
    );
    const tooFar = await post({ ...base, expires_at: inDays(400) });
    t.is(tooFar.status, 400);
    const unknown = await post({ ...base, control_key: 'no-such-control', scope: 'entity' });
    t.deepEqual(
      unknown.body.errors.map((e: any) => e.path),
      ['/control_key', '/subject_key'],
    );
    const misplaced = await post({ ...base, scope: 'workspace' });
    t.deepEqual(
      misplaced.body.errors.map((e: any) => e.path),
      ['/repository_id'],
    );
    const noRepo = await post({ ...base, repository_id: '00000000-0000-4000-8000-000000000000' });
    t.is(noRepo.status, 404);
    const badKey = await post({ ...base, scope: 'entity', subject_key: 'not a key' });
    t.deepEqual(
      badKey.body.errors.map((e: any) => e.path),
      ['/subject_key'],
    );
    const readOnly = await createToken(h.app.services.db, tenant, ['policies:read']);
    t.is((await post(base, readOnly.token)).status, 403);

    const created = await post(base);
    t.is(created.status, 201, created.text);
    t.like(created.body, { state: 'active', scope: 'repository', created_by: tenant.memberId });
    const listed = await get(`/control-exceptions?state=active`, readOnly.token);
    t.deepEqual(
      listed.body.items.map((e: any) => e.id),
      [created.body.id],
    );

    const excepted = await audit();
    const after = await get(`/audits/${excepted.id}/assessments?limit=100`);
    const covered = after.body.items.find((a: any) => a.control_key === failing.control_key);
    t.is(covered.status, 'fail');
    t.is(covered.exception_id, created.body.id);
    t.true(covered.overlay_version >= 1);
    t.true(
      after.body.items
        .filter((a: any) => a.control_key !== failing.control_key)
        .every((a: any) => a.exception_id === null),
    );

    const revoked = await call(
      h.app.url,
      'POST',
      `${ws()}/control-exceptions/${created.body.id}/revoke`,
      {
        token: tenant.token,
      },
    );
    t.like(revoked.body, { state: 'revoked', revoked_by: tenant.memberId });
    const next = await audit();
    const again = await get(`/audits/${next.id}/assessments?limit=100`);
    const uncovered = again.body.items.find((a: any) => a.control_key === failing.control_key);
    t.is(uncovered.exception_id, null);
    t.true(uncovered.overlay_version > covered.overlay_version);
    t.is((await get(`/control-exceptions/${created.body.id}`)).body.state, 'revoked');
  },
);
