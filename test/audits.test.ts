/** Audits of real git repositories, run by a real worker on the test Temporal server. */
import { recordHistory } from './helpers/histories';
import test from 'ava';
import { Worker } from '@temporalio/worker';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { startTestApp } from './helpers/app';
import { createTenant, LOCAL_TEST_WORKSPACES, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call, isProblem } from './helpers/http';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let repositoryId: string;
let featureSha: string;
let firstSha: string;

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
  firstSha = repo.git('rev-parse', 'HEAD');
  repo.commit({ 'services/api/src/orders.ts': 'export const orders = [];\n' }, 'orders');
  repo.git('checkout', '--quiet', '-b', 'feature');
  featureSha = repo.commit(
    { 'services/api/src/feature.ts': 'export const feature = true;\n' },
    'feature',
  );
  repo.git('checkout', '--quiet', 'main');
  const created = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${tenant.workspaceId}/repositories`,
    {
      token: tenant.token,
      body: { name: 'shop', url: `file://${repo.dir}` },
    },
  );
  repositoryId = created.body.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

const audits = () => `/v1/workspaces/${tenant.workspaceId}/audits`;

async function runAudit(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const started = await call(h.app.url, 'POST', audits(), { token: tenant.token, body, headers });
  if (started.status !== 202) throw new Error(`createAudit: ${started.status} ${started.text}`);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  return { started, done };
}

test('an audit of the default branch completes every stage and records the resolved commit', async (t) => {
  const { started, done } = await runAudit({ repository_id: repositoryId });
  t.is(started.body.status, 'queued');
  t.is(started.body.workflow_id, `audit-${started.body.id}`);
  t.is(started.headers.get('location'), `${audits()}/${started.body.id}`);

  const audit = done.body;
  t.is(audit.status, 'completed', JSON.stringify(audit.stages));
  t.is(audit.commit_sha, repo.git('rev-parse', 'main'));
  t.is(audit.branch_ref, 'main');
  t.deepEqual(
    audit.stages.map((s: any) => [s.key, s.status]),
    [
      'source',
      'inventory',
      'code',
      'cloud',
      'cicd',
      'reconcile',
      'controls',
      'changes',
      'report',
    ].map((k) => [k, 'completed']),
  );
  for (const s of audit.stages) {
    t.is(s.attempt, 1);
    t.truthy(s.started_at);
    t.truthy(s.completed_at);
    t.truthy(s.summary);
  }
  t.truthy(audit.completed_at);
  t.true(audit.scanner_only);
  t.deepEqual(audit.coverage_gaps, []);
  t.is(audit.source.kind, 'repository');
  t.is(audit.source.commit_sha, audit.commit_sha);
  t.is(audit.source.file_count, Object.keys(SAMPLE_FILES).length + 1);
  t.regex(audit.source.manifest_sha256, /^[0-9a-f]{64}$/);
  t.deepEqual(audit.source_manifest.by_source_type, { cicd: 1, cloud: 4, code: 5, other: 1 });

  const timeline = await call(h.app.url, 'GET', `${audits()}/${audit.id}/agent-runs`, {
    token: tenant.token,
  });
  t.is(timeline.status, 200);
  t.regex(timeline.body.context_hash, /^[0-9a-f]{64}$/);
  const keys: string[] = timeline.body.runs.map((r: any) => r.agent_key);
  // In order: inventory first, the analysis agents (interleaved: their stages run in parallel), then reconcile, controls and report.
  const analysis = [
    'cicd-analyzer',
    'cicd-inventory',
    'cloud-analyzer',
    'cloud-inventory',
    'code-analyzer',
    'code-inventory',
  ];
  t.is(keys[0], 'inventory');
  t.deepEqual(keys.slice(1, 7).sort(), analysis);
  t.deepEqual(keys.slice(7), ['reconcile', 'controls', 'report']);
  for (const key of ['inventory', ...analysis, 'reconcile', 'controls', 'report']) {
    const run = timeline.body.runs.find((r: any) => r.agent_key === key);
    t.truthy(run, `${key} ran`);
    t.is(run.status, 'succeeded');
    t.is(run.attempt, 1);
    t.truthy(run.artifact, `${key} has an artifact`);
  }
  const cloud = timeline.body.runs.find((r: any) => r.agent_key === 'cloud-inventory');
  t.deepEqual(Object.keys(cloud.artifact.artifact.formats).sort(), [
    'docker-compose',
    'dockerfile',
    'kubernetes',
    'terraform',
  ]);

  const logs = await call(h.app.url, 'GET', `${audits()}/${audit.id}/logs`, {
    token: tenant.token,
  });
  t.true(logs.body.items.some((l: any) => l.message.includes(`at ${audit.commit_sha}`)));
  t.true(logs.body.items.some((l: any) => l.message === 'audit completed'));
  const warnings = await call(h.app.url, 'GET', `${audits()}/${audit.id}/logs?level=warning`, {
    token: tenant.token,
  });
  // Failing controls are warnings of their own (source control); the analyzers read everything.
  t.deepEqual(
    warnings.body.items.filter((l: any) => l.source !== 'control'),
    [],
  );
});

test('stage bookkeeping rides on the work activities: no local activity in a completed audit, each stage logged once', async (t) => {
  const { done } = await runAudit({
    repository_id: repositoryId,
    source_scope: { source_types: ['code', 'cloud'] },
  });
  const audit = done.body;
  t.is(audit.status, 'completed');
  const byKey = Object.fromEntries(audit.stages.map((s: any) => [s.key, s]));
  t.like(byKey.cicd, {
    status: 'skipped',
    summary: 'not in source_scope.source_types',
    attempt: 0,
  });
  t.like(byKey.changes, { status: 'completed', attempt: 1 });
  t.regex(byKey.changes.summary, /^gate (pass|review|blocked|insufficient_evidence): \d+ changes$/);
  t.regex(byKey.reconcile.summary, /; snapshot /, 'the last step appends its summary to the stage');
  for (const key of ['source', 'inventory', 'code', 'cloud', 'reconcile', 'controls', 'report'])
    t.like(byKey[key], { status: 'completed', attempt: 1 }, key);
  // Stages in order of their start: the source step began the audit, the report ended it.
  const started = audit.stages
    .filter((s: any) => s.started_at)
    .sort((a: any, b: any) => Date.parse(a.started_at) - Date.parse(b.started_at));
  t.is(started[0].key, 'source');
  t.true(Date.parse(audit.completed_at) >= Date.parse(byKey.report.completed_at));

  const logs = await call(h.app.url, 'GET', `${audits()}/${audit.id}/logs?limit=200`, {
    token: tenant.token,
  });
  const stageLines = logs.body.items
    .filter((l: any) => l.source === 'stage')
    .map((l: any) => l.message as string);
  for (const key of [
    'source',
    'inventory',
    'code',
    'cloud',
    'reconcile',
    'controls',
    'changes',
    'report',
  ]) {
    t.is(stageLines.filter((m: string) => m === `stage ${key} started`).length, 1, key);
    t.is(stageLines.filter((m: string) => m.startsWith(`stage ${key} completed`)).length, 1, key);
  }
  t.is(stageLines.filter((m: string) => m.startsWith('stage cicd skipped')).length, 1);
  t.is(stageLines.filter((m: string) => m === 'audit completed').length, 1);
  t.is(stageLines.filter((m: string) => m === 'audit started').length, 1);

  // The history: work activities only, no local activity (marker) between them; the local
  // activities come after the last step, once the audit is complete (decisions, then
  // remediations, to notify, then the audit's forge publication, if any: one each).
  const client = await h.app.services.temporal.client();
  const history = await client.workflow.getHandle(audit.workflow_id).fetchHistory();
  const events = history.events ?? [];
  const lastStepDone = Math.max(
    ...events.filter((e) => e.activityTaskCompletedEventAttributes).map((e) => Number(e.eventId)),
  );
  const localActivities = events.filter(
    (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
  );
  t.true(localActivities.length <= 3, `${localActivities.length} local activities`);
  for (const e of localActivities) t.true(Number(e.eventId) > lastStepDone);
  const activityTypes = events
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter(Boolean);
  t.deepEqual([...new Set(activityTypes)].sort(), [
    'acquireSource',
    'evaluateChanges',
    'persistArchitecture',
    'persistControls',
    'runAgent',
  ]);
  await t.notThrowsAsync(
    Worker.runReplayHistory({ workflowsPath: require.resolve('../workflows') }, history),
  );
  await recordHistory(client, audit.workflow_id, 'audit-completed');
});

test('an audit of a branch and of an exact commit read those commits', async (t) => {
  const branch = await runAudit({ repository_id: repositoryId, branch_ref: 'feature' });
  t.is(branch.done.body.status, 'completed');
  t.is(branch.done.body.commit_sha, featureSha);

  const commit = await runAudit({
    repository_id: repositoryId,
    commit_sha: firstSha.toUpperCase(),
  });
  t.is(commit.done.body.status, 'completed');
  t.is(commit.done.body.commit_sha, firstSha);
  t.is(commit.done.body.source.file_count, Object.keys(SAMPLE_FILES).length);
});

test('an unknown branch or commit fails the audit with its code and a log line saying which', async (t) => {
  const branch = await runAudit({ repository_id: repositoryId, branch_ref: 'no-such-branch' });
  t.is(branch.done.body.status, 'failed');
  const source = branch.done.body.stages.find((s: any) => s.key === 'source');
  t.is(source.status, 'failed');
  t.is(source.error_code, 'branch_not_found');
  t.true(
    branch.done.body.stages
      .filter((s: any) => s.key !== 'source')
      .every((s: any) => s.status === 'skipped'),
  );
  const logs = await call(h.app.url, 'GET', `${audits()}/${branch.done.body.id}/logs?level=error`, {
    token: tenant.token,
  });
  t.true(logs.body.items.some((l: any) => l.message.includes('no-such-branch')));
  await recordHistory(
    await h.app.services.temporal.client(),
    branch.done.body.workflow_id,
    'audit-failed',
  );

  const sha = 'deadbeef'.repeat(5);
  const commit = await runAudit({ repository_id: repositoryId, commit_sha: sha });
  t.is(commit.done.body.status, 'failed');
  t.is(commit.done.body.stages[0].error_code, 'commit_not_found');
  const clogs = await call(
    h.app.url,
    'GET',
    `${audits()}/${commit.done.body.id}/logs?level=error`,
    { token: tenant.token },
  );
  t.true(clogs.body.items.some((l: any) => l.message.includes(sha)));
});

test('AuditCreate bounds and rules answer 400 naming the field', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{}, '/repository_id'],
    [{ repository_id: repositoryId, upload_id: repositoryId }, '/upload_id'],
    [{ repository_id: repositoryId, branch_ref: '' }, '/branch_ref'],
    [{ repository_id: repositoryId, branch_ref: 'x'.repeat(501) }, '/branch_ref'],
    [{ repository_id: repositoryId, commit_sha: 'a'.repeat(39) }, '/commit_sha'],
    [{ repository_id: repositoryId, commit_sha: 'a'.repeat(41) }, '/commit_sha'],
    [{ repository_id: repositoryId, commit_sha: 'g'.repeat(40) }, '/commit_sha'],
    [{ repository_id: repositoryId, profile_version: 0 }, '/profile_version'],
    [{ repository_id: repositoryId, branch_ref: '--upload-pack=x' }, '/branch_ref'],
    [{ repository_id: '00000000-0000-4000-8000-000000000000' }, '/repository_id'],
    [
      { repository_id: repositoryId, source_scope: { source_types: [] } },
      '/source_scope/source_types',
    ],
  ];
  for (const [body, path] of cases) {
    const reply = await call(h.app.url, 'POST', audits(), { token: tenant.token, body });
    t.is(reply.status, 400, JSON.stringify(body));
    t.true(isProblem(reply));
    t.true(
      reply.body.errors.some((e: any) => e.path === path),
      `${JSON.stringify(body)} names ${path}: ${reply.text}`,
    );
  }
  // The edges that are allowed.
  const ok = await call(h.app.url, 'POST', audits(), {
    token: tenant.token,
    body: { repository_id: repositoryId, branch_ref: 'b'.repeat(500), commit_sha: null },
  });
  t.is(ok.status, 202);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, ok.body.id);
  t.is(done.body.stages[0].error_code, 'branch_not_found');
});

test('Idempotency-Key: a repeat returns the same audit; another body with the key is 422', async (t) => {
  const headers = { 'Idempotency-Key': `k-${Date.now()}` };
  const first = await call(h.app.url, 'POST', audits(), {
    token: tenant.token,
    body: { repository_id: repositoryId },
    headers,
  });
  const second = await call(h.app.url, 'POST', audits(), {
    token: tenant.token,
    body: { repository_id: repositoryId },
    headers,
  });
  t.is(first.status, 202);
  t.is(second.status, 202);
  t.is(second.body.id, first.body.id);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  const other = await call(h.app.url, 'POST', audits(), {
    token: tenant.token,
    body: { repository_id: repositoryId, branch_ref: 'feature' },
    headers,
  });
  t.is(other.status, 422);
  t.is(other.body.code, 'idempotency_key_reused');
  await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, first.body.id);
});

test('listAudits filters by repository and status and pages', async (t) => {
  for (const branch_ref of ['main', 'feature', 'missing-branch'])
    await runAudit({ repository_id: repositoryId, branch_ref });
  const all = await call(h.app.url, 'GET', `${audits()}?repository_id=${repositoryId}&limit=2`, {
    token: tenant.token,
  });
  t.is(all.status, 200);
  t.is(all.body.items.length, 2);
  t.true(all.body.has_more);
  const failed = await call(h.app.url, 'GET', `${audits()}?status=failed`, { token: tenant.token });
  t.true(failed.body.items.every((a: any) => a.status === 'failed'));
  const bad = await call(h.app.url, 'GET', `${audits()}?status=exploded`, { token: tenant.token });
  t.is(bad.status, 400);
});

test('cancelling a finished audit is 409; retry starts a new audit with the same inputs', async (t) => {
  const { done } = await runAudit({ repository_id: repositoryId, commit_sha: firstSha });
  const cancel = await call(h.app.url, 'POST', `${audits()}/${done.body.id}/cancel`, {
    token: tenant.token,
  });
  t.is(cancel.status, 409);
  t.is(cancel.body.code, 'audit_finished');
  t.is(cancel.body.status, 409, 'the problem status is the HTTP status');
  t.is(cancel.body.current_status, 'completed');

  const retry = await call(h.app.url, 'POST', `${audits()}/${done.body.id}/retry`, {
    token: tenant.token,
  });
  t.is(retry.status, 202);
  t.not(retry.body.id, done.body.id);
  t.is(retry.body.origin, 'retry');
  t.is(retry.body.origin_ref, done.body.id);
  const again = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, retry.body.id);
  t.is(again.body.status, 'completed');
  t.is(again.body.commit_sha, firstSha);
});

test('auditing the same commit again reuses every cacheable artifact at no cost', async (t) => {
  // A commit no other (concurrent) test audits, so the first run cannot be served from the cache.
  const own = createRepo({
    ...SAMPLE_FILES,
    'services/api/src/only-here.ts': `export const id = '${Date.now()}';\n`,
  });
  t.teardown(() => own.remove());
  const registered = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${tenant.workspaceId}/repositories`,
    {
      token: tenant.token,
      body: { name: 'shop-cache', url: `file://${own.dir}` },
    },
  );
  const sha = own.git('rev-parse', 'HEAD');
  const first = await runAudit({ repository_id: registered.body.id, commit_sha: sha });
  const second = await runAudit({ repository_id: registered.body.id, commit_sha: sha });
  t.is(second.done.body.status, 'completed');
  const timeline = await call(h.app.url, 'GET', `${audits()}/${second.done.body.id}/agent-runs`, {
    token: tenant.token,
  });
  const byKey = Object.fromEntries(timeline.body.runs.map((r: any) => [r.agent_key, r]));
  for (const key of [
    'inventory',
    'code-inventory',
    'cloud-inventory',
    'cicd-inventory',
    'code-analyzer',
    'cloud-analyzer',
    'cicd-analyzer',
  ]) {
    t.true(byKey[key].cache_hit, `${key} is a cache hit`);
    t.is(byKey[key].cost_usd, '0.000000');
    t.truthy(byKey[key].artifact);
  }
  t.false(byKey.report.cache_hit, 'the report is always written afresh');
  t.false(byKey.reconcile.cache_hit, 'the graph is reconciled afresh from the (cached) evidence');
  t.false(byKey.controls.cache_hit, "controls assess this audit's own snapshot");
  const firstTimeline = await call(
    h.app.url,
    'GET',
    `${audits()}/${first.done.body.id}/agent-runs`,
    { token: tenant.token },
  );
  t.false(firstTimeline.body.runs.find((r: any) => r.agent_key === 'inventory').cache_hit);
  t.is(timeline.body.context_hash, firstTimeline.body.context_hash);
});

test('another workspace cannot see an audit', async (t) => {
  const other = await createTenant(h.app.services.db);
  const { done } = await runAudit({ repository_id: repositoryId, commit_sha: firstSha });
  const reply = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${other.workspaceId}/audits/${done.body.id}`,
    { token: other.token },
  );
  t.is(reply.status, 404);
  const cross = await call(h.app.url, 'POST', `/v1/workspaces/${other.workspaceId}/audits`, {
    token: other.token,
    body: { repository_id: repositoryId },
  });
  t.is(cross.status, 400, 'a repository of another workspace is unknown here');
});

test('Temporal unreachable: createAudit commits the audit, answers 503 naming it, and the audit ends failed with its stages skipped', async (t) => {
  const app = await startTestApp({
    temporalAddress: '127.0.0.1:1',
    localRepositoryWorkspaces: [LOCAL_TEST_WORKSPACES],
  });
  try {
    const owner = await createTenant(app.services.db);
    const ws = `/v1/workspaces/${owner.workspaceId}`;
    const repository = await call(app.url, 'POST', `${ws}/repositories`, {
      token: owner.token,
      body: { name: 'shop', url: `file://${repo.dir}` },
    });
    const reply = await call(app.url, 'POST', `${ws}/audits`, {
      token: owner.token,
      body: { repository_id: repository.body.id },
    });
    t.is(reply.status, 503, reply.text);
    t.true(isProblem(reply));
    t.is(reply.body.code, 'workflow_engine_unavailable');
    t.is(reply.headers.get('retry-after'), '5');
    const id = reply.body.audit_id as string;
    const audit = await call(app.url, 'GET', `${ws}/audits/${id}`, { token: owner.token });
    t.is(audit.status, 200);
    t.is(audit.body.status, 'failed');
    t.truthy(audit.body.completed_at);
    t.deepEqual(
      audit.body.stages.map((s: { status: string }) => s.status),
      Array(9).fill('skipped'),
    );
    const logs = await call(app.url, 'GET', `${ws}/audits/${id}/logs`, { token: owner.token });
    const line = logs.body.items.find((l: { level: string }) => l.level === 'error');
    t.regex(line.message, /^the audit workflow could not be started: \S/);
    const row = await app.services.db('audits').where({ id }).first('error_code');
    t.is(row.error_code, 'workflow_start_failed');
    t.true(app.logs().includes('could not start the audit workflow'));
  } finally {
    await app.close();
  }
});
