/**
 * How audit runs behave under failure: a flaky agent retried, model-backed review with cost,
 * cancellation mid-run, and a worker killed mid-audit.
 */
import test from 'ava';
import { OpenAiCompatibleProvider } from '../activities/audits/agents/model';
import { type ModelPrice } from '../domain/audits/pricing';
import { addUsd, costUsd } from '../domain/audits/pricing';
import { flakyAgent, slowAgent } from './fixtures/test-agents';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { startFakeModelServer, type FakeModelServer } from './helpers/fake-model';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { spawnWorker, stopProcess } from './helpers/worker-process';

interface Setup {
  h: AuditHarness;
  tenant: Tenant;
  repositoryId: string;
  audits: string;
}

const repos: TestRepo[] = [];
const harnesses: AuditHarness[] = [];
const fakes: FakeModelServer[] = [];

async function setup(options: Parameters<typeof startAuditHarness>[0]): Promise<Setup> {
  const h = await startAuditHarness(options);
  harnesses.push(h);
  const tenant = await createTenant(h.app.services.db);
  const repo = createRepo(SAMPLE_FILES);
  repos.push(repo);
  const created = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${tenant.workspaceId}/repositories`,
    {
      token: tenant.token,
      body: { name: 'shop', url: `file://${repo.dir}` },
    },
  );
  return {
    h,
    tenant,
    repositoryId: created.body.id,
    audits: `/v1/workspaces/${tenant.workspaceId}/audits`,
  };
}

test.after.always(async () => {
  for (const h of harnesses) await h.close();
  for (const f of fakes) await f.close();
  for (const r of repos) r.remove();
});

async function start(s: Setup, body: Record<string, unknown>) {
  const reply = await call(s.h.app.url, 'POST', s.audits, {
    token: s.tenant.token,
    body: { repository_id: s.repositoryId, ...body },
  });
  if (reply.status !== 202) throw new Error(`createAudit ${reply.status}: ${reply.text}`);
  return reply.body.id as string;
}

const timeline = async (s: Setup, id: string) =>
  (await call(s.h.app.url, 'GET', `${s.audits}/${id}/agent-runs`, { token: s.tenant.token })).body
    .runs as any[];

async function waitForRun(
  s: Setup,
  id: string,
  agentKey: string,
  status: string,
  timeoutMs = 60_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const runs = await timeline(s, id);
    if (runs.some((r) => r.agent_key === agentKey && r.status === status)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${agentKey} never reached ${status}`);
}

test('an agent failing its first attempt shows two rows, and the audit completes', async (t) => {
  const s = await setup({ extraAgents: [flakyAgent] });
  const id = await start(s, {});
  const done = await waitForAudit(s.h.app.url, s.tenant.token, s.tenant.workspaceId, id);
  t.is(done.body.status, 'completed');
  const flaky = (await timeline(s, id)).filter((r) => r.agent_key === 'flaky-test-agent');
  t.is(flaky.length, 2);
  t.like(flaky[0], {
    attempt: 1,
    status: 'failed',
    error_code: 'flaky_first_attempt',
    artifact: null,
  });
  t.like(flaky[1], { attempt: 2, status: 'succeeded', error_code: null });
  t.truthy(flaky[1].artifact);
  t.truthy(
    flaky[0].started_at && flaky[0].completed_at && flaky[1].started_at && flaky[1].completed_at,
  );
  const code = done.body.stages.find((st: any) => st.key === 'code');
  t.is(code.status, 'completed');
  t.regex(code.summary, /flaky ok on attempt 2/);
  const logs = await call(s.h.app.url, 'GET', `${s.audits}/${id}/logs?level=warning`, {
    token: s.tenant.token,
  });
  t.true(
    logs.body.items.some((l: any) =>
      l.message.includes('flaky-test-agent attempt 1 failed: flaky_first_attempt'),
    ),
  );
});

test('deep review without a model provider completes scanner_only with a coverage gap saying why', async (t) => {
  const s = await setup({});
  const id = await start(s, { deep_review: true });
  const done = await waitForAudit(s.h.app.url, s.tenant.token, s.tenant.workspaceId, id);
  t.is(done.body.status, 'completed');
  t.true(done.body.scanner_only);
  const gap = done.body.coverage_gaps.find((g: any) => g.kind === 'deep_review');
  t.like(gap, { reason: 'no_model_provider' });
  t.regex(gap.message, /MODEL_BASE_URL/);
  t.false((await timeline(s, id)).some((r) => r.agent_key === 'deep-review'));
});

test('model-backed review: 429 retried, tokens and cost are the usage blocks times the price table, a repeat is a free cache hit', async (t) => {
  const fake = await startFakeModelServer();
  fakes.push(fake);
  const price: ModelPrice = { input: '2.50', cachedInput: '1.25', output: '10.00' };
  const s = await setup({
    model: new OpenAiCompatibleProvider({
      baseUrl: fake.baseUrl,
      apiKey: 'sk-test-secret',
      modelId: 'test-model',
    }),
    prices: { 'test-model': price },
  });
  fake.enqueue(
    { status: 429, headers: { 'retry-after': '1' } },
    {
      text: 'Observations: api reads DATABASE_URL (services/api/src/index.ts).',
      usage: { prompt_tokens: 12_345, completion_tokens: 678, cached_tokens: 2_345 },
    },
  );
  const id = await start(s, { deep_review: true });
  const done = await waitForAudit(s.h.app.url, s.tenant.token, s.tenant.workspaceId, id);
  t.is(done.body.status, 'completed');
  t.false(done.body.scanner_only);
  t.is(fake.requests.length, 2);
  t.is(fake.requests[0]!.headers.authorization, 'Bearer sk-test-secret');

  const runs = (await timeline(s, id)).filter((r) => r.agent_key === 'deep-review');
  t.is(runs.length, 2);
  t.like(runs[0], {
    attempt: 1,
    status: 'failed',
    error_code: 'model_rate_limited',
    model_id: 'test-model',
    input_tokens: 0,
  });
  t.like(runs[1], {
    attempt: 2,
    status: 'succeeded',
    input_tokens: 12_345,
    cached_input_tokens: 2_345,
    output_tokens: 678,
    reasoning_effort: 'medium',
  });
  const expected = costUsd(
    { inputTokens: 12_345, cachedInputTokens: 2_345, outputTokens: 678 },
    price,
  );
  // By hand: 10,000 x 2.50 + 2,345 x 1.25 + 678 x 10.00 per million = 0.025 + 0.00293125 + 0.00678
  t.is(expected, '0.034711');
  t.is(runs[1].cost_usd, expected);

  const cost = await call(s.h.app.url, 'GET', `${s.audits}/${id}/cost`, { token: s.tenant.token });
  t.deepEqual(cost.body, {
    audit_id: id,
    cost_usd: expected,
    model_calls: 2,
    input_tokens: 12_345,
    cached_input_tokens: 2_345,
    output_tokens: 678,
    models: ['test-model'],
    analysis_cost_usd: expected,
    remediation_cost_usd: '0.000000',
  });
  t.false(s.h.app.logs().includes('sk-test-secret'), 'the model key never reaches a log');

  // The same commit again: the review is served from the cache, without a model call or cost.
  const again = await start(s, { deep_review: true });
  await waitForAudit(s.h.app.url, s.tenant.token, s.tenant.workspaceId, again);
  t.is(fake.requests.length, 2, 'no further model call');
  const cached = (await timeline(s, again)).find((r) => r.agent_key === 'deep-review');
  t.like(cached, { cache_hit: true, status: 'succeeded', cost_usd: '0.000000', input_tokens: 0 });
  const againCost = await call(s.h.app.url, 'GET', `${s.audits}/${again}/cost`, {
    token: s.tenant.token,
  });
  t.like(againCost.body, { cost_usd: '0.000000', model_calls: 0 });
  t.is(addUsd(againCost.body.cost_usd, cost.body.cost_usd), expected);
});

test('cancelling mid-run: the running stage ends cancelled, later stages skipped, the audit cancelled', async (t) => {
  process.env.SLOW_AGENT_MS = '30000';
  const s = await setup({ extraAgents: [slowAgent] });
  const id = await start(s, {});
  await waitForRun(s, id, 'slow-test-agent', 'running');
  const cancel = await call(s.h.app.url, 'POST', `${s.audits}/${id}/cancel`, {
    token: s.tenant.token,
  });
  t.is(cancel.status, 202);
  t.deepEqual(cancel.body, { status: 'accepted' });
  const done = await waitForAudit(s.h.app.url, s.tenant.token, s.tenant.workspaceId, id, 30_000);
  t.is(done.body.status, 'cancelled');
  const stages = Object.fromEntries(done.body.stages.map((st: any) => [st.key, st.status]));
  t.is(stages.source, 'completed');
  t.is(stages.inventory, 'completed');
  t.is(stages.cloud, 'cancelled');
  for (const key of ['reconcile', 'controls', 'changes', 'report'])
    t.is(stages[key], 'skipped', key);
  const slow = (await timeline(s, id)).find((r) => r.agent_key === 'slow-test-agent');
  t.is(slow.status, 'cancelled');
  t.false(
    (await timeline(s, id)).some((r) => r.agent_key === 'report'),
    'no report written for a cancelled audit',
  );
  const again = await call(s.h.app.url, 'POST', `${s.audits}/${id}/cancel`, {
    token: s.tenant.token,
  });
  t.is(again.status, 409);
});

test('a worker killed mid-audit: a new worker finishes it, each stage and agent attempt recorded once', async (t) => {
  const s = await setup({ worker: false });
  const first = await spawnWorker(s.h, { SLOW_AGENT_MS: '6000' });
  const id = await start(s, {});
  try {
    await waitForRun(s, id, 'slow-test-agent', 'running');
  } finally {
    first.kill('SIGKILL');
  }
  await new Promise((r) => first.once('exit', r));
  const second = await spawnWorker(s.h, { SLOW_AGENT_MS: '6000' });
  try {
    const done = await waitForAudit(s.h.app.url, s.tenant.token, s.tenant.workspaceId, id, 90_000);
    t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
    t.is(done.body.stages.length, 9);
    t.deepEqual([...new Set(done.body.stages.map((st: any) => st.key))].length, 9);
    t.true(done.body.stages.every((st: any) => st.status === 'completed'));

    const runs = await timeline(s, id);
    const attempts = runs.map((r) => `${r.agent_key}#${r.attempt}`);
    t.is(new Set(attempts).size, attempts.length, 'no attempt recorded twice');
    const slow = runs.filter((r) => r.agent_key === 'slow-test-agent');
    t.deepEqual(
      slow.map((r) => [r.attempt, r.status, r.error_code]),
      [
        [1, 'failed', 'attempt_lost'],
        [2, 'succeeded', null],
      ],
    );
    for (const key of ['inventory', 'code-inventory', 'cicd-inventory', 'reconcile', 'report']) {
      t.is(runs.filter((r) => r.agent_key === key && r.status === 'succeeded').length, 1, key);
    }
    const logs = await call(s.h.app.url, 'GET', `${s.audits}/${id}/logs`, {
      token: s.tenant.token,
    });
    t.is(logs.body.items.filter((l: any) => l.message === 'audit completed').length, 1);
  } finally {
    await stopProcess(second, 'SIGTERM');
  }
});
