/**
 * Schedules running for real on the Temporal dev server: an occurrence a minute away fires and
 * its audit completes; occurrences that passed while no worker could dispatch them are skipped
 * or caught up once per missed_run_policy; a failing dispatch marks only its own schedule; an
 * occurrence never dispatches twice (activity retried, workflow replayed).
 */
import test from 'ava';
import { Worker } from '@temporalio/worker';
import { createWorker } from '../worker/create';
import { createScheduleActivities } from '../activities/schedules';
import { scheduleChangedSignal, scheduleStatusQuery } from '../workflows/schedules';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';

const harnesses: AuditHarness[] = [];
const repos: TestRepo[] = [];
const cleanups: Array<() => Promise<void>> = [];

test.after.always(async () => {
  for (const fn of cleanups) await fn();
  for (const h of harnesses) await h.close();
  for (const r of repos) r.remove();
});

async function addRepository(h: AuditHarness, tenant: Tenant, name: string): Promise<string> {
  const repo = createRepo(SAMPLE_FILES);
  repos.push(repo);
  const created = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${tenant.workspaceId}/repositories`,
    { token: tenant.token, body: { name, url: `file://${repo.dir}` } },
  );
  if (created.status !== 201) throw new Error(created.text);
  return created.body.id as string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

async function auditsOf(h: AuditHarness, tenant: Tenant, scheduleId: string) {
  const r = await call(h.app.url, 'GET', `/v1/workspaces/${tenant.workspaceId}/audits?limit=200`, {
    token: tenant.token,
  });
  return (r.body.items as Array<Record<string, any>>).filter((a) => a.origin_ref === scheduleId);
}

async function eventsOf(h: AuditHarness, tenant: Tenant, resourceId: string) {
  const r = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${tenant.workspaceId}/audit-events?limit=200`,
    { token: tenant.token },
  );
  return (r.body.items as Array<Record<string, any>>).filter((e) => e.resource_id === resourceId);
}

/** A worker for the harness's task queue, stopped at the end of the file. */
async function startWorker(h: AuditHarness): Promise<void> {
  const { worker, connection } = await createWorker({
    config: h.app.services.config,
    db: h.app.services.db,
    log: h.app.services.log,
    address: process.env.TEMPORAL_ADDRESS!,
    handleSignals: false,
    model: null,
    prices: {},
  });
  const running = worker.run();
  cleanups.push(async () => {
    worker.shutdown();
    await running;
    await connection.close();
  });
}

async function makeSchedule(
  h: AuditHarness,
  tenant: Tenant,
  body: Record<string, unknown>,
): Promise<Record<string, any>> {
  const r = await call(h.app.url, 'POST', `/v1/workspaces/${tenant.workspaceId}/audit-schedules`, {
    token: tenant.token,
    body,
  });
  if (r.status !== 201) throw new Error(r.text);
  return r.body as Record<string, any>;
}

test('an occurrence a minute away fires: the audit completes and the schedule records it', async (t) => {
  const h = await startAuditHarness();
  harnesses.push(h);
  const tenant = await createTenant(h.app.services.db);
  const repositoryId = await addRepository(h, tenant, 'shop');
  const base = `/v1/workspaces/${tenant.workspaceId}/audit-schedules`;

  // The next whole minute at least 15 s away, as a daily UTC time.
  const target = new Date(Math.ceil((Date.now() + 15_000) / 60_000) * 60_000);
  const definition = {
    timezone: 'UTC',
    cadence: 'daily',
    local_hour: target.getUTCHours(),
    local_minute: target.getUTCMinutes(),
  };
  const preview = await call(h.app.url, 'POST', `${base}/preview`, {
    token: tenant.token,
    body: { ...definition, count: 2 },
  });
  t.deepEqual(preview.body.runs, [
    target.toISOString(),
    new Date(target.getTime() + 86_400_000).toISOString(),
  ]);
  const created = await call(h.app.url, 'POST', base, {
    token: tenant.token,
    body: { ...definition, name: 'soon', repository_id: repositoryId, branch_ref: 'main' },
  });
  t.is(created.status, 201, created.text);
  const s = created.body;
  t.is(s.next_run_at, preview.body.runs[0]);

  const after = await until('the dispatch', async () => {
    const r = await call(h.app.url, 'GET', `${base}/${s.id}`, { token: tenant.token });
    return r.body.last_dispatched_at ? r.body : undefined;
  });
  // What preview listed is what fired.
  t.is(after.last_run_at, preview.body.runs[0]);
  t.is(after.next_run_at, preview.body.runs[1]);
  t.true(Date.parse(after.last_dispatched_at) >= target.getTime());
  t.true(Date.parse(after.last_dispatched_at) < target.getTime() + 60_000);
  t.like(after, { state: 'active', last_error_code: null, version: 1 });

  const audits = await auditsOf(h, tenant, s.id);
  t.is(audits.length, 1);
  const audit = audits[0]!;
  t.like(audit, { origin: 'schedule', origin_ref: s.id, repository_id: repositoryId });
  t.regex(audit.trigger_reason, new RegExp(`scheduled run for ${target.toISOString()}`));
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, audit.id, 120_000);
  t.is(done.body.status, 'completed', done.text);
  t.is(done.body.branch_ref, 'main');

  // The activity feed shows the scheduled audit, created by the schedule's owner.
  const events = await eventsOf(h, tenant, audit.id);
  t.like(
    events.find((e) => e.action === 'audit.created'),
    { actor_id: tenant.memberId },
  );

  // Trigger runs one more audit now, outside the calendar.
  const triggered = await call(h.app.url, 'POST', `${base}/${s.id}/trigger`, {
    token: tenant.token,
  });
  t.is(triggered.status, 202, triggered.text);
  t.like(triggered.body, { origin: 'schedule', origin_ref: s.id });
  const again = await call(h.app.url, 'GET', `${base}/${s.id}`, { token: tenant.token });
  t.is(again.body.next_run_at, preview.body.runs[1], 'the calendar is unchanged');
  t.true(Date.parse(again.body.last_dispatched_at) > Date.parse(after.last_dispatched_at));
  const finished = await waitForAudit(
    h.app.url,
    tenant.token,
    tenant.workspaceId,
    triggered.body.id,
    120_000,
  );
  t.is(finished.body.status, 'completed');
  t.is((await auditsOf(h, tenant, s.id)).length, 2);
});

test('missed occurrences: skip runs none, run_once exactly one; a failing schedule stops only itself', async (t) => {
  // No worker yet: the schedules' workflows exist but nothing can dispatch.
  const h = await startAuditHarness({ worker: false, config: { scheduleMaxFailures: 1 } });
  harnesses.push(h);
  const { db } = h.app.services;
  const tenant = await createTenant(db);
  const base = `/v1/workspaces/${tenant.workspaceId}/audit-schedules`;

  // Daily 12 hours from now: in the last three days it fell at -12 h, -36 h and -60 h.
  const later = new Date(Math.ceil((Date.now() + 12 * 3_600_000) / 60_000) * 60_000);
  const make = async (name: string, policy: string, repositoryId: string) =>
    makeSchedule(h, tenant, {
      name,
      repository_id: repositoryId,
      timezone: 'UTC',
      cadence: 'daily',
      local_hour: later.getUTCHours(),
      local_minute: later.getUTCMinutes(),
      missed_run_policy: policy,
    });
  const skip = await make('skip', 'skip', await addRepository(h, tenant, 'a'));
  const once = await make('once', 'run_once', await addRepository(h, tenant, 'b'));
  const goneRepo = await addRepository(h, tenant, 'c');
  const broken = await make('broken', 'run_once', goneRepo);
  const del = await call(
    h.app.url,
    'DELETE',
    `/v1/workspaces/${tenant.workspaceId}/repositories/${goneRepo}`,
    { token: tenant.token },
  );
  t.is(del.status, 200);

  // History that ends in the past: the schedules were made three days ago.
  const threeDaysAgo = new Date(Date.now() - 72 * 3_600_000);
  await db('audit_schedules')
    .whereIn('id', [skip.id, once.id, broken.id])
    .update({ created_at: threeDaysAgo, dispatch_cursor_at: threeDaysAgo });
  const missedOccurrences = [72, 48, 24].map((hours) =>
    new Date(later.getTime() - hours * 3_600_000).toISOString(),
  );

  await startWorker(h);

  for (const s of [skip, once, broken]) {
    await until(`the missed runs of ${s.name}`, async () =>
      (await eventsOf(h, tenant, s.id)).find((e) => e.action === 'schedule.runs_missed'),
    );
  }
  await until('the catch-up audit', async () =>
    (await auditsOf(h, tenant, once.id)).length ? true : undefined,
  );
  await sleep(3000); // room for any extra dispatch to show up (there must be none)

  t.is((await auditsOf(h, tenant, skip.id)).length, 0, 'skip: no audit for missed runs');
  const caught = await auditsOf(h, tenant, once.id);
  t.is(caught.length, 1, 'run_once: exactly one catch-up');
  t.regex(caught[0]!.trigger_reason, /catch-up .* 3 missed occurrence\(s\)/);

  const get = async (id: string) =>
    (await call(h.app.url, 'GET', `${base}/${id}`, { token: tenant.token })).body;
  const [skipNow, onceNow, brokenNow] = [
    await get(skip.id),
    await get(once.id),
    await get(broken.id),
  ];
  t.like(skipNow, { state: 'active', last_run_at: null, last_dispatched_at: null });
  t.is(skipNow.next_run_at, later.toISOString(), 'skip: the next on-time occurrence is next');
  t.like(onceNow, { state: 'active', last_error_code: null, last_run_at: missedOccurrences[2] });
  t.is(onceNow.next_run_at, later.toISOString(), 'run_once: then the cadence resumes');
  t.like(brokenNow, { state: 'error', last_error_code: 'repository_deleted' });
  const missed = (await eventsOf(h, tenant, skip.id)).find(
    (e) => e.action === 'schedule.runs_missed',
  );
  t.like(missed?.details, { missed: 3, missed_run_policy: 'skip', caught_up: false });
  const brokenEvents = (await eventsOf(h, tenant, broken.id)).map((e) => e.action);
  t.true(brokenEvents.includes('schedule.dispatch_failed'));

  // A retried dispatch of the same occurrence finds the audit made the first time.
  const activities = createScheduleActivities({
    db,
    log: h.app.services.log,
    config: h.app.services.config,
  });
  const retried = await activities.dispatchScheduledRun(
    once.id,
    missedOccurrences[2]!,
    'catch_up',
    'retried',
  );
  t.like(retried, { outcome: 'dispatched', existing: true });
  t.is(retried.outcome === 'dispatched' && retried.audit.auditId, caught[0]!.id);
  t.is((await auditsOf(h, tenant, once.id)).length, 1);

  // Replaying the workflow's history makes the same decisions (no second dispatch, no
  // nondeterminism).
  const client = await h.app.services.temporal.client();
  const history = await client.workflow.getHandle(once.scheduler_schedule_id).fetchHistory();
  await t.notThrowsAsync(
    Worker.runReplayHistory({ workflowsPath: require.resolve('../workflows') }, history),
  );
  const childStarts = (history.events ?? []).filter(
    (e) => e.startChildWorkflowExecutionInitiatedEventAttributes,
  );
  t.is(childStarts.length, 1, 'one AuditWorkflow started as a child');

  // Resume makes the error schedule active again.
  const resumed = await call(h.app.url, 'POST', `${base}/${broken.id}/resume`, {
    token: tenant.token,
  });
  t.like(resumed.body, { state: 'active' });
});

test('a worker stopped across an occurrence: skip runs nothing for it, run_once one catch-up', async (t) => {
  const h = await startAuditHarness({ config: { scheduleMissedGraceSeconds: 5 } });
  harnesses.push(h);
  const tenant = await createTenant(h.app.services.db);
  const target = new Date(Math.ceil((Date.now() + 20_000) / 60_000) * 60_000);
  const calendar = {
    timezone: 'UTC',
    cadence: 'daily',
    local_hour: target.getUTCHours(),
    local_minute: target.getUTCMinutes(),
  };
  const skip = await makeSchedule(h, tenant, {
    ...calendar,
    name: 'skip',
    repository_id: await addRepository(h, tenant, 'a'),
  });
  const once = await makeSchedule(h, tenant, {
    ...calendar,
    name: 'once',
    repository_id: await addRepository(h, tenant, 'b'),
    missed_run_policy: 'run_once',
  });
  t.is(skip.next_run_at, target.toISOString());

  // Both workflows are asleep on their timers; then the worker goes away past the occurrence.
  const client = await h.app.services.temporal.client();
  for (const s of [skip, once]) {
    await until(`${s.name} asleep`, async () => {
      const d = await client.workflow.getHandle(s.scheduler_schedule_id).describe();
      return d.memo?.next_run_at === target.toISOString() ? true : undefined;
    });
  }
  await h.stopWorker();
  await sleep(Math.max(0, target.getTime() + 12_000 - Date.now()));
  t.is(
    (await auditsOf(h, tenant, skip.id)).length + (await auditsOf(h, tenant, once.id)).length,
    0,
  );
  await startWorker(h);

  for (const s of [skip, once]) {
    await until(`the missed run of ${s.name}`, async () =>
      (await eventsOf(h, tenant, s.id)).find((e) => e.action === 'schedule.runs_missed'),
    );
  }
  await until('the catch-up audit', async () =>
    (await auditsOf(h, tenant, once.id)).length ? true : undefined,
  );
  await sleep(3000);
  t.is((await auditsOf(h, tenant, skip.id)).length, 0);
  const caught = await auditsOf(h, tenant, once.id);
  t.is(caught.length, 1);
  t.regex(
    caught[0]!.trigger_reason,
    new RegExp(`1 missed occurrence\\(s\\), the latest ${target.toISOString()}`),
  );
  const onceNow = (
    await call(
      h.app.url,
      'GET',
      `/v1/workspaces/${tenant.workspaceId}/audit-schedules/${once.id}`,
      {
        token: tenant.token,
      },
    )
  ).body;
  t.is(onceNow.last_run_at, target.toISOString());
  t.is(onceNow.next_run_at, new Date(target.getTime() + 86_400_000).toISOString());
  const done = await waitForAudit(
    h.app.url,
    tenant.token,
    tenant.workspaceId,
    caught[0]!.id,
    120_000,
  );
  t.is(done.body.status, 'completed');
});

test('continue-as-new after 100 ticks: the new run keeps the schedule, its next run and its signals', async (t) => {
  const h = await startAuditHarness();
  harnesses.push(h);
  const tenant = await createTenant(h.app.services.db);
  const repositoryId = await addRepository(h, tenant, 'shop');
  const base = `/v1/workspaces/${tenant.workspaceId}/audit-schedules`;
  const created = await call(h.app.url, 'POST', base, {
    token: tenant.token,
    body: {
      name: 'weekly',
      repository_id: repositoryId,
      timezone: 'Europe/Berlin',
      cadence: 'weekly',
      weekday: 1,
      local_hour: 2,
      local_minute: 30,
    },
  });
  t.is(created.status, 201, created.text);
  const s = created.body;
  const client = await h.app.services.temporal.client();
  const handle = client.workflow.getHandle(s.scheduler_schedule_id);
  const first = await until('the first run to plan', async () => {
    const status = await handle.query(scheduleStatusQuery);
    return status.nextRunAt ? (await handle.describe()).runId : undefined;
  });

  // Every change signal seen is one tick (plan, record); signals that arrive during a tick
  // coalesce, so send the next one once the tick is made. The 100th continues as new.
  for (let tick = 1; tick < 100; tick++) {
    await until(`tick ${tick}`, async () =>
      (await handle.query(scheduleStatusQuery)).ticks >= tick ? true : undefined,
    );
    await handle.signal(scheduleChangedSignal);
  }
  const second = await until('a new run', async () => {
    const d = await handle.describe();
    return d.runId !== first && d.status.name === 'RUNNING' ? d.runId : undefined;
  });
  t.not(second, first);
  const latest = client.workflow.getHandle(s.scheduler_schedule_id);
  const planned = await until('the new run to plan', async () => {
    const status = await latest.query(scheduleStatusQuery);
    return status.nextRunAt ? status : undefined;
  });
  t.is(planned.nextRunAt, s.next_run_at);
  t.is(planned.state, 'active');
  const firstRun = await client.workflow.getHandle(s.scheduler_schedule_id, first).describe();
  t.is(firstRun.status.name, 'CONTINUED_AS_NEW');

  // The new run still serves the API: a pause is seen by it.
  const paused = await call(h.app.url, 'POST', `${base}/${s.id}/pause`, { token: tenant.token });
  t.is(paused.status, 200, paused.text);
  await until('the new run to see the pause', async () => {
    const status = await latest.query(scheduleStatusQuery);
    return status.state === 'paused' ? true : undefined;
  });
  t.is((await latest.query(scheduleStatusQuery)).nextRunAt, null);
  t.is((await auditsOf(h, tenant, s.id)).length, 0, 'ticks dispatch nothing by themselves');
});
