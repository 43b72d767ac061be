/**
 * Workflow actions on the real stack (API, Temporal worker, PostgreSQL, a git repository audited
 * for real): a request waits in its workflow, its requester cannot approve it, another member
 * does and it executes exactly once (the effect, one execution event, one activity in the
 * workflow history); a request nobody approves expires and never executes; each kind's effect;
 * the edges of the input.
 */
import test from 'ava';
import { workflowActionWorkflowId } from '../domain/contract/workflows';
import { TemporalGateway } from '../platform/temporal';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { addMember, auditRepository, type Member } from './helpers/decisions';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { tarGz } from './helpers/archives';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { recordHistory } from './helpers/histories';
import { call, type Reply } from './helpers/http';

let h: AuditHarness;
const repos: TestRepo[] = [];

test.before(async () => {
  h = await startAuditHarness({ config: { workflowActionTtlSeconds: 3600 } });
});
test.after.always(async () => {
  await h?.close();
  for (const r of repos) r.remove();
});

interface World {
  tenant: Tenant;
  alice: Member;
  bob: Member;
  ws: string;
}

async function world(): Promise<World> {
  const db = h.app.services.db;
  const tenant = await createTenant(db, { login: 'alice' });
  const alice = { id: tenant.memberId, login: 'alice', token: tenant.token };
  const bob = await addMember(db, tenant, 'bob', 'maintainer');
  return { tenant, alice, bob, ws: `/v1/workspaces/${tenant.workspaceId}` };
}

async function repository(w: World, audited: boolean): Promise<string> {
  const repo = createRepo(SAMPLE_FILES);
  repos.push(repo);
  const created = await call(h.app.url, 'POST', `${w.ws}/repositories`, {
    token: w.alice.token,
    body: { name: `shop-${repos.length}`, url: `file://${repo.dir}` },
  });
  if (audited)
    await auditRepository({ h, tenant: w.tenant, ws: w.ws, repositoryId: created.body.id });
  return created.body.id;
}

const api = (w: World, method: string, path: string, token: string, body?: unknown) =>
  call(h.app.url, method, `${w.ws}${path}`, { token, body });
const request = (w: World, kind: string, target: unknown, token = w.alice.token): Promise<Reply> =>
  api(w, 'POST', '/workflow-actions', token, { kind, target, reason: `need to ${kind}` });
const approve = (w: World, id: string, token: string): Promise<Reply> =>
  api(w, 'POST', `/workflow-actions/${id}/approval`, token, { rationale: 'agreed' });

async function waitFor(w: World, id: string, done: (a: any) => boolean): Promise<any> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const r = await api(w, 'GET', `/workflow-actions/${id}`, w.alice.token);
    if (r.status === 200 && done(r.body)) return r.body;
    if (Date.now() > deadline)
      throw new Error(`workflow action ${id} did not get there: ${r.text}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

async function eventsOf(w: World, id: string): Promise<string[]> {
  const r = await api(w, 'GET', '/audit-events?limit=200', w.alice.token);
  return r.body.items
    .filter((e: any) => e.resource_id === id)
    .map((e: any) => e.action)
    .reverse();
}

/** How many times the workflow scheduled and completed the activity `name`. */
async function activityRuns(actionId: string, name: string) {
  const client = await h.app.services.temporal.client();
  const history = await client.workflow
    .getHandle(workflowActionWorkflowId(actionId))
    .fetchHistory();
  const events = history.events ?? [];
  const scheduledIds = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name)
      .map((e) => String(e.eventId)),
  );
  const completed = events.filter((e) =>
    scheduledIds.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)),
  );
  return { scheduled: scheduledIds.size, completed: completed.length };
}

test.serial(
  'delete_repository waits for another member, executes once, and deletes the repository with its history',
  async (t) => {
    const w = await world();
    const repositoryId = await repository(w, true);
    const before = await api(w, 'GET', `/audits?repository_id=${repositoryId}`, w.alice.token);
    t.is(before.body.items.length, 1);

    const asked = await request(w, 'delete_repository', { repository_id: repositoryId });
    t.is(asked.status, 201, asked.text);
    t.like(asked.body, {
      kind: 'delete_repository',
      status: 'pending',
      requested_by: w.alice.id,
      decided_by: null,
      executed_at: null,
      workflow_id: `workflow-action-${asked.body.id}`,
    });
    const ttl = Date.parse(asked.body.expires_at) - Date.parse(asked.body.created_at);
    t.true(Math.abs(ttl - 3600_000) < 5000, `expires an hour after the request (${ttl} ms)`);
    const client = await h.app.services.temporal.client();
    const described = await client.workflow.getHandle(asked.body.workflow_id).describe();
    t.is(described.status.name, 'RUNNING', 'the request waits in its workflow');
    // Waiting: nothing happened to the repository.
    t.is((await api(w, 'GET', `/repositories/${repositoryId}`, w.alice.token)).status, 200);

    const self = await approve(w, asked.body.id, w.alice.token);
    t.is(self.status, 403, self.text);
    t.is(self.body.code, 'self_approval');
    t.is(
      (await api(w, 'GET', `/workflow-actions/${asked.body.id}`, w.alice.token)).body.status,
      'pending',
    );

    const ok = await approve(w, asked.body.id, w.bob.token);
    t.is(ok.status, 200, ok.text);
    t.is(ok.body.decided_by, w.bob.id);
    t.is(ok.body.decided_by_role, 'maintainer');
    t.is(ok.body.decision_rationale, 'agreed');
    const executed = await waitFor(w, asked.body.id, (a) => a.status === 'executed');
    t.truthy(executed.executed_at);
    t.like(executed.outcome, {
      repository_id: repositoryId,
      audits_deleted: 1,
      audits_kept: 0,
    });
    t.true(executed.outcome.findings_deleted > 0);

    t.is((await api(w, 'GET', `/repositories/${repositoryId}`, w.alice.token)).status, 404);
    const after = await api(w, 'GET', `/audits?repository_id=${repositoryId}`, w.alice.token);
    t.deepEqual(after.body.items, []);
    const findings = await api(w, 'GET', `/findings?repository_id=${repositoryId}`, w.alice.token);
    t.deepEqual(findings.body.items, []);

    const twice = await approve(w, asked.body.id, w.bob.token);
    t.is(twice.status, 409);
    t.is(twice.body.code, 'already_decided');
    t.is(twice.body.current_status, 'executed');

    t.deepEqual(await eventsOf(w, asked.body.id), [
      'workflow_action.requested',
      'workflow_action.approved',
      'workflow_action.executed',
    ]);
    await client.workflow.getHandle(asked.body.workflow_id).result();
    await recordHistory(client, asked.body.workflow_id, 'workflow-action-executed');
    t.deepEqual(await activityRuns(asked.body.id, 'executeWorkflowAction'), {
      scheduled: 1,
      completed: 1,
    });
    const feed = await api(w, 'GET', '/activity?limit=50', w.alice.token);
    t.true(feed.body.items.some((i: any) => i.action === 'workflow_action.executed'));
  },
);

test.serial('a request nobody approves expires and never executes', async (t) => {
  const w = await world();
  const repositoryId = await repository(w, false);
  const config = h.app.services.config;
  const ttl = config.workflowActionTtlSeconds;
  config.workflowActionTtlSeconds = 2;
  let asked: Reply;
  try {
    asked = await request(w, 'delete_repository', { repository_id: repositoryId });
  } finally {
    config.workflowActionTtlSeconds = ttl;
  }
  t.is(asked.status, 201, asked.text);
  const expired = await waitFor(w, asked.body.id, (a) => a.status === 'expired');
  t.is(expired.executed_at, null);
  t.is(expired.decided_by, null);
  const late = await approve(w, asked.body.id, w.bob.token);
  t.is(late.status, 409, late.text);
  t.is(late.body.code, 'approval_expired');
  t.is((await api(w, 'GET', `/repositories/${repositoryId}`, w.alice.token)).status, 200);
  const client = await h.app.services.temporal.client();
  t.is(await client.workflow.getHandle(asked.body.workflow_id).result(), 'expired');
  t.deepEqual(await activityRuns(asked.body.id, 'executeWorkflowAction'), {
    scheduled: 0,
    completed: 0,
  });
  t.deepEqual(await eventsOf(w, asked.body.id), [
    'workflow_action.requested',
    'workflow_action.expired',
  ]);
});

test.serial(
  'revoke_member_tokens, change_gate_policy, deep_review_audit and purge_attachments do what they say once approved',
  async (t) => {
    const w = await world();
    const carol = await addMember(h.app.services.db, w.tenant, 'carol', 'member');
    t.is((await api(w, 'GET', '/repositories', carol.token)).status, 200);
    const repositoryId = await repository(w, false);

    const revoke = await request(w, 'revoke_member_tokens', { member_id: carol.id });
    const policy = await request(w, 'change_gate_policy', {
      gate_policy: { enabled: false, confidence_floor: 0.4, rules: [] },
    });
    const deep = await request(w, 'deep_review_audit', {
      repository_id: repositoryId,
      branch_ref: 'main',
    });
    for (const r of [revoke, policy, deep]) {
      t.is(r.status, 201, r.text);
      t.is((await approve(w, r.body.id, w.bob.token)).status, 200);
    }

    const revoked = await waitFor(w, revoke.body.id, (a) => a.status === 'executed');
    t.is(revoked.outcome.revoked_token_ids.length, 1);
    const refused = await api(w, 'GET', '/repositories', carol.token);
    t.is(refused.status, 401);
    t.is(refused.body.code, 'invalid_token');

    const changed = await waitFor(w, policy.body.id, (a) => a.status === 'executed');
    t.like(changed.outcome, { before_version: 0, version: 1 });
    const gate = await api(w, 'GET', '/policies/gate', w.alice.token);
    t.like(gate.body, {
      enabled: false,
      confidence_floor: 0.4,
      version: 1,
      updated_by: w.alice.id,
    });

    const ran = await waitFor(w, deep.body.id, (a) => a.status === 'executed');
    const audit = await waitForAudit(
      h.app.url,
      w.alice.token,
      w.tenant.workspaceId,
      ran.outcome.audit_id,
      120_000,
    );
    t.is(audit.body.status, 'completed', audit.text);
    t.like(audit.body, { origin: 'workflow_action', origin_ref: deep.body.id, branch_ref: 'main' });

    // purge_attachments: the audit's attachments go before their retention, bytes and all.
    const uploaded = await call(h.app.url, 'POST', `${w.ws}/uploads`, {
      token: w.alice.token,
      raw: await tarGz([{ name: 'notes.txt', data: 'kept for 90 days unless purged\n' }]),
      headers: { 'Content-Type': 'application/gzip' },
    });
    t.is(uploaded.status, 201, uploaded.text);
    const attached = await api(w, 'POST', `/audits/${audit.body.id}/attachments`, w.alice.token, {
      upload_id: uploaded.body.id,
    });
    t.is(attached.status, 201, attached.text);
    const content = `/attachments/${attached.body.id}/content`;
    t.is((await api(w, 'GET', content, w.alice.token)).status, 200);
    const purge = await request(w, 'purge_attachments', { audit_id: audit.body.id });
    t.is(purge.status, 201, purge.text);
    t.is((await api(w, 'GET', content, w.alice.token)).status, 200, 'nothing before approval');
    t.is((await approve(w, purge.body.id, w.bob.token)).status, 200);
    const purged = await waitFor(w, purge.body.id, (a) => a.status === 'executed');
    t.deepEqual(purged.outcome.attachment_ids, [attached.body.id]);
    const gone = await api(w, 'GET', content, w.alice.token);
    t.is(gone.status, 410);
    t.is(gone.body.code, 'attachment_removed');
    const listed = await api(w, 'GET', `/audits/${audit.body.id}/attachments`, w.alice.token);
    t.is(listed.body.items[0].status, 'deleted');
  },
);

test.serial(
  'the edges: unknown kind, target fields per kind, reason bounds, scopes, rejection, other tenants',
  async (t) => {
    const w = await world();
    const repositoryId = await repository(w, false);
    const unknownKind = await request(w, 'drop_database', { repository_id: repositoryId });
    t.is(unknownKind.status, 400);
    t.is(unknownKind.body.code, 'validation_failed');
    t.true(unknownKind.body.errors.some((e: any) => e.path === '/kind'));
    const wrongField = await request(w, 'delete_repository', {
      repository_id: repositoryId,
      audit_id: repositoryId,
    });
    t.is(wrongField.status, 400);
    t.deepEqual(
      wrongField.body.errors.map((e: any) => e.path),
      ['/target/audit_id'],
    );
    const noTarget = await request(w, 'revoke_member_tokens', {});
    t.deepEqual(
      noTarget.body.errors.map((e: any) => e.path),
      ['/target/member_id'],
    );
    const unknownRepo = await request(w, 'delete_repository', {
      repository_id: '00000000-0000-4000-8000-000000000000',
    });
    t.is(unknownRepo.status, 400);
    t.regex(unknownRepo.body.errors[0].message, /no such repository/);
    const reason = (text: string) =>
      api(w, 'POST', '/workflow-actions', w.alice.token, {
        kind: 'delete_repository',
        target: { repository_id: repositoryId },
        reason: text,
      });
    t.is((await reason('ab')).status, 400);
    t.is((await reason('x'.repeat(2001))).status, 400);
    const pending = await reason('x'.repeat(2000));
    t.is(pending.status, 201, pending.text);

    const requester = await createToken(h.app.services.db, w.tenant, ['workflow_actions:request']);
    const denied = await approve(w, pending.body.id, requester.token);
    t.is(denied.status, 403);
    t.is(denied.body.code, 'insufficient_scope');

    // The requester may withdraw (reject) their own request; it then never executes.
    const withdrawn = await api(
      w,
      'POST',
      `/workflow-actions/${pending.body.id}/rejection`,
      w.alice.token,
      {
        rationale: 'not needed after all',
      },
    );
    t.is(withdrawn.status, 200, withdrawn.text);
    t.is(withdrawn.body.status, 'rejected');
    const late = await approve(w, pending.body.id, w.bob.token);
    t.is(late.status, 409);
    t.is(late.body.code, 'already_decided');
    t.is((await api(w, 'GET', `/repositories/${repositoryId}`, w.alice.token)).status, 200);
    const listed = await api(w, 'GET', '/workflow-actions?status=rejected', w.alice.token);
    t.deepEqual(
      listed.body.items.map((a: any) => a.id),
      [pending.body.id],
    );

    const stranger = await createTenant(h.app.services.db);
    const foreign = await call(
      h.app.url,
      'POST',
      `/v1/workspaces/${stranger.workspaceId}/workflow-actions/${pending.body.id}/approval`,
      { token: stranger.token, body: { rationale: 'sure' } },
    );
    t.is(foreign.status, 404);
  },
);

test.serial(
  'a request whose workflow cannot be started is discarded: 503 naming it, no action, an audit trail',
  async (t) => {
    const w = await world();
    const repositoryId = await repository(w, false);
    const real = h.app.services.temporal;
    // The real Temporal server refuses the start: the namespace does not exist.
    const refusing = new TemporalGateway(real.address, `no-such-namespace-${Date.now()}`);
    h.app.services.temporal = refusing;
    let reply: Reply;
    try {
      reply = await request(w, 'delete_repository', { repository_id: repositoryId });
    } finally {
      h.app.services.temporal = real;
      await refusing.close();
    }
    t.is(reply.status, 503, reply.text);
    t.is(reply.body.code, 'workflow_engine_unavailable');
    const id = reply.body.workflow_action_id as string;
    t.is((await api(w, 'GET', `/workflow-actions/${id}`, w.alice.token)).status, 404);
    t.deepEqual(await eventsOf(w, id), ['workflow_action.requested', 'workflow_action.discarded']);
    const again = await request(w, 'delete_repository', { repository_id: repositoryId });
    t.is(again.status, 201, again.text);
  },
);
