/**
 * The assistant on the real stack: a repository audited at two commits (orders and reports share
 * orders-db, legacy-db retired), then questions answered deterministically from the graph, by
 * the model (a fake OpenAI-compatible server on loopback) through tool calls, from the cache,
 * and a failing model; usage figures against the run rows.
 */
import test from 'ava';
import { OpenAiCompatibleProvider } from '../activities/audits/agents/model';
import { addUsd, costUsd, formatMicros, parseMicros } from '../domain/audits/pricing';
import { startAuditHarness } from './helpers/audit-harness';
import { auditRepository } from './helpers/decisions';
import {
  answerOf,
  ask,
  newConversation,
  registerRepo,
  waitForRun,
  type AssistantWorld,
} from './helpers/assistant';
import { createTenant } from './helpers/factories';
import { startFakeModelServer, type FakeModelServer } from './helpers/fake-model';
import { call } from './helpers/http';
import { recordHistory } from './helpers/histories';
import { CHANGES_V1, CHANGES_V2 } from './fixtures/changes-repo';

const PRICE = { input: '1.00', cachedInput: '0.50', output: '2.00' };
let fake: FakeModelServer;
let w: AssistantWorld;
let conversation: string;
const snapshots: string[] = [];
let evidenceIds: Set<string>;

const get = (path: string) => call(w.h.app.url, 'GET', `${w.ws}${path}`, { token: w.tenant.token });

test.before(async () => {
  fake = await startFakeModelServer();
  const settings = {
    baseUrl: fake.baseUrl,
    modelId: 'fake-model',
    apiKey: null,
    maxTokensParam: 'max_tokens' as const,
  };
  const h = await startAuditHarness({
    model: new OpenAiCompatibleProvider(settings),
    prices: { 'fake-model': PRICE },
    config: { model: settings, modelPrices: { 'fake-model': PRICE } },
  });
  const tenant = await createTenant(h.app.services.db, { login: 'alice' });
  w = { h, tenant, ...(await registerRepo(h, tenant, CHANGES_V1)) };
  snapshots.push((await auditRepository(w)).snapshotId);
  w.repo.commit(CHANGES_V2, 'reports service, payments API, legacy-db retired');
  // A deep review: the audit's own model call, so audit usage has a cost too.
  snapshots.push((await auditRepository(w, { deep_review: true })).snapshotId);
  const truth = await get(`/repositories/${w.repositoryId}/architecture`);
  evidenceIds = new Set(truth.body.evidence.map((e: { id: string }) => e.id));
  conversation = await newConversation(w, 'Orders platform');
});

test.after.always(async () => {
  await w?.h.close();
  w?.repo.remove();
  await fake?.close();
});

test.serial('what breaks if a datastore goes away: a graph answer citing its paths', async (t) => {
  const before = fake.requests.length;
  const asked = await ask(w, conversation, 'What breaks if orders-db goes away?');
  t.is(asked.status, 202, asked.text);
  t.is(asked.body.status, 'queued');
  t.is(asked.body.context_snapshot_id, snapshots[1]);
  t.is(asked.headers.get('location'), `${w.ws}/assistant/runs/${asked.body.id}`);
  const run = await waitForRun(w, asked.body.id);
  t.is(run.status, 'completed');
  t.is(run.route, 'dependents');
  t.is(run.specialist, 'graph');
  t.false(run.cache_hit);
  t.is(run.cost_usd, '0.000000');
  t.is(run.error_code, null);
  const answer = await answerOf(w, run);
  t.is(answer.role, 'assistant');
  t.deepEqual(answer.structured.entity_keys, [
    'datastore:orders-db',
    'service:orders',
    'service:reports',
  ]);
  t.deepEqual(answer.structured.relationship_keys, [
    'connects_to:service:orders->datastore:orders-db',
    'connects_to:service:reports->datastore:orders-db',
  ]);
  t.true(answer.structured.evidence_ids.length >= 2);
  for (const id of answer.structured.evidence_ids) {
    t.true(evidenceIds.has(id), `evidence ${id} is in the snapshot`);
    t.true(answer.content.includes(id), `the text cites ${id}`);
  }
  for (const key of answer.structured.relationship_keys) t.true(answer.content.includes(key));
  t.deepEqual(answer.structured.finding_ids, []);
  t.is(fake.requests.length, before, 'no model call');
});

test.serial('which services write to a datastore and since when', async (t) => {
  const asked = await ask(w, conversation, 'Which services write to orders-db and since when?');
  const run = await waitForRun(w, asked.body.id);
  t.is(run.route, 'datastore_access');
  const answer = await answerOf(w, run);
  t.deepEqual(answer.structured.entity_keys, [
    'datastore:orders-db',
    'service:orders',
    'service:reports',
  ]);
  // orders used it since the first snapshot; reports only since the second.
  const line = (key: string) =>
    answer.content.split('\n').find((l: string) => l.includes(`- ${key} `));
  t.regex(line('service:orders'), new RegExp(`in snapshot ${snapshots[0]}`));
  t.regex(line('service:reports'), new RegExp(`in snapshot ${snapshots[1]}`));
});

test.serial('what changed since the last audit: the diff of the last two snapshots', async (t) => {
  const asked = await ask(w, conversation, 'What changed since the last audit?');
  const run = await waitForRun(w, asked.body.id);
  t.is(run.route, 'changes');
  t.is(run.specialist, 'changes');
  const answer = await answerOf(w, run);
  const changes = await get(`/repositories/${w.repositoryId}/architecture/changes`);
  const keys = changes.body.changes.map((c: { key: string }) => c.key);
  t.true(keys.length > 0);
  for (const key of keys) t.true(answer.content.includes(key), key);
  t.true(answer.structured.entity_keys.includes('service:reports'));
  t.true(answer.structured.entity_keys.includes('datastore:legacy-db'));
  t.true(
    answer.structured.relationship_keys.includes(
      'connects_to:service:reports->datastore:orders-db',
    ),
  );
});

test.serial('open findings: the same ids listFindings gives, each cited', async (t) => {
  const asked = await ask(w, conversation, 'Which findings are open?');
  const run = await waitForRun(w, asked.body.id);
  t.is(run.route, 'findings');
  t.is(run.specialist, 'findings');
  const answer = await answerOf(w, run);
  const listed = await get(`/findings?status=open&repository_id=${w.repositoryId}&limit=200`);
  const ids = listed.body.items.map((f: { id: string }) => f.id).sort();
  t.true(ids.length > 0);
  t.deepEqual(answer.structured.finding_ids, ids);
  for (const id of ids) t.true(answer.content.includes(id));
});

const FREE_FORM = 'Is it wise that two teams share one database?';

test.serial('a free-form question is answered by the model through tool calls', async (t) => {
  const before = fake.requests.length;
  fake.enqueue(
    {
      toolCalls: [{ name: 'datastore_clients', arguments: { entity_key: 'datastore:orders-db' } }],
      usage: { prompt_tokens: 100, completion_tokens: 20 },
    },
    {
      text: 'Both [service:orders] and [service:reports] use [datastore:orders-db]. See [00000000-0000-4000-8000-000000000000].',
      usage: { prompt_tokens: 150, completion_tokens: 30, cached_tokens: 50 },
    },
  );
  const asked = await ask(w, conversation, FREE_FORM);
  const run = await waitForRun(w, asked.body.id);
  t.is(run.status, 'completed', JSON.stringify(run));
  t.is(run.specialist, 'general');
  t.is(run.input_tokens, 250);
  t.is(run.cached_input_tokens, 50);
  t.is(run.output_tokens, 50);
  t.is(
    run.cost_usd,
    addUsd(
      costUsd({ inputTokens: 100, cachedInputTokens: 0, outputTokens: 20 }, PRICE),
      costUsd({ inputTokens: 150, cachedInputTokens: 50, outputTokens: 30 }, PRICE),
    ),
  );
  const answer = await answerOf(w, run);
  t.deepEqual(answer.structured.entity_keys, [
    'datastore:orders-db',
    'service:orders',
    'service:reports',
  ]);
  t.is(answer.structured.dropped_citations, 1, 'the id no tool returned is dropped and counted');
  t.false(answer.content.includes('00000000-0000-4000-8000-000000000000'));
  t.deepEqual(answer.structured.tool_calls, ['datastore_clients']);
  const client = await w.h.app.services.temporal.client();
  await recordHistory(client, `assistant-run-${run.id}`, 'assistant-model-answer');

  const [first, second] = fake.requests.slice(before);
  t.is(fake.requests.length, before + 2);
  t.is(first!.body.max_tokens, 1024, 'the max output tokens limit is passed');
  t.is(second!.body.max_tokens, 1024 - 20);
  const tools = first!.body.tools.map((x: any) => x.function.name).sort();
  t.deepEqual(tools, [
    'blocking_uncertainty',
    'datastore_clients',
    'decisions',
    'dependencies',
    'dependents',
    'find_entities',
    'findings',
    'recent_changes',
  ]);
  t.regex(
    first!.body.messages[1].content,
    /<question>\nIs it wise that two teams share one database\?\n<\/question>/,
  );
  const toolMessage = second!.body.messages.find((m: any) => m.role === 'tool');
  t.is(toolMessage.tool_call_id, second!.body.messages[2].tool_calls[0].id);
  t.true(toolMessage.content.includes('connects_to:service:reports->datastore:orders-db'));
});

test.serial('the same question again is a cache hit: no model call, cost 0', async (t) => {
  const before = fake.requests.length;
  const asked = await ask(w, conversation, '  is it WISE that two teams share one database ');
  const run = await waitForRun(w, asked.body.id);
  t.is(run.status, 'completed');
  t.true(run.cache_hit);
  t.is(run.cost_usd, '0.000000');
  t.is(run.input_tokens + run.output_tokens, 0);
  t.is(fake.requests.length, before);
  const answer = await answerOf(w, run);
  t.true(answer.content.startsWith('Both [service:orders]'));
});

test.serial('a failing model ends the run failed with its error code, after retries', async (t) => {
  const before = fake.requests.length;
  fake.enqueue({ status: 503 }, { status: 503 }, { status: 503 });
  const asked = await ask(w, conversation, 'Tell me a story about this architecture.');
  const run = await waitForRun(w, asked.body.id, 90_000);
  t.is(run.status, 'failed');
  t.is(run.error_code, 'model_unavailable');
  t.is(run.assistant_message_id, null);
  t.is(fake.requests.length, before + 3, 'three attempts with backoff');
  const client = await w.h.app.services.temporal.client();
  await recordHistory(client, `assistant-run-${run.id}`, 'assistant-failed');
  // A later question still works (nothing stuck).
  const again = await waitForRun(
    w,
    (await ask(w, conversation, 'What depends on service:orders?')).body.id,
  );
  t.is(again.status, 'completed');
});

test.serial('cancelling a run while the model is answering ends it cancelled', async (t) => {
  const before = fake.requests.length;
  fake.enqueue({ text: 'too late', delayMs: 60_000 });
  const asked = await ask(w, conversation, 'Describe the deployment of this system.');
  const deadline = Date.now() + 60_000;
  while (fake.requests.length === before && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  t.is(fake.requests.length, before + 1, 'the model call is under way');
  t.is((await get(`/assistant/runs/${asked.body.id}`)).body.status, 'running');
  const cancel = await call(w.h.app.url, 'POST', `${w.ws}/assistant/runs/${asked.body.id}/cancel`, {
    token: w.tenant.token,
  });
  t.is(cancel.status, 202);
  const run = await waitForRun(w, asked.body.id);
  t.is(run.status, 'cancelled');
  t.is(run.error_code, 'cancelled');
  t.is(run.assistant_message_id, null);
  const events = await get('/audit-events?limit=1');
  t.is(events.body.items[0].action, 'assistant_run.cancel_requested');
});

test.serial('usage figures are the sums of the run rows', async (t) => {
  const db = w.h.app.services.db;
  const runs = await db('assistant_runs').where({ workspace_id: w.tenant.workspaceId });
  const agentRuns = await db('agent_runs').where({ workspace_id: w.tenant.workspaceId });
  const sum = (rows: any[], f: string) => rows.reduce((n, r) => n + Number(r[f]), 0);
  const usd = (rows: any[]) =>
    formatMicros(rows.reduce((n, r) => n + parseMicros(String(r.cost_usd)), 0n));

  const mine = await get('/assistant/usage');
  t.is(mine.status, 200, mine.text);
  t.is(mine.body.questions_today_workspace, runs.length);
  t.is(mine.body.questions_today_user, runs.length);
  t.is(mine.body.active_user_runs, 0);
  t.is(mine.body.cached_questions, 1);
  t.is(mine.body.uncached_questions, runs.length - 1);
  t.is(mine.body.monthly_cost_usd, usd(runs));
  t.is(mine.body.monthly_limit_usd, '50.000000');
  t.is(mine.body.remaining_usd, formatMicros(parseMicros('50.000000') - parseMicros(usd(runs))));
  t.is(mine.body.max_output_tokens, 1024);
  t.is(mine.body.conversations.length, 1);
  t.is(mine.body.conversations[0].questions, runs.length);
  t.is(mine.body.conversations[0].input_tokens, sum(runs, 'input_tokens'));
  t.is(
    mine.body.daily.reduce((n: number, d: any) => n + d.questions, 0),
    runs.length,
  );
  t.is(mine.body.recent_runs.length, runs.length);

  const all = await get('/usage');
  t.is(all.status, 200, all.text);
  t.is(all.body.assistant.runs, runs.length);
  t.is(all.body.assistant.cost_usd, usd(runs));
  t.is(all.body.assistant.output_tokens, sum(runs, 'output_tokens'));
  t.is(all.body.audit.runs, agentRuns.length);
  t.is(all.body.audit.cost_usd, usd(agentRuns));
  t.true(parseMicros(all.body.audit.cost_usd) > 0n, 'the deep review cost something');
  t.is(all.body.audit.input_tokens, sum(agentRuns, 'input_tokens'));
  t.is(all.body.total_cost_usd, addUsd(usd(runs), usd(agentRuns)));
  t.is(all.body.repositories.length, 1);
  t.is(all.body.repositories[0].repository_id, w.repositoryId);
  t.is(all.body.repositories[0].name, 'orders-system');
  t.is(all.body.repositories[0].assistant.cost_usd, usd(runs));
  t.is(
    all.body.days.reduce((n: bigint, d: any) => n + parseMicros(d.audit.cost_usd), 0n),
    parseMicros(usd(agentRuns)),
  );
  const past = await get('/usage?period=2020-01');
  t.is(past.body.assistant.runs, 0);
  t.deepEqual(past.body.days, []);
  t.is((await get('/usage?period=2020-13')).status, 400);
  t.is((await get('/usage?period=0000-01')).status, 400);
});

test.serial('asking needs a completed audit; unknown conversations and runs are 404', async (t) => {
  const other = await createTenant(w.h.app.services.db);
  const theirs: AssistantWorld = {
    h: w.h,
    tenant: other,
    ...(await registerRepo(w.h, other, CHANGES_V1)),
  };
  const conv = await newConversation(theirs);
  const refused = await ask(theirs, conv, 'What depends on orders-db?');
  t.is(refused.status, 409);
  t.is(refused.body.code, 'no_architecture_snapshot');
  t.is((await ask(theirs, conversation, 'What depends on orders-db?')).status, 404);
  t.is(
    (await call(w.h.app.url, 'GET', `${theirs.ws}/assistant/runs/${conv}`, { token: other.token }))
      .status,
    404,
  );
  theirs.repo.remove();
  const tooShort = await ask(w, conversation, 'ok');
  t.is(tooShort.status, 400);
});
