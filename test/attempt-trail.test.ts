/**
 * The agent-attempt trail is complete: an attempt still running when its audit fails ends
 * `abandoned` with the failure as its reason (not `cancelled`); an attempt the database went away
 * under spends no attempt: the step waits for the database and finishes that same attempt (issue
 * 29); an attempt that left no row at all (its worker died first) is filled in as lost by the next
 * one.
 */
import test from 'ava';
import { slowAgent } from './fixtures/test-agents';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { proxyToTestDatabase, routedThrough, type CuttableProxy } from './helpers/proxy';
import { spawnWorker, stopProcess } from './helpers/worker-process';
import { startAgentRun } from '../db/agents';

const repos: TestRepo[] = [];
const harnesses: AuditHarness[] = [];

test.after.always(async () => {
  for (const h of harnesses) await h.close();
  for (const r of repos) r.remove();
});

async function setup(options: Parameters<typeof startAuditHarness>[0]) {
  const h = await startAuditHarness(options);
  harnesses.push(h);
  const tenant = await createTenant(h.app.services.db);
  const repo = createRepo(SAMPLE_FILES);
  repos.push(repo);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  return { h, tenant, repositoryId: created.body.id as string, ws };
}

async function startAudit(s: {
  h: AuditHarness;
  tenant: Tenant;
  ws: string;
  repositoryId: string;
}) {
  const reply = await call(s.h.app.url, 'POST', `${s.ws}/audits`, {
    token: s.tenant.token,
    body: { repository_id: s.repositoryId },
  });
  if (reply.status !== 202) throw new Error(reply.text);
  return reply.body.id as string;
}

async function runsOf(s: { h: AuditHarness; tenant: Tenant; ws: string }, id: string) {
  const reply = await call(s.h.app.url, 'GET', `${s.ws}/audits/${id}/agent-runs`, {
    token: s.tenant.token,
  });
  return reply.body.runs as Array<{
    agent_key: string;
    attempt: number;
    status: string;
    error_code: string | null;
  }>;
}

async function waitForRunning(
  s: { h: AuditHarness; tenant: Tenant; ws: string },
  id: string,
  agentKey: string,
) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if ((await runsOf(s, id)).some((r) => r.agent_key === agentKey && r.status === 'running'))
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${agentKey} never ran`);
}

test.serial(
  'an attempt still running when its audit fails is abandoned with the reason',
  async (t) => {
    // One attempt per agent: the attempt whose worker is killed times out and fails its stage.
    const s = await setup({ worker: false, config: { agentMaxAttempts: 1 } });
    const first = await spawnWorker(s.h, { SLOW_AGENT_MS: '60000' });
    const id = await startAudit(s);
    try {
      await waitForRunning(s, id, 'slow-test-agent');
    } finally {
      first.kill('SIGKILL');
    }
    await new Promise((r) => first.once('exit', r));
    const second = await spawnWorker(s.h, { SLOW_AGENT_MS: '60000' });
    try {
      const done = await waitForAudit(
        s.h.app.url,
        s.tenant.token,
        s.tenant.workspaceId,
        id,
        120_000,
      );
      t.is(done.body.status, 'failed');
      const runs = await runsOf(s, id);
      const slow = runs.filter((r) => r.agent_key === 'slow-test-agent');
      t.deepEqual(
        slow.map((r) => [r.attempt, r.status, r.error_code]),
        [[1, 'abandoned', 'audit_failed']],
      );
      t.false(runs.some((r) => r.status === 'running' || r.status === 'cancelled'));
      const row = await s.h.app.services
        .db('agent_runs')
        .where({ audit_id: id, agent_key: 'slow-test-agent' })
        .first('error_message', 'completed_at');
      t.regex(
        row.error_message,
        /^The audit failed \(activity_timeout\) while this attempt was running/,
      );
      t.truthy(row.completed_at);
    } finally {
      await stopProcess(second, 'SIGTERM');
    }
  },
);

test.serial(
  'an attempt the database went away under finishes once it is back, spending no second attempt',
  async (t) => {
    const proxy: CuttableProxy = await proxyToTestDatabase();
    const slowMs = 5000;
    process.env.SLOW_AGENT_MS = String(slowMs);
    try {
      const s = await setup({
        extraAgents: [slowAgent],
        config: { authCacheTtlMs: 60_000, dependencyOutageBoundSeconds: 300 },
        route: (url) => routedThrough(proxy, url),
      });
      const id = await startAudit(s);
      await waitForRunning(s, id, 'slow-test-agent');
      // The agent finishes its work while the database is down: its result cannot be written.
      await proxy.cut();
      await new Promise((r) => setTimeout(r, slowMs + 3000));
      await proxy.open();
      const done = await waitForAudit(
        s.h.app.url,
        s.tenant.token,
        s.tenant.workspaceId,
        id,
        180_000,
      );
      t.is(done.body.status, 'completed', JSON.stringify(done.body.stages));
      const slow = (await runsOf(s, id)).filter((r) => r.agent_key === 'slow-test-agent');
      t.deepEqual(
        slow.map((r) => [r.attempt, r.status, r.error_code]),
        [[1, 'succeeded', null]],
        'one attempt, finished after the outage; no database_unavailable attempt, no retry',
      );
    } finally {
      delete process.env.SLOW_AGENT_MS;
      await proxy.cut();
    }
  },
);

test.serial('an attempt that left no row is filled in as lost by the next one', async (t) => {
  const s = await setup({});
  const id = await startAudit(s);
  await waitForAudit(s.h.app.url, s.tenant.token, s.tenant.workspaceId, id);
  // Attempt 3 of an agent whose attempts 1 and 2 never wrote anything.
  const run = {
    audit_id: id,
    workspace_id: s.tenant.workspaceId,
    stage: 'code',
    agent_key: 'ghost-agent',
    agent_version: '1',
    model_id: 'deterministic',
    reasoning_effort: 'none',
    model_backed: false,
    cost_kind: 'analysis',
    context_hash: '',
  };
  await startAgentRun(s.h.app.services.db, { ...run, attempt: 3 });
  // Replayed: nothing added twice.
  await startAgentRun(s.h.app.services.db, { ...run, attempt: 3 });
  const ghost = (await runsOf(s, id))
    .filter((r) => r.agent_key === 'ghost-agent')
    .sort((a, b) => a.attempt - b.attempt);
  t.deepEqual(
    ghost.map((r) => [r.attempt, r.status, r.error_code]),
    [
      [1, 'failed', 'attempt_lost'],
      [2, 'failed', 'attempt_lost'],
      [3, 'running', null],
    ],
  );
});
