/**
 * Remediations on the real stack (API, Temporal worker, PostgreSQL, git repositories audited for
 * real; the model is a fake OpenAI-compatible server on loopback): a plan written by the
 * remediation agent (template, then the model, its cost landing in remediation_cost_usd),
 * approved by another member (never by its creator), moved to done and verified by the next
 * audit once a second commit fixes the finding (and one whose finding stays open is
 * not_verified); graph links; the edges of the input.
 */
import test from 'ava';
import { OpenAiCompatibleProvider } from '../activities/audits/agents/model';
import { TemporalGateway } from '../platform/temporal';
import { CONTROLS } from '../analysis/controls';
import { REMEDIATION_TEMPLATES, templatePlan } from '../domain/remediations/templates';
import { parseModelPlan } from '../domain/remediations/model-plan';
import { startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { addMember, auditRepository, type Member } from './helpers/decisions';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { startFakeModelServer, type FakeModelServer } from './helpers/fake-model';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { recordHistory } from './helpers/histories';
import { call, type Reply } from './helpers/http';

const MODEL_PLAN = {
  summary: 'Declare owners so that every change gets a responsible reviewer.',
  steps: [
    { title: 'Add .github/CODEOWNERS', detail: 'Name @acme/platform as owner of every path.' },
    { title: 'Protect main', detail: 'Require code-owner review in branch protection.' },
  ],
  risk: 'low',
  effort: 'small',
};
const PRICE = { input: '1.00', cachedInput: '0', output: '2.00' };

let h: AuditHarness;
let fake: FakeModelServer;
const repos: TestRepo[] = [];

test.before(async () => {
  fake = await startFakeModelServer();
  fake.setDefault({
    text: `Here is the plan:\n${JSON.stringify(MODEL_PLAN)}`,
    usage: { prompt_tokens: 1000, completion_tokens: 500 },
  });
  h = await startAuditHarness({
    model: new OpenAiCompatibleProvider({
      baseUrl: fake.baseUrl,
      apiKey: null,
      modelId: 'plan-model',
    }),
    prices: { 'plan-model': PRICE },
  });
});
test.after.always(async () => {
  await h?.close();
  await fake?.close();
  for (const r of repos) r.remove();
});

interface World {
  tenant: Tenant;
  alice: Member;
  bob: Member;
  repo: TestRepo;
  repositoryId: string;
  ws: string;
  auditId: string;
}

async function world(): Promise<World> {
  const db = h.app.services.db;
  const tenant = await createTenant(db, { login: 'alice' });
  const alice = { id: tenant.memberId, login: 'alice', token: tenant.token };
  const bob = await addMember(db, tenant, 'bob', 'maintainer');
  const repo = createRepo(SAMPLE_FILES);
  repos.push(repo);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  const repositoryId = created.body.id as string;
  const { auditId } = await auditRepository({ h, tenant, ws, repositoryId });
  return { tenant, alice, bob, repo, repositoryId, ws, auditId };
}

const api = (w: World, method: string, path: string, token: string, body?: unknown) =>
  call(h.app.url, method, `${w.ws}${path}`, { token, body });

async function openFinding(w: World, controlKey: string): Promise<any> {
  const r = await api(w, 'GET', `/findings?control_key=${controlKey}&status=open`, w.alice.token);
  const finding = r.body.items[0];
  if (!finding) throw new Error(`no open ${controlKey} finding: ${r.text}`);
  return finding;
}

async function waitFor(w: World, id: string, done: (r: any) => boolean): Promise<any> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const r = await api(w, 'GET', `/remediations/${id}`, w.alice.token);
    if (r.status === 200 && done(r.body)) return r.body;
    if (Date.now() > deadline) throw new Error(`remediation ${id} did not get there: ${r.text}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

const move = (w: World, id: string, status: string, token: string): Promise<Reply> =>
  api(w, 'POST', `/remediations/${id}/transitions`, token, {
    status,
    rationale: `move to ${status}`,
  });
const approve = (w: World, id: string, token: string): Promise<Reply> =>
  api(w, 'POST', `/remediations/${id}/approval`, token, { rationale: 'looks right' });
const reject = (w: World, id: string, token: string): Promise<Reply> =>
  api(w, 'POST', `/remediations/${id}/rejection`, token, { rationale: 'not this way' });

test('every control of the catalog has a remediation template, and no template names an unknown control', (t) => {
  t.deepEqual(Object.keys(REMEDIATION_TEMPLATES).sort(), CONTROLS.map((c) => c.key).sort());
  const plan = templatePlan([
    {
      control_key: 'owners-declared',
      title: 'No CODEOWNERS',
      severity: 'low',
      entity_key: null,
      locations: [],
    },
    {
      control_key: 'images-pinned',
      title: 'redis:latest',
      severity: 'medium',
      entity_key: 'datastore:redis',
      locations: [{ path: 'docker-compose.yml', start_line: 7, end_line: 7 }],
    },
  ]);
  t.is(plan.risk, 'medium');
  t.is(plan.effort, 'small');
  t.deepEqual(plan.affected_entity_keys, ['datastore:redis']);
  t.true(plan.steps.some((s) => s.detail.includes('docker-compose.yml:7')));
  t.true(plan.steps.some((s) => s.title === 'Add a CODEOWNERS file'));
});

test('a model answer that is not a plan is refused (the template stays)', (t) => {
  const template = templatePlan([
    {
      control_key: 'lockfile-present',
      title: 'x',
      severity: 'low',
      entity_key: 'service:api',
      locations: [],
    },
  ]);
  t.is(parseModelPlan('I cannot help with that', template), null);
  t.is(parseModelPlan(JSON.stringify({ ...MODEL_PLAN, risk: 'extreme' }), template), null);
  t.is(parseModelPlan(JSON.stringify({ ...MODEL_PLAN, steps: [] }), template), null);
  const ok = parseModelPlan(`sure: ${JSON.stringify(MODEL_PLAN)} done`, template);
  t.deepEqual(ok?.affected_entity_keys, ['service:api']);
  t.is(ok?.steps.length, 2);
});

test.serial(
  'a remediation written by the agent, approved by another member, done, and verified by the next audit; one whose finding stays open is not_verified',
  async (t) => {
    const w = await world();
    const owners = await openFinding(w, 'owners-declared');
    const others = (await api(w, 'GET', '/findings?status=open', w.alice.token)).body.items.filter(
      (f: any) => f.control_key !== 'owners-declared',
    );
    t.true(others.length > 0, 'the sample has another open finding');
    const other = others[0];

    // Written by the agent: a template plan, then the model's (an agent run of the audit).
    const agent = await api(w, 'POST', '/remediations', w.alice.token, {
      finding_ids: [owners.id],
    });
    t.is(agent.status, 201, agent.text);
    t.is(agent.body.status, 'proposed');
    t.is(agent.body.source, 'template');
    t.is(agent.body.workflow_id, `remediation-${agent.body.id}`);
    t.is(agent.body.audit_id, w.auditId);
    t.deepEqual(agent.body.finding_ids, [owners.id]);
    t.is(agent.headers.get('location'), `${w.ws}/remediations/${agent.body.id}`);
    const drafted = await waitFor(w, agent.body.id, (r) => r.source === 'model');
    t.is(drafted.summary, MODEL_PLAN.summary);
    t.deepEqual(drafted.steps, MODEL_PLAN.steps);
    t.truthy(drafted.agent_run_id);
    const cost = await api(w, 'GET', `/audits/${w.auditId}/cost`, w.alice.token);
    // 1000 input tokens at 1.00 and 500 output at 2.00 per million: 0.002 USD.
    t.is(cost.body.remediation_cost_usd, '0.002000');
    t.is(cost.body.analysis_cost_usd, '0.000000');
    const timeline = await api(w, 'GET', `/audits/${w.auditId}/agent-runs`, w.alice.token);
    const run = timeline.body.runs.find((r: any) => r.id === drafted.agent_run_id);
    t.is(run?.agent_key, `remediation:${agent.body.id}`);
    t.is(run?.cost_usd, '0.002000');

    // Written by a person, for another finding, naming the entity it changes.
    const manual = await api(w, 'POST', '/remediations', w.alice.token, {
      finding_ids: [other.id],
      title: 'Fix the other finding',
      plan: {
        summary: 'Fix it properly.',
        steps: [{ title: 'Do it', detail: 'Change the file.' }],
        affected_entity_keys: ['service:api'],
        risk: 'medium',
        effort: 'small',
      },
    });
    t.is(manual.status, 201, manual.text);
    t.is(manual.body.source, 'manual');

    // No self-approval; nothing changes.
    const self = await approve(w, agent.body.id, w.alice.token);
    t.is(self.status, 403, self.text);
    t.is(self.body.code, 'self_approval');
    t.is(
      (await api(w, 'GET', `/remediations/${agent.body.id}`, w.alice.token)).body.status,
      'proposed',
    );
    // Not done before it is approved and started.
    const early = await move(w, agent.body.id, 'done', w.alice.token);
    t.is(early.status, 409);
    t.is(early.body.code, 'invalid_transition');
    t.deepEqual(early.body.allowed_statuses, ['approved', 'rejected']);

    for (const r of [agent.body, manual.body]) {
      const ok = await approve(w, r.id, w.bob.token);
      t.is(ok.status, 200, ok.text);
      t.is(ok.body.status, 'approved');
      t.is(ok.body.approved_by, w.bob.id);
      t.like(ok.body.approvals[0], {
        actor_id: w.bob.id,
        actor_role: 'maintainer',
        authorization_scope: 'remediations:approve',
        outcome: 'approved',
        rationale: 'looks right',
      });
      const twice = await approve(w, r.id, w.bob.token);
      t.is(twice.status, 409);
      t.is(twice.body.code, 'already_decided');
      t.is(twice.body.current_status, 'approved');
      t.is((await move(w, r.id, 'in_progress', w.alice.token)).body.status, 'in_progress');
      const done = await move(w, r.id, 'done', w.alice.token);
      t.is(done.body.status, 'done', done.text);
      t.truthy(done.body.done_at);
    }

    // Graph links: the entity the manual plan changes names it.
    const arch = await api(w, 'GET', `/repositories/${w.repositoryId}/architecture`, w.alice.token);
    const apiEntity = arch.body.entities.find((e: any) => e.canonical_key === 'service:api');
    t.deepEqual(apiEntity?.links?.remediation_ids, [manual.body.id]);
    const byFinding = await api(w, 'GET', `/remediations?finding_id=${owners.id}`, w.alice.token);
    t.deepEqual(
      byFinding.body.items.map((r: any) => r.id),
      [agent.body.id],
    );

    // An audit of part of the repository (one source type) did not look everywhere: it neither
    // verifies nor un-verifies; both stay done.
    await auditRepository(
      { h, tenant: w.tenant, ws: w.ws, repositoryId: w.repositoryId },
      { source_scope: { source_types: ['cloud'] } },
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const r of [agent.body, manual.body]) {
      const still = await api(w, 'GET', `/remediations/${r.id}`, w.alice.token);
      t.is(still.body.status, 'done', 'a scoped audit does not verify');
      t.is(still.body.verification, null);
    }

    // The fix lands in a second commit; the next audit verifies one and not the other.
    w.repo.commit({ '.github/CODEOWNERS': '* @acme/platform\n' }, 'declare owners');
    const second = await auditRepository({
      h,
      tenant: w.tenant,
      ws: w.ws,
      repositoryId: w.repositoryId,
    });
    const verified = await waitFor(w, agent.body.id, (r) => r.status === 'verified');
    t.truthy(verified.verified_at);
    t.deepEqual(verified.verification, {
      audit_id: second.auditId,
      outcome: 'verified',
      resolved_finding_ids: [owners.id],
      open_finding_ids: [],
      evaluated_at: verified.verification.evaluated_at,
    });
    await recordHistory(
      await h.app.services.temporal.client(),
      agent.body.workflow_id,
      'remediation-verified',
    );
    const notVerified = await waitFor(w, manual.body.id, (r) => r.status === 'not_verified');
    t.deepEqual(notVerified.verification.open_finding_ids, [other.id]);
    t.is(notVerified.verification.audit_id, second.auditId);
    // Work goes on after a failed verification; a verified one is closed.
    t.is((await move(w, manual.body.id, 'in_progress', w.alice.token)).body.status, 'in_progress');
    const closed = await move(w, agent.body.id, 'in_progress', w.alice.token);
    t.is(closed.status, 409);
    t.is(closed.body.code, 'invalid_transition');

    const events = await api(w, 'GET', '/audit-events?limit=200', w.alice.token);
    const actions = events.body.items
      .filter((e: any) => e.resource_id === agent.body.id)
      .map((e: any) => e.action)
      .reverse();
    t.deepEqual(actions, [
      'remediation.created',
      'remediation.drafted',
      'remediation.approved',
      'remediation.started',
      'remediation.done',
      'remediation.verified',
    ]);
    const feed = await api(w, 'GET', '/activity?limit=200', w.alice.token);
    t.true(
      feed.body.items.some(
        (i: any) => i.action === 'remediation.not_verified' && i.resource_id === manual.body.id,
      ),
    );
  },
);

test.serial(
  'the edges: unknown findings, bounds, rejection needs remediations:approve, other tenants see nothing',
  async (t) => {
    const w = await world();
    const finding = await openFinding(w, 'owners-declared');
    const unknown = '00000000-0000-4000-8000-000000000000';
    const create = (body: unknown, token = w.alice.token) =>
      api(w, 'POST', '/remediations', token, body);

    const missing = await create({ finding_ids: [finding.id, unknown] });
    t.is(missing.status, 422, missing.text);
    t.is(missing.body.code, 'unknown_finding');
    t.deepEqual(
      missing.body.errors.map((e: any) => e.path),
      ['/finding_ids/1'],
    );
    t.is((await create({ finding_ids: [] })).status, 400);
    const many = Array.from(
      { length: 51 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    t.is((await create({ finding_ids: many })).body.code, 'validation_failed');
    t.is((await create({ finding_ids: many.slice(0, 50) })).body.code, 'unknown_finding');
    const step = { title: 's', detail: 'd' };
    const plan = (steps: number, summary = 'abc') => ({
      finding_ids: [finding.id],
      plan: {
        summary,
        steps: Array.from({ length: steps }, () => step),
        risk: 'low',
        effort: 'small',
      },
    });
    t.is((await create(plan(0))).status, 400);
    t.is((await create(plan(51))).status, 400);
    t.is((await create(plan(1, 'ab'))).status, 400);
    t.is((await create({ ...plan(1), title: 'ab' })).status, 400);
    t.is((await create({ ...plan(1), extra: true })).body.code, 'unknown_property');
    const fifty = await create({ ...plan(50), title: 'abc' });
    t.is(fifty.status, 201, fifty.text);
    t.is(fifty.body.steps.length, 50);

    const writer = await createToken(h.app.services.db, w.tenant, ['remediations:write']);
    const denied = await reject(w, fifty.body.id, writer.token);
    t.is(denied.status, 403);
    t.is(denied.body.code, 'insufficient_scope');
    t.deepEqual(denied.body.required_scopes, ['remediations:approve']);
    // Rejecting is an approval operation, not a transition.
    const notAMove = await move(w, fifty.body.id, 'rejected', w.alice.token);
    t.is(notAMove.status, 400, notAMove.text);
    t.true(notAMove.body.errors.some((e: any) => e.path === '/status'));
    // The creator may reject their own plan; a rejected plan cannot be approved.
    const rejected = await reject(w, fifty.body.id, w.alice.token);
    t.is(rejected.body.status, 'rejected', rejected.text);
    t.like(rejected.body.approvals[0], { outcome: 'rejected', actor_id: w.alice.id });
    const late = await approve(w, fifty.body.id, w.bob.token);
    t.is(late.status, 409);
    t.is(late.body.code, 'already_decided');
    t.is(late.body.current_status, 'rejected');

    // The model refuses the request: the template plan stays, the failed run is recorded.
    fake.enqueue({ status: 400, text: 'context too long' });
    const templated = await create({ finding_ids: [finding.id] });
    t.is(templated.status, 201, templated.text);
    const deadline = Date.now() + 60_000;
    let failedRun: any;
    while (!failedRun && Date.now() < deadline) {
      const runs = await api(w, 'GET', `/audits/${w.auditId}/agent-runs`, w.alice.token);
      failedRun = runs.body.runs.find(
        (r: any) => r.agent_key === `remediation:${templated.body.id}` && r.status === 'failed',
      );
      if (!failedRun) await new Promise((res) => setTimeout(res, 250));
    }
    t.is(failedRun?.error_code, 'model_request_rejected');
    const kept = (await api(w, 'GET', `/remediations/${templated.body.id}`, w.alice.token)).body;
    t.is(kept.source, 'template');
    t.is(kept.agent_run_id, null);
    t.true(kept.steps.some((st: any) => st.title === 'Add a CODEOWNERS file'));

    // A remediation whose workflow cannot be started is discarded, with an audit trail.
    const real = h.app.services.temporal;
    const refusing = new TemporalGateway(real.address, `no-such-namespace-${Date.now()}`);
    h.app.services.temporal = refusing;
    let unstarted: Reply;
    try {
      unstarted = await create(plan(1));
    } finally {
      h.app.services.temporal = real;
      await refusing.close();
    }
    t.is(unstarted.status, 503, unstarted.text);
    t.is(unstarted.body.code, 'workflow_engine_unavailable');
    const discardedId = unstarted.body.remediation_id as string;
    t.is((await api(w, 'GET', `/remediations/${discardedId}`, w.alice.token)).status, 404);
    const trail = await api(w, 'GET', '/audit-events?limit=50', w.alice.token);
    t.deepEqual(
      trail.body.items.filter((e: any) => e.resource_id === discardedId).map((e: any) => e.action),
      ['remediation.discarded', 'remediation.created'],
    );

    const stranger = await createTenant(h.app.services.db);
    const foreign = await call(
      h.app.url,
      'GET',
      `/v1/workspaces/${stranger.workspaceId}/remediations/${fifty.body.id}`,
      { token: stranger.token },
    );
    t.is(foreign.status, 404);
    const foreignCreate = await call(
      h.app.url,
      'POST',
      `/v1/workspaces/${stranger.workspaceId}/remediations`,
      {
        token: stranger.token,
        body: { finding_ids: [finding.id] },
      },
    );
    t.is(foreignCreate.body.code, 'unknown_finding');
  },
);
