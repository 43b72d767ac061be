/**
 * Audit schedules through the HTTP API: every bound of AuditScheduleCreate and
 * AuditSchedulePreviewRequest at the edge and one past, calendar rule checks, preview without
 * side effects, CRUD with version checks, pause/resume/delete, tenancy, and the write records.
 * Schedules here run far in the future; test/schedule-runs.test.ts makes them fire.
 */
import test from 'ava';
import { startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { startTestApp } from './helpers/app';
import { createTenant, createToken, LOCAL_TEST_WORKSPACES, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call, isProblem, type Reply } from './helpers/http';

let h: AuditHarness;
const repos: TestRepo[] = [];

test.before(async () => {
  h = await startAuditHarness();
});
test.after.always(async () => {
  await h?.close();
  for (const r of repos) r.remove();
});

interface Ctx {
  tenant: Tenant;
  repositoryId: string;
  base: string;
}

async function setup(): Promise<Ctx> {
  const tenant = await createTenant(h.app.services.db);
  const repo = createRepo(SAMPLE_FILES);
  repos.push(repo);
  const created = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${tenant.workspaceId}/repositories`,
    { token: tenant.token, body: { name: 'shop', url: `file://${repo.dir}` } },
  );
  return {
    tenant,
    repositoryId: created.body.id,
    base: `/v1/workspaces/${tenant.workspaceId}/audit-schedules`,
  };
}

const api = (c: Ctx, method: string, path: string, body?: unknown, token = c.tenant.token) =>
  call(h.app.url, method, `${c.base}${path}`, { token, body });

const validCreate = (c: Ctx, extra: Record<string, unknown> = {}) => ({
  name: 'nightly',
  repository_id: c.repositoryId,
  timezone: 'Europe/Berlin',
  cadence: 'daily',
  local_hour: 3,
  local_minute: 0,
  ...extra,
});

const paths = (r: Reply) => ((r.body?.errors ?? []) as Array<{ path: string }>).map((e) => e.path);

test('create answers 201 with the schedule, a running workflow and write records', async (t) => {
  const c = await setup();
  const preview = await api(c, 'POST', '/preview', {
    timezone: 'Europe/Berlin',
    cadence: 'weekly',
    weekday: 1,
    local_hour: 6,
    local_minute: 30,
    count: 1,
  });
  const r = await api(
    c,
    'POST',
    '',
    validCreate(c, { cadence: 'weekly', weekday: 1, local_hour: 6, local_minute: 30 }),
  );
  t.is(r.status, 201, r.text);
  const s = r.body;
  t.is(r.headers.get('location'), `${c.base}/${s.id}`);
  t.like(s, {
    name: 'nightly',
    repository_id: c.repositoryId,
    workspace_id: c.tenant.workspaceId,
    owner_id: c.tenant.memberId,
    timezone: 'Europe/Berlin',
    cadence: 'weekly',
    weekday: 1,
    day_of_month: null,
    anchor_date: null,
    branch_ref: null,
    missed_run_policy: 'skip',
    state: 'active',
    version: 1,
    last_dispatched_at: null,
    last_run_at: null,
    last_error_code: null,
    scheduler_schedule_id: `schedule-${s.id}`,
  });
  t.is(s.next_run_at, preview.body.runs[0], 'next_run_at is what preview lists');

  // The workflow runs and shows its next wake-up in its memo.
  const client = await h.app.services.temporal.client();
  const handle = client.workflow.getHandle(s.scheduler_schedule_id);
  const deadline = Date.now() + 20_000;
  let memo: Record<string, unknown> | undefined;
  while (Date.now() < deadline) {
    const d = await handle.describe();
    t.is(d.status.name, 'RUNNING');
    memo = d.memo;
    if (memo?.state) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.is(memo?.next_run_at, s.next_run_at);
  t.is(memo?.timezone, 'Europe/Berlin');

  const got = await api(c, 'GET', `/${s.id}`);
  t.deepEqual(got.body, s);
  const list = await api(c, 'GET', '');
  t.deepEqual(
    list.body.items.map((i: { id: string }) => i.id),
    [s.id],
  );
  const events = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${c.tenant.workspaceId}/audit-events`,
    { token: c.tenant.token },
  );
  t.true(
    events.body.items.some(
      (e: { action: string; resource_id: string }) =>
        e.action === 'schedule.created' && e.resource_id === s.id,
    ),
  );
});

test('AuditScheduleCreate bounds: each at its edge passes, one past is a 400 naming the field', async (t) => {
  const c = await setup();
  const ok: Array<Record<string, unknown>> = [
    { name: 'n' },
    { name: 'n'.repeat(255) },
    { local_hour: 0, local_minute: 0 },
    { local_hour: 23, local_minute: 59 },
    { cadence: 'weekly', weekday: 0 },
    { cadence: 'biweekly', weekday: 6 },
    { cadence: 'monthly', day_of_month: 1 },
    { cadence: 'monthly', day_of_month: 31 },
    { branch_ref: 'b'.repeat(500) },
    { branch_ref: null, anchor_date: null, weekday: null, day_of_month: null },
    { missed_run_policy: 'run_once' },
    { timezone: 'America/Argentina/ComodRivadavia' },
    { anchor_date: '2999-12-31' },
  ];
  for (const extra of ok) {
    const r = await api(c, 'POST', '', validCreate(c, extra));
    t.is(r.status, 201, `${JSON.stringify(extra).slice(0, 80)}: ${r.text}`);
  }
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ name: '' }, '/name'],
    [{ name: 'n'.repeat(256) }, '/name'],
    [{ timezone: '' }, '/timezone'],
    [{ timezone: 'A'.repeat(101) }, '/timezone'],
    [{ local_hour: -1 }, '/local_hour'],
    [{ local_hour: 24 }, '/local_hour'],
    [{ local_minute: -1 }, '/local_minute'],
    [{ local_minute: 60 }, '/local_minute'],
    [{ cadence: 'weekly', weekday: -1 }, '/weekday'],
    [{ cadence: 'weekly', weekday: 7 }, '/weekday'],
    [{ cadence: 'monthly', day_of_month: 0 }, '/day_of_month'],
    [{ cadence: 'monthly', day_of_month: 32 }, '/day_of_month'],
    [{ branch_ref: 'b'.repeat(501) }, '/branch_ref'],
    [{ cadence: 'hourly' }, '/cadence'],
    [{ missed_run_policy: 'run_all' }, '/missed_run_policy'],
    [{ repository_id: 'not-a-uuid' }, '/repository_id'],
    [{ anchor_date: '2026-13-01' }, '/anchor_date'],
    [{ anchor_date: '3000-01-01' }, '/anchor_date'],
    [{ local_hour: 1.5 }, '/local_hour'],
  ];
  for (const [extra, path] of bad) {
    const r = await api(c, 'POST', '', validCreate(c, extra));
    t.is(r.status, 400, JSON.stringify(extra).slice(0, 80));
    t.true(isProblem(r));
    t.is(r.body.code, 'validation_failed');
    t.deepEqual(paths(r), [path], JSON.stringify(extra).slice(0, 80));
  }
  // A 100-character zone passes the length bound and is then refused as unknown (no IANA zone
  // is that long); 101 characters fail the bound itself.
  const long = await api(c, 'POST', '', validCreate(c, { timezone: 'A'.repeat(100) }));
  t.is(long.status, 400);
  t.regex(long.body.errors[0].message, /IANA/);
  const tooLong = await api(c, 'POST', '', validCreate(c, { timezone: 'A'.repeat(101) }));
  t.notRegex(tooLong.body.errors[0].message, /IANA/);

  const missing = await api(c, 'POST', '', { name: 'x' });
  t.is(missing.status, 400);
  t.deepEqual(paths(missing).sort(), [
    '/cadence',
    '/local_hour',
    '/local_minute',
    '/repository_id',
    '/timezone',
  ]);
  const unknown = await api(c, 'POST', '', validCreate(c, { hourly: true }));
  t.is(unknown.status, 400);
  t.is(unknown.body.code, 'unknown_property');

  const list = await api(c, 'GET', '?limit=200');
  t.is(list.body.items.length, ok.length, 'refused requests stored nothing');
});

test('calendar rules: unknown zone, missing and contradictory fields are 400s naming the field', async (t) => {
  const c = await setup();
  const cases: Array<[Record<string, unknown>, string[], RegExp]> = [
    [{ timezone: 'Mars/Olympus_Mons' }, ['/timezone'], /IANA time zone/],
    [{ cadence: 'weekly' }, ['/weekday'], /required for weekly/],
    [{ cadence: 'biweekly', weekday: null }, ['/weekday'], /required for biweekly/],
    [{ cadence: 'monthly' }, ['/day_of_month'], /required for monthly/],
    [{ cadence: 'daily', weekday: 2 }, ['/weekday'], /weekly and biweekly cadences only/],
    [{ cadence: 'weekly', weekday: 2, day_of_month: 3 }, ['/day_of_month'], /monthly cadence only/],
    [{ cadence: 'monthly', day_of_month: 3, weekday: 1 }, ['/weekday'], /not monthly/],
    [{ branch_ref: 'bad..ref' }, ['/branch_ref'], /git ref/],
  ];
  for (const [extra, want, message] of cases) {
    const created = await api(c, 'POST', '', validCreate(c, extra));
    t.is(created.status, 400, JSON.stringify(extra));
    t.is(created.body.code, 'validation_failed');
    t.deepEqual(paths(created), want);
    t.regex(created.body.errors[0].message, message);
    if ('branch_ref' in extra) continue; // not a preview field
    const previewBody: Record<string, unknown> = validCreate(c, extra);
    delete previewBody.name;
    delete previewBody.repository_id;
    const previewed = await api(c, 'POST', '/preview', previewBody);
    t.is(previewed.status, 400, `preview ${JSON.stringify(extra)}`);
    t.deepEqual(paths(previewed), want);
    t.regex(previewed.body.errors[0].message, message);
  }
  const otherRepo = await api(
    c,
    'POST',
    '',
    validCreate(c, { repository_id: '00000000-0000-4000-8000-000000000000' }),
  );
  t.is(otherRepo.status, 400);
  t.deepEqual(paths(otherRepo), ['/repository_id']);
  // A zone in any letter case is stored by its canonical name.
  const lower = await api(c, 'POST', '', validCreate(c, { timezone: 'europe/berlin' }));
  t.is(lower.body.timezone, 'Europe/Berlin');
});

test('preview: count bounds, default 5, the same runs as the calendar, nothing stored', async (t) => {
  const c = await setup();
  const body = {
    timezone: 'Australia/Sydney',
    cadence: 'monthly',
    day_of_month: 31,
    local_hour: 2,
    local_minute: 30,
  };
  const def = await api(c, 'POST', '/preview', body);
  t.is(def.status, 200, def.text);
  t.is(def.body.timezone, 'Australia/Sydney');
  t.is(def.body.runs.length, 5);
  const runs: string[] = def.body.runs;
  t.deepEqual([...runs].sort(), runs, 'in order');
  t.true(Date.parse(runs[0]!) > Date.now() - 1000);
  // Each run is 02:30 Sydney time on the month's last day or the 31st.
  for (const run of runs) {
    const local = new Date(run).toLocaleString('en-AU', {
      timeZone: 'Australia/Sydney',
      hour12: false,
      day: 'numeric',
      month: 'numeric',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
    });
    const [datePart, timePart] = local.split(', ');
    t.is(timePart, '02:30', run);
    const [d, m, y] = datePart!.split('/').map(Number);
    t.is(d, Math.min(31, new Date(Date.UTC(y!, m!, 0)).getUTCDate()), run);
  }
  for (const count of [1, 20]) {
    const r = await api(c, 'POST', '/preview', { ...body, count });
    t.is(r.status, 200);
    t.is(r.body.runs.length, count);
    t.deepEqual(r.body.runs.slice(0, 5), runs.slice(0, count));
  }
  for (const count of [0, 21]) {
    const r = await api(c, 'POST', '/preview', { ...body, count });
    t.is(r.status, 400);
    t.deepEqual(paths(r), ['/count']);
  }
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ timezone: '' }, '/timezone'],
    [{ timezone: 'A'.repeat(101) }, '/timezone'],
    [{ local_hour: 24 }, '/local_hour'],
    [{ local_hour: -1 }, '/local_hour'],
    [{ local_minute: 60 }, '/local_minute'],
    [{ local_minute: -1 }, '/local_minute'],
    [{ day_of_month: 0 }, '/day_of_month'],
    [{ day_of_month: 32 }, '/day_of_month'],
    [{ cadence: 'weekly', day_of_month: null, weekday: 7 }, '/weekday'],
    [{ cadence: 'weekly', day_of_month: null, weekday: -1 }, '/weekday'],
    [{ anchor_date: 'tomorrow' }, '/anchor_date'],
  ];
  for (const [extra, path] of bad) {
    const r = await api(c, 'POST', '/preview', { ...body, ...extra });
    t.is(r.status, 400, JSON.stringify(extra));
    t.deepEqual(paths(r), [path], JSON.stringify(extra));
  }
  for (const edge of [
    { local_hour: 0, local_minute: 0, day_of_month: 1 },
    { local_hour: 23, local_minute: 59, day_of_month: 31 },
    { cadence: 'weekly', day_of_month: null, weekday: 0 },
    { cadence: 'weekly', day_of_month: null, weekday: 6 },
  ]) {
    const r = await api(c, 'POST', '/preview', { ...body, ...edge });
    t.is(r.status, 200, JSON.stringify(edge));
  }
  // audits:read is enough, and nothing was written.
  const reader = await createToken(h.app.services.db, c.tenant, ['audits:read']);
  const asReader = await api(c, 'POST', '/preview', body, reader.token);
  t.is(asReader.status, 200);
  t.deepEqual(asReader.body.runs, runs);
  t.is((await api(c, 'GET', '')).body.items.length, 0);
  const events = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${c.tenant.workspaceId}/audit-events`,
    { token: c.tenant.token },
  );
  t.false(events.body.items.some((e: { action: string }) => e.action.startsWith('schedule.')));
});

test('biweekly keeps its rhythm from the anchor date; without one, from the creation date', async (t) => {
  const c = await setup();
  const body = {
    timezone: 'UTC',
    cadence: 'biweekly',
    weekday: 3,
    local_hour: 12,
    local_minute: 0,
    anchor_date: '2020-01-01',
    count: 3,
  };
  const r = await api(c, 'POST', '/preview', body);
  for (const run of r.body.runs as string[]) {
    const days = (Date.parse(run) - Date.parse('2020-01-01T12:00:00Z')) / 86_400_000;
    t.is(days % 14, 0, run);
  }
  const created = await api(c, 'POST', '', validCreate(c, { ...body, count: undefined }));
  t.is(created.status, 201, created.text);
  t.is(created.body.next_run_at, r.body.runs[0]);
  const noAnchor = await api(
    c,
    'POST',
    '',
    validCreate(c, { cadence: 'biweekly', weekday: 3, timezone: 'UTC' }),
  );
  t.is(noAnchor.body.anchor_date, new Date().toISOString().slice(0, 10));
});

test('update: version checked, calendar recomputed, stale version changes nothing', async (t) => {
  const c = await setup();
  const s = (await api(c, 'POST', '', validCreate(c))).body;
  const stale = await api(c, 'PATCH', `/${s.id}`, { expected_version: 2, name: 'x' });
  t.is(stale.status, 409);
  t.is(stale.body.code, 'version_mismatch');
  t.deepEqual((await api(c, 'GET', `/${s.id}`)).body, s, 'nothing changed');

  const preview = await api(c, 'POST', '/preview', {
    timezone: 'America/New_York',
    cadence: 'monthly',
    day_of_month: 31,
    local_hour: 2,
    local_minute: 30,
    count: 1,
  });
  const u = await api(c, 'PATCH', `/${s.id}`, {
    expected_version: 1,
    name: 'month end',
    timezone: 'America/New_York',
    cadence: 'monthly',
    day_of_month: 31,
    local_hour: 2,
    local_minute: 30,
    missed_run_policy: 'run_once',
    branch_ref: 'main',
  });
  t.is(u.status, 200, u.text);
  t.like(u.body, {
    version: 2,
    name: 'month end',
    cadence: 'monthly',
    day_of_month: 31,
    weekday: null,
    timezone: 'America/New_York',
    missed_run_policy: 'run_once',
    branch_ref: 'main',
    next_run_at: preview.body.runs[0],
  });
  // The workflow re-plans on the change: its memo shows the new wake-up.
  const client = await h.app.services.temporal.client();
  const handle = client.workflow.getHandle(s.scheduler_schedule_id);
  let memo: Record<string, unknown> | undefined;
  for (let i = 0; i < 100; i += 1) {
    memo = (await handle.describe()).memo;
    if (memo?.next_run_at === u.body.next_run_at) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.is(memo?.next_run_at, u.body.next_run_at);
  t.is(memo?.timezone, 'America/New_York');

  // Omitted fields keep their values (missed_run_policy has a default only on create).
  const renamed = await api(c, 'PATCH', `/${s.id}`, { expected_version: 2, name: 'again' });
  t.like(renamed.body, { version: 3, missed_run_policy: 'run_once', branch_ref: 'main' });
  t.is(renamed.body.next_run_at, u.body.next_run_at);

  const contradictory = await api(c, 'PATCH', `/${s.id}`, {
    expected_version: 3,
    cadence: 'weekly',
  });
  t.is(contradictory.status, 400);
  t.deepEqual(paths(contradictory).sort(), ['/day_of_month', '/weekday']);
  const fixed = await api(c, 'PATCH', `/${s.id}`, {
    expected_version: 3,
    cadence: 'weekly',
    weekday: 5,
    day_of_month: null,
  });
  t.is(fixed.status, 200, fixed.text);
  t.is(fixed.body.version, 4);
  for (const [extra, path] of [
    [{ name: '' }, '/name'],
    [{ local_hour: 24 }, '/local_hour'],
    [{ expected_version: 0 }, '/expected_version'],
  ] as const) {
    const r = await api(c, 'PATCH', `/${s.id}`, { expected_version: 4, ...extra });
    t.is(r.status, 400);
    t.deepEqual(paths(r), [path]);
  }
  const noVersion = await api(c, 'PATCH', `/${s.id}`, { name: 'x' });
  t.deepEqual(paths(noVersion), ['/expected_version']);
});

test('pause and resume move the state, bump the version and refuse repeats with 409', async (t) => {
  const c = await setup();
  const s = (await api(c, 'POST', '', validCreate(c))).body;
  const paused = await api(c, 'POST', `/${s.id}/pause`);
  t.is(paused.status, 200, paused.text);
  t.like(paused.body, { state: 'paused', version: 2 });
  const again = await api(c, 'POST', `/${s.id}/pause`);
  t.is(again.status, 409);
  t.is(again.body.code, 'invalid_transition');
  const resumed = await api(c, 'POST', `/${s.id}/resume`);
  t.like(resumed.body, { state: 'active', version: 3 });
  const resumeAgain = await api(c, 'POST', `/${s.id}/resume`);
  t.is(resumeAgain.status, 409);

  // The workflow answers with what it waits for.
  const client = await h.app.services.temporal.client();
  const handle = client.workflow.getHandle(s.scheduler_schedule_id);
  await api(c, 'POST', `/${s.id}/pause`);
  let status: { state: string; nextRunAt: string | null } | undefined;
  for (let i = 0; i < 100; i += 1) {
    status = await handle.query<{ state: string; nextRunAt: string | null }>('scheduleStatus');
    if (status.state === 'paused') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.is(status?.state, 'paused');
  t.is(status?.nextRunAt, null);

  const events = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${c.tenant.workspaceId}/audit-events`,
    { token: c.tenant.token },
  );
  const actions = events.body.items
    .filter((e: { resource_id: string }) => e.resource_id === s.id)
    .map((e: { action: string }) => e.action);
  t.deepEqual(actions, [
    'schedule.paused',
    'schedule.resumed',
    'schedule.paused',
    'schedule.created',
  ]);
});

test('delete terminates the workflow and the schedule disappears from reads', async (t) => {
  const c = await setup();
  const s = (await api(c, 'POST', '', validCreate(c))).body;
  const d = await api(c, 'DELETE', `/${s.id}`);
  t.is(d.status, 200, d.text);
  t.is(d.body.id, s.id);
  t.is((await api(c, 'GET', `/${s.id}`)).status, 404);
  t.is((await api(c, 'DELETE', `/${s.id}`)).status, 404);
  t.is((await api(c, 'POST', `/${s.id}/pause`)).status, 404);
  t.is((await api(c, 'GET', '')).body.items.length, 0);
  const client = await h.app.services.temporal.client();
  const desc = await client.workflow.getHandle(s.scheduler_schedule_id).describe();
  t.is(desc.status.name, 'TERMINATED');
});

test("another workspace's schedule is a 404 everywhere; scopes are enforced", async (t) => {
  const c = await setup();
  const other = await setup();
  const s = (await api(c, 'POST', '', validCreate(c))).body;
  const foreign = { ...other, base: `/v1/workspaces/${other.tenant.workspaceId}/audit-schedules` };
  for (const [method, path, body] of [
    ['GET', `/${s.id}`, undefined],
    ['PATCH', `/${s.id}`, { expected_version: 1, name: 'x' }],
    ['DELETE', `/${s.id}`, undefined],
    ['POST', `/${s.id}/pause`, undefined],
    ['POST', `/${s.id}/resume`, undefined],
    ['POST', `/${s.id}/trigger`, undefined],
  ] as const) {
    const r = await api(foreign, method, path, body);
    t.is(r.status, 404, `${method} ${path}`);
    t.true(isProblem(r));
  }
  // The other workspace's repository cannot be scheduled here.
  const r = await api(c, 'POST', '', validCreate(c, { repository_id: other.repositoryId }));
  t.is(r.status, 400);
  t.deepEqual(paths(r), ['/repository_id']);
  t.is((await api(c, 'GET', `/${s.id}`)).body.version, 1);

  const reader = await createToken(h.app.services.db, c.tenant, ['audits:read']);
  const denied = await api(c, 'POST', '', validCreate(c), reader.token);
  t.is(denied.status, 403);
  t.is(denied.body.code, 'insufficient_scope');
  t.is((await api(c, 'GET', `/${s.id}`, undefined, reader.token)).status, 200);
  t.is((await api(c, 'POST', `/${s.id}/pause`, undefined, reader.token)).status, 403);
});

test('list pages newest first and filters by repository', async (t) => {
  const c = await setup();
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) ids.push((await api(c, 'POST', '', validCreate(c))).body.id);
  const first = await api(c, 'GET', '?limit=2');
  t.is(first.body.items.length, 2);
  t.true(first.body.has_more);
  const second = await api(c, 'GET', `?limit=2&cursor=${first.body.next_cursor}`);
  t.false(second.body.has_more);
  t.deepEqual(
    [...first.body.items, ...second.body.items].map((i: { id: string }) => i.id),
    [...ids].reverse(),
  );
  const none = await api(c, 'GET', `?repository_id=00000000-0000-4000-8000-000000000000`);
  t.deepEqual(none.body.items, []);
  const all = await api(c, 'GET', `?repository_id=${c.repositoryId}`);
  t.is(all.body.items.length, 3);
});

test('scheduler unreachable: create is 503 and keeps the schedule in state error; resume too', async (t) => {
  const app = await startTestApp({
    temporalAddress: '127.0.0.1:1',
    localRepositoryWorkspaces: [LOCAL_TEST_WORKSPACES],
  });
  try {
    const tenant = await createTenant(app.services.db);
    const repo = createRepo(SAMPLE_FILES);
    repos.push(repo);
    const ws = `/v1/workspaces/${tenant.workspaceId}`;
    const repository = await call(app.url, 'POST', `${ws}/repositories`, {
      token: tenant.token,
      body: { name: 'shop', url: `file://${repo.dir}` },
    });
    const created = await call(app.url, 'POST', `${ws}/audit-schedules`, {
      token: tenant.token,
      body: {
        name: 'n',
        repository_id: repository.body.id,
        timezone: 'UTC',
        cadence: 'daily',
        local_hour: 1,
        local_minute: 0,
      },
    });
    t.is(created.status, 503);
    t.is(created.body.code, 'workflow_engine_unavailable');
    const id = created.body.schedule_id as string;
    const kept = await call(app.url, 'GET', `${ws}/audit-schedules/${id}`, { token: tenant.token });
    t.like(kept.body, { state: 'error', last_error_code: 'workflow_start_failed' });
    const resumed = await call(app.url, 'POST', `${ws}/audit-schedules/${id}/resume`, {
      token: tenant.token,
    });
    t.is(resumed.status, 503);
    const after = await call(app.url, 'GET', `${ws}/audit-schedules/${id}`, {
      token: tenant.token,
    });
    t.like(after.body, { state: 'error', last_error_code: 'workflow_start_failed' });
  } finally {
    await app.close();
  }
});

test('the API refuses the ref names git refuses, at every entry point, before any worker sees them', async (t) => {
  const c = await setup();
  const ws = `/v1/workspaces/${c.tenant.workspaceId}`;
  const entryPoints = (branch_ref: string) => [
    { path: `${ws}/audits`, body: { repository_id: c.repositoryId, branch_ref } },
    {
      path: `${ws}/repositories/${c.repositoryId}/audit-profiles`,
      body: { name: `p-${branch_ref.length}-${Math.random()}`, branch_ref },
    },
    { path: `${ws}/audit-schedules`, body: validCreate(c, { name: 'refs', branch_ref }) },
  ];
  // Names the three validators once judged differently; git refuses them all.
  for (const name of ['a.', '.hidden', 'a/.b', 'foo.lock/bar', 'release/1.0.', '-x', 'a..b']) {
    for (const entry of entryPoints(name)) {
      const reply = await call(h.app.url, 'POST', entry.path, {
        token: c.tenant.token,
        body: entry.body,
      });
      t.is(reply.status, 400, `${entry.path} ${name}`);
      t.deepEqual(
        (reply.body.errors as { path: string }[]).map((e) => e.path),
        ['/branch_ref'],
        `${entry.path} ${name}`,
      );
    }
  }
  // A name git accepts is not refused as a ref by any of them.
  const profile = await call(h.app.url, 'POST', entryPoints('release/1.0')[1]!.path, {
    token: c.tenant.token,
    body: entryPoints('release/1.0')[1]!.body,
  });
  t.is(profile.status, 201, profile.text);
});
