/**
 * An agent failing for good in the middle of a stage: the stage is marked failed with the
 * agent's code and the summaries of the steps before it, the stages running beside it finish,
 * the later stages are skipped, and the audit fails with that code.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { brokenAgent } from './fixtures/test-agents';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;

test.before(async () => {
  h = await startAuditHarness({ extraAgents: [brokenAgent] });
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

test('a non-retryable agent failure fails its stage and the audit; parallel stages finish, later ones are skipped', async (t) => {
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  const started = await call(h.app.url, 'POST', `${ws}/audits`, {
    token: tenant.token,
    body: { repository_id: created.body.id },
  });
  t.is(started.status, 202);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  const audit = done.body;
  t.is(audit.status, 'failed');
  const byKey = Object.fromEntries(audit.stages.map((s: any) => [s.key, s]));
  for (const key of ['source', 'inventory', 'code', 'cloud'])
    t.like(byKey[key], { status: 'completed', attempt: 1 }, key);
  t.like(byKey.cicd, { status: 'failed', error_code: 'broken_on_purpose', attempt: 1 });
  // The summaries of the two steps before the failure (cicd-inventory, cicd-analyzer).
  t.regex(byKey.cicd.summary, /^1 cicd files .*; .*evidence records/);
  t.truthy(byKey.cicd.completed_at);
  for (const key of ['reconcile', 'controls', 'changes', 'report'])
    t.is(byKey[key].status, 'skipped', key);

  const runs = await call(h.app.url, 'GET', `${ws}/audits/${audit.id}/agent-runs`, {
    token: tenant.token,
  });
  const broken = runs.body.runs.filter((r: any) => r.agent_key === 'broken-test-agent');
  t.deepEqual(
    broken.map((r: any) => [r.attempt, r.status, r.error_code]),
    [[1, 'failed', 'broken_on_purpose']],
    'a non-retryable failure is not retried',
  );
  const logs = await call(h.app.url, 'GET', `${ws}/audits/${audit.id}/logs?limit=200`, {
    token: tenant.token,
  });
  const messages: string[] = logs.body.items.map((l: any) => l.message);
  t.is(messages.filter((m) => m.startsWith('stage cicd failed (broken_on_purpose)')).length, 1);
  t.is(messages.filter((m) => m === 'audit failed (broken_on_purpose)').length, 1);
});
