/**
 * Admission: with MAX_RUNNING_AUDITS = N the N+1st audit waits queued, with its place in line in
 * its log, and runs once one finishes; with a per-workspace limit a light audit of workspace B
 * is not held behind workspace A's audits.
 */
import test from 'ava';
import { slowAgent } from './fixtures/test-agents';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';

const harnesses: AuditHarness[] = [];
const repos: TestRepo[] = [];
process.env.SLOW_AGENT_MS = '4000';

test.after.always(async () => {
  for (const h of harnesses) await h.close();
  for (const r of repos) r.remove();
});

async function workspace(h: AuditHarness) {
  const tenant = await createTenant(h.app.services.db);
  const repo = createRepo(SAMPLE_FILES);
  repos.push(repo);
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  const start = async () => {
    const reply = await call(h.app.url, 'POST', `${ws}/audits`, {
      token: tenant.token,
      body: { repository_id: created.body.id },
    });
    if (reply.status !== 202) throw new Error(reply.text);
    return reply.body.id as string;
  };
  const done = (id: string) =>
    waitForAudit(h.app.url, tenant.token, tenant.workspaceId, id, 180_000);
  const logs = async (id: string) =>
    (await call(h.app.url, 'GET', `${ws}/audits/${id}/logs?limit=200`, { token: tenant.token }))
      .body.items as Array<{ message: string; occurred_at: string }>;
  return { start, done, logs };
}

async function until(what: () => Promise<boolean>, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const statusOf = async (h: AuditHarness, id: string) =>
  (await h.app.services.db('audits').where({ id }).first('status')).status as string;

const startedAt = async (
  logs: (id: string) => Promise<Array<{ message: string; occurred_at: string }>>,
  id: string,
) => new Date((await logs(id)).find((l) => l.message === 'audit started')!.occurred_at).getTime();

test('with MAX_RUNNING_AUDITS = 1 the second audit waits in line, then runs when the first ends', async (t) => {
  const h = await startAuditHarness({ extraAgents: [slowAgent], config: { maxRunningAudits: 1 } });
  harnesses.push(h);
  const a = await workspace(h);
  const first = await a.start();
  await until(async () => (await statusOf(h, first)) === 'running');
  const second = await a.start();
  await until(async () => (await a.logs(second)).some((l) => l.message.startsWith('waiting for')));
  t.is(await statusOf(h, second), 'queued', 'the N+1st audit is queued');
  t.true(
    (await a.logs(second)).some(
      (l) => l.message === 'waiting for a running slot: position 1 in line',
    ),
  );
  const firstDone = await a.done(first);
  const secondDone = await a.done(second);
  t.is(firstDone.body.status, 'completed');
  t.is(secondDone.body.status, 'completed');
  const firstEnd = new Date(firstDone.body.completed_at).getTime();
  t.true((await startedAt(a.logs, second)) >= firstEnd, 'it ran once the first had finished');
});

test("per workspace: a light audit of workspace B is not held behind workspace A's", async (t) => {
  const h = await startAuditHarness({
    extraAgents: [slowAgent],
    config: { maxRunningAudits: 2, maxRunningAuditsPerWorkspace: 1 },
  });
  harnesses.push(h);
  const a = await workspace(h);
  const b = await workspace(h);
  const a1 = await a.start();
  await until(async () => (await statusOf(h, a1)) === 'running');
  const a2 = await a.start();
  const a3 = await a.start();
  await until(async () => (await a.logs(a3)).some((l) => l.message.startsWith('waiting for')));
  const b1 = await b.start();
  const b1Done = await b.done(b1);
  t.is(b1Done.body.status, 'completed');
  // B's audit ran while A's first still ran, before A's others were let in.
  const a1Done = await a.done(a1);
  t.true((await startedAt(b.logs, b1)) < new Date(a1Done.body.completed_at).getTime());
  for (const id of [a2, a3]) t.is((await a.done(id)).body.status, 'completed');
  t.true((await startedAt(a.logs, a2)) >= new Date(a1Done.body.completed_at).getTime());
});
