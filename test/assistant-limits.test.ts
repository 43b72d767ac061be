/**
 * Assistant limits under concurrency, on the real stack: after one audit (and one free-form
 * question answered without a model), the worker stops so admitted runs stay queued (active)
 * and nothing finishing can free a slot mid-test. Each limit then meets 10 parallel asks:
 * exactly the allowed number is admitted, the rest get 429 with the limit's code, and the
 * counts afterwards are exact. Limits are relative to the counts before, so the serial tests
 * share one workspace.
 */
import test from 'ava';
import { reservationUsd } from '../domain/assistant/limits';
import { formatMicros, parseMicros } from '../domain/audits/pricing';
import { startAuditHarness } from './helpers/audit-harness';
import {
  answerOf,
  ask,
  newConversation,
  registerRepo,
  waitForRun,
  type AssistantWorld,
} from './helpers/assistant';
import { addMember, auditRepository, type Member } from './helpers/decisions';
import { createTenant, createToken } from './helpers/factories';
import { call, isProblem, type Reply } from './helpers/http';
import { CHANGES_V1 } from './fixtures/changes-repo';

const PRICE = { input: '1.00', cachedInput: '0.50', output: '2.00' };
let w: AssistantWorld;
let conversation: string;
let noModelRun: any;
let noModelAnswer: any;

const path = (p: string) => `${w.ws}${p}`;
const get = (p: string, token = w.tenant.token) => call(w.h.app.url, 'GET', path(p), { token });

test.before(async () => {
  const settings = {
    baseUrl: 'http://127.0.0.1:9/v1',
    modelId: 'priced-model',
    apiKey: null,
    maxTokensParam: 'max_tokens' as const,
  };
  // The API knows a priced model (so questions reserve budget); the worker has none.
  const h = await startAuditHarness({
    model: null,
    config: { model: settings, modelPrices: { 'priced-model': PRICE } },
  });
  const tenant = await createTenant(h.app.services.db, { login: 'alice' });
  w = { h, tenant, ...(await registerRepo(h, tenant, CHANGES_V1)) };
  await auditRepository(w);
  conversation = await newConversation(w);
  const asked = await ask(w, conversation, 'Is this a sensible architecture for a shop?');
  noModelRun = await waitForRun(w, asked.body.id);
  noModelAnswer = await answerOf(w, noModelRun);
  await h.stopWorker();
});

test.after.always(async () => {
  await w?.h.close();
  w?.repo.remove();
});

test.serial('a free-form question without a model is refused, saying so plainly', async (t) => {
  t.is(noModelRun.status, 'refused');
  t.is(noModelRun.error_code, 'model_not_configured');
  t.is(noModelRun.specialist, 'general');
  t.is(noModelRun.cost_usd, '0.000000');
  t.regex(noModelAnswer.content, /needs a language model and none is configured/);
});

/** The settable fields of a limits response, and its version. */
function limitFields(body: Record<string, unknown>): Record<string, unknown> & { version: number } {
  const out: Record<string, unknown> = { ...body };
  for (const k of ['workspace_id', 'is_default', 'updated_by', 'updated_at']) delete out[k];
  return out as Record<string, unknown> & { version: number };
}

async function setLimits(patch: Record<string, unknown>): Promise<Reply> {
  const current = await get('/assistant/limits');
  const { version, ...fields } = limitFields(current.body);
  return call(w.h.app.url, 'PUT', path('/assistant/limits'), {
    token: w.tenant.token,
    body: { ...fields, ...patch, expected_version: version },
  });
}

/** Every limit out of the way but the one a test sets. */
const OPEN = {
  user_daily_limit: 100_000,
  workspace_daily_limit: 100_000,
  max_active_user_runs: 1000,
  max_active_workspace_runs: 1000,
  monthly_limit_usd: '100000',
};

async function usage(token = w.tenant.token) {
  const u = await get('/assistant/usage', token);
  if (u.status !== 200) throw new Error(u.text);
  return u.body;
}

async function tenParallel(member: Member): Promise<Reply[]> {
  return Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      ask(w, conversation, `What depends on orders-db? (${i})`, member.token),
    ),
  );
}

function outcome(t: any, replies: Reply[], admitted: number, code: string): void {
  const ok = replies.filter((r) => r.status === 202);
  const refused = replies.filter((r) => r.status === 429);
  t.is(ok.length, admitted, replies.map((r) => `${r.status} ${r.body?.code ?? ''}`).join(', '));
  t.is(refused.length, 10 - admitted);
  for (const r of refused) {
    t.true(isProblem(r));
    t.is(r.body.code, code);
    t.truthy(r.headers.get('retry-after'));
    t.true(Number(r.headers.get('retry-after')) > 0);
  }
}

async function runsOf(memberId: string) {
  return w.h.app.services.db('assistant_runs').where({ requested_by: memberId });
}

test.serial(
  'per-user daily questions: 10 parallel asks at a limit of 4 admit exactly 4',
  async (t) => {
    const m = await addMember(w.h.app.services.db, w.tenant, 'daily-user', 'maintainer');
    t.is((await setLimits({ ...OPEN, user_daily_limit: 4 })).status, 200);
    const replies = await tenParallel(m);
    outcome(t, replies, 4, 'assistant_user_daily_limit');
    const refused = replies.find((r) => r.status === 429)!;
    t.is(refused.body.limit, 4);
    t.true(Number(refused.headers.get('retry-after')) <= 86_400);
    t.is((await usage(m.token)).questions_today_user, 4);
    const rows = await runsOf(m.id);
    t.is(rows.length, 4);
    const messages = await w.h.app.services
      .db('assistant_messages')
      .where({ author_id: m.id, role: 'user' });
    t.is(messages.length, 4, 'a refused question leaves no message behind');
  },
);

test.serial('per-workspace daily questions: exactly the remaining 3 are admitted', async (t) => {
  const m = await addMember(w.h.app.services.db, w.tenant, 'daily-ws', 'maintainer');
  const before = (await usage()).questions_today_workspace;
  t.is((await setLimits({ ...OPEN, workspace_daily_limit: before + 3 })).status, 200);
  outcome(t, await tenParallel(m), 3, 'assistant_workspace_daily_limit');
  t.is((await usage()).questions_today_workspace, before + 3);
  t.is((await runsOf(m.id)).length, 3);
});

test.serial('active runs per user: 2 admitted; a cancel frees one slot', async (t) => {
  const m = await addMember(w.h.app.services.db, w.tenant, 'active-user', 'maintainer');
  t.is((await setLimits({ ...OPEN, max_active_user_runs: 2 })).status, 200);
  const replies = await tenParallel(m);
  outcome(t, replies, 2, 'assistant_user_active_runs');
  t.is((await usage(m.token)).active_user_runs, 2);
  const admitted = replies.find((r) => r.status === 202)!;
  const cancel = await call(
    w.h.app.url,
    'POST',
    path(`/assistant/runs/${admitted.body.id}/cancel`),
    { token: m.token },
  );
  t.is(cancel.status, 202);
  const cancelled = await get(`/assistant/runs/${admitted.body.id}`);
  t.is(cancelled.body.status, 'cancelled');
  t.is(
    (
      await call(w.h.app.url, 'POST', path(`/assistant/runs/${admitted.body.id}/cancel`), {
        token: m.token,
      })
    ).body.code,
    'run_finished',
  );
  t.is((await usage(m.token)).active_user_runs, 1);
  outcome(t, await tenParallel(m), 1, 'assistant_user_active_runs');
  t.is((await usage(m.token)).active_user_runs, 2);
});

test.serial('active runs per workspace: exactly the 3 free slots are taken', async (t) => {
  const m = await addMember(w.h.app.services.db, w.tenant, 'active-ws', 'maintainer');
  const before = (await usage()).active_workspace_runs;
  t.is((await setLimits({ ...OPEN, max_active_workspace_runs: before + 3 })).status, 200);
  outcome(t, await tenParallel(m), 3, 'assistant_workspace_active_runs');
  t.is((await usage()).active_workspace_runs, before + 3);
});

test.serial(
  'monthly budget: questions that could exceed it are refused, with what remains',
  async (t) => {
    const m = await addMember(w.h.app.services.db, w.tenant, 'budget', 'maintainer');
    t.is((await setLimits({ ...OPEN, max_output_tokens: 1000 })).status, 200);
    const reserve = parseMicros(reservationUsd(PRICE, 1000));
    t.is(
      formatMicros(reserve),
      '0.050000',
      '48000 input tokens at 1 USD/M + 1000 output at 2 USD/M',
    );
    const u = await usage();
    const committed = parseMicros(u.monthly_limit_usd) - parseMicros(u.remaining_usd);
    // Room for 3 reservations and a half.
    const limit = committed + 3n * reserve + reserve / 2n;
    t.is(
      (
        await setLimits({
          ...OPEN,
          max_output_tokens: 1000,
          monthly_limit_usd: formatMicros(limit),
        })
      ).status,
      200,
    );
    const replies = await tenParallel(m);
    outcome(t, replies, 3, 'assistant_monthly_budget_exhausted');
    const refused = replies.find((r) => r.status === 429)!;
    t.is(refused.body.remaining_usd, formatMicros(reserve / 2n));
    t.is(refused.body.required_usd, '0.050000');
    t.is(refused.body.monthly_limit_usd, formatMicros(limit));
    const after = await usage();
    t.is(after.remaining_usd, formatMicros(reserve / 2n));
    t.is(after.monthly_limit_usd, formatMicros(limit));
    // Cancelling a queued question gives its reservation back: one more fits.
    const admitted = replies.find((r) => r.status === 202)!;
    await call(w.h.app.url, 'POST', path(`/assistant/runs/${admitted.body.id}/cancel`), {
      token: m.token,
    });
    outcome(t, await tenParallel(m), 1, 'assistant_monthly_budget_exhausted');
  },
);

test.serial('limits: read with policies:read or usage:read, set with policies:write', async (t) => {
  const reader = await createToken(w.h.app.services.db, w.tenant, ['usage:read']);
  const policies = await createToken(w.h.app.services.db, w.tenant, ['policies:read']);
  const neither = await createToken(w.h.app.services.db, w.tenant, ['audits:read']);
  t.is((await get('/assistant/limits', reader.token)).status, 200);
  t.is((await get('/assistant/limits', policies.token)).status, 200);
  t.is((await get('/assistant/limits', neither.token)).status, 403);
  const current = (await get('/assistant/limits')).body;
  t.false(current.is_default);
  const put = (body: Record<string, unknown>, token = w.tenant.token) =>
    call(w.h.app.url, 'PUT', path('/assistant/limits'), { token, body });
  const { version, ...fields } = limitFields(current);
  t.is((await put({ ...fields, expected_version: version }, reader.token)).status, 403);
  const stale = await put({ ...fields, expected_version: version - 1 });
  t.is(stale.status, 409);
  t.is(stale.body.code, 'version_mismatch');
  t.is(stale.body.current_version, version);
  const zone = await put({ ...fields, time_zone: 'Mars/Olympus', expected_version: version });
  t.is(zone.status, 400);
  t.is(zone.body.errors[0].path, '/time_zone');
  const tooMany = await put({ ...fields, max_output_tokens: 32_001, expected_version: version });
  t.is(tooMany.status, 400);
  const atBound = await put({
    ...fields,
    max_output_tokens: 32_000,
    time_zone: 'Europe/Berlin',
    expected_version: version,
  });
  t.is(atBound.status, 200, atBound.text);
  t.is(atBound.body.version, version + 1);
  t.is(atBound.body.time_zone, 'Europe/Berlin');
  t.is((await usage()).max_output_tokens, 32_000);
  const events = await get('/audit-events?limit=5');
  t.is(events.body.items[0].action, 'assistant_limits.updated');
  // The day boundary is Berlin's now: today's count is what Berlin calls today.
  const { rows } = await w.h.app.services.db.raw(
    `SELECT count(*)::int AS n FROM assistant_runs WHERE workspace_id = ?
       AND (created_at AT TIME ZONE 'Europe/Berlin')::date = (now() AT TIME ZONE 'Europe/Berlin')::date`,
    [w.tenant.workspaceId],
  );
  t.is((await usage()).questions_today_workspace, rows[0].n);
});

test.serial('a fresh workspace runs on the defaults', async (t) => {
  const other = await createTenant(w.h.app.services.db);
  const ws = `/v1/workspaces/${other.workspaceId}`;
  const limits = await call(w.h.app.url, 'GET', `${ws}/assistant/limits`, { token: other.token });
  t.deepEqual(
    { ...limits.body, workspace_id: undefined },
    {
      workspace_id: undefined,
      user_daily_limit: 50,
      workspace_daily_limit: 500,
      monthly_limit_usd: '50.000000',
      max_output_tokens: 1024,
      max_active_user_runs: 2,
      max_active_workspace_runs: 10,
      time_zone: 'UTC',
      version: 0,
      is_default: true,
      updated_by: null,
      updated_at: null,
    },
  );
  const u = await call(w.h.app.url, 'GET', `${ws}/assistant/usage`, { token: other.token });
  t.is(u.body.questions_today_user, 0);
  t.is(u.body.remaining_usd, '50.000000');
  t.deepEqual(u.body.daily, []);
});
