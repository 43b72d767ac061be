/**
 * The console's triage and approval pages in a real browser (Debian's Chromium through
 * playwright-core) against the real stack: the API serving the built console, an in-process
 * worker on the test Temporal server, PostgreSQL, the demo repository audited for real. Two
 * members: `demo` (who audits, plans, requests) and `bob` (an admin who approves). Each page is
 * checked with axe-core (no serious or critical violation) and watched for script errors, CSP
 * refusals, dialogs and requests to other origins. UPDATE_SCREENSHOTS=1 writes docs/console/*.png.
 */
import crypto from 'node:crypto';
import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { runAudit, type AuditHarness } from './helpers/audit-harness';
import { call } from './helpers/http';
import {
  startConsoleDemo,
  accessible,
  clean,
  launch,
  person,
  screenshot,
  signIn,
} from './helpers/console-browser';
import type { Demo } from '../platform/bootstrap';
import { insertGrant } from '../db/oauth';

let h: AuditHarness;
let browser: Browser;
let demo: Demo;
let base: string;
let auditId: string;
let actionId: string;
let grantId: string;
let scheduleNextRun: string;
const PASSWORD = 'console pages password';
const ACTION_REASON = 'Attachments of this audit hold a customer export by mistake.';
const HOSTILE_REASON = '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>';

const v1 = (p: string) => `/v1/workspaces/${demo.workspaceId}${p}`;
const api = (method: string, p: string, body?: unknown) =>
  call(base, method, v1(p), { token: demo.token, body });
const ws = () => `/app/w/${demo.workspaceId}`;

test.before(async () => {
  // The demo workspace with its owner and Bob, a second member who may approve.
  ({ h, demo } = await startConsoleDemo(PASSWORD));
  base = h.app.url;
  const db = h.app.services.db;
  const audited = await runAudit(base, demo.token, demo.workspaceId, {
    repository_id: demo.repositoryId,
  });
  if (audited.status !== 'completed') throw new Error(`demo audit ${audited.status}`);
  auditId = audited.id;
  // What the demo member set up with the CLI: a profile, a schedule, a privileged request,
  // and an MCP client they authorized (the consent page's grant, stored as it stores it).
  const profile = await api('POST', `/repositories/${demo.repositoryId}/audit-profiles`, {
    name: 'nightly-main',
    branch_ref: 'main',
    purpose: 'The nightly look at main',
  });
  if (profile.status !== 201) throw new Error(profile.text);
  const schedule = await api('POST', '/audit-schedules', {
    name: 'every night',
    repository_id: demo.repositoryId,
    timezone: 'Europe/Paris',
    cadence: 'daily',
    local_hour: 2,
    local_minute: 30,
  });
  if (schedule.status !== 201) throw new Error(schedule.text);
  scheduleNextRun = schedule.body.next_run_at;
  const action = await api('POST', '/workflow-actions', {
    kind: 'purge_attachments',
    target: { audit_id: auditId },
    reason: ACTION_REASON,
  });
  if (action.status !== 201) throw new Error(action.text);
  actionId = action.body.id;
  const hostile = await api('POST', '/workflow-actions', {
    kind: 'deep_review_audit',
    target: { repository_id: demo.repositoryId, branch_ref: '<b>main</b>' },
    reason: HOSTILE_REASON,
  });
  if (hostile.status !== 201) throw new Error(hostile.text);
  const caller = await call(base, 'GET', '/v1/caller', { token: demo.token });
  grantId = `grant_${crypto.randomBytes(6).toString('hex')}`;
  await insertGrant(db, {
    id: grantId,
    workspace_id: demo.workspaceId,
    member_id: caller.body.member_id,
    client_id: 'test-agent-client',
    client_name: 'Test agent',
    redirect_host: '127.0.0.1:9',
    resource: `${base}/mcp`,
    scopes: ['audits:read', 'findings:read'],
    expires_at: new Date(Date.now() + 30 * 86_400_000),
  });
  browser = await launch();
});

test.after.always(async () => {
  await browser?.close();
  await h?.close();
});

/** Clicks a control by keyboard: focus, then Enter. */
async function press(page: Page, name: string | RegExp, within = page.locator('main')) {
  await within
    .getByRole('button', { name, exact: typeof name === 'string' })
    .first()
    .focus();
  await page.keyboard.press('Enter');
}

let remediationId: string;

test.serial('findings: accept a risk with a reason, plan a fix and follow it', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    await page.getByRole('banner').getByRole('link', { name: 'Findings' }).click();
    await page.getByRole('heading', { name: 'Findings', level: 1 }).waitFor();
    const pinned = page.locator('li.card', { hasText: 'ci-actions-pinned' }).first();
    await pinned.waitFor();
    const pinnedId = (await pinned.getAttribute('id'))!;
    // Each finding says where it comes from: here the demo repository.
    t.is(await pinned.locator('.source').textContent(), 'demo');
    await accessible(t, page, 'findings');
    await screenshot(page, 'findings');
    await page.setViewportSize({ width: 390, height: 844 });
    await accessible(t, page, 'findings at 390 px');
    await page.setViewportSize({ width: 1280, height: 900 });
    // The repository filter keeps the findings of one repository.
    await page.getByLabel('Repository', { exact: true }).selectOption({ label: 'demo' });
    await pinned.waitFor();
    await pinned.getByLabel('Reason').fill('Pinned by the platform team’s mirror; reviewed.');
    await press(page, 'Accept risk', pinned);
    // Under the default filter (open) the finding leaves the list.
    await page.locator(`[id="${pinnedId}"]`).waitFor({ state: 'detached' });
    const accepted = await api('GET', `/findings/${pinnedId}`);
    t.is(accepted.body.status, 'accepted_risk');
    t.is(accepted.body.note, 'Pinned by the platform team’s mirror; reviewed.');

    const shared = page.locator('li.card', { hasText: 'no-shared-database' }).first();
    const sharedId = (await shared.getAttribute('id'))!;
    t.true(await shared.getByText('Remediation: none yet').isVisible());
    await press(page, /^Plan a fix/, shared);
    await page.waitForURL(/\/remediations\/[0-9a-f-]{36}$/);
    remediationId = page.url().split('/').pop()!;
    const detail = page.locator('article.detail');
    // The remediation agent writes the plan (a template without a model); the page follows it.
    await detail.getByRole('heading', { name: 'Steps' }).waitFor({ timeout: 60_000 });
    t.is(await detail.getAttribute('data-status'), 'proposed');
    const title = (await api('GET', `/findings/${sharedId}`)).body.title as string;
    await detail.getByRole('link', { name: title }).waitFor();
    // The author is not offered Approve: another member approves.
    t.is(await detail.getByRole('button', { name: 'Approve' }).count(), 0);
    t.is(await detail.getByRole('button', { name: 'Withdraw' }).count(), 1);
    await accessible(t, page, 'remediation detail');
    // Back on the findings: the finding links to its remediation.
    await page.getByRole('banner').getByRole('link', { name: 'Findings' }).click();
    const linked = page.locator(`[id="${sharedId}"]`);
    await linked.getByText(/Remediation: .+\(proposed\)/).waitFor();
    t.is(
      await linked.locator(`a[href$="/remediations/${remediationId}"]`).count(),
      1,
      'the finding links to its remediation',
    );
    t.is(
      await linked.getByRole('button', { name: /^Plan a fix/ }).count(),
      0,
      'no second plan while one is under way',
    );
    clean(t, watch, 'findings');
  } finally {
    await context.close();
  }
});

test.serial("home: what waits for another member's approval", async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    const reads: URL[] = [];
    page.on('request', (r) => reads.push(new URL(r.url())));
    await signIn(page, base, 'bob', PASSWORD);
    const waiting = page.locator('section[aria-labelledby="waiting"]');
    await waiting.getByText('Remediation to approve:').waitFor();
    await waiting.getByText('Workflow action to approve:').first().waitFor();
    await waiting.getByText('Report to approve:').waitFor();
    await waiting.getByRole('link', { name: new RegExp(ACTION_REASON) }).waitFor();
    // What waits is decided by light list reads filtered by the API (at most 20 items each),
    // never by reading whole reports.
    t.deepEqual(
      reads.filter((u) => u.pathname.endsWith('/report')).map((u) => u.pathname),
      [],
    );
    const filtered = (p: string, q: string) =>
      reads.some(
        (u) => u.pathname === v1(p) && u.searchParams.get('limit') === '20' && u.search.includes(q),
      );
    t.true(filtered('/audits', 'report_status=draft'));
    t.true(filtered('/decisions', 'status=in_review'));
    t.true(filtered('/remediations', 'status=proposed'));
    t.true(filtered('/workflow-actions', 'status=pending'));
    t.true(filtered('/uncertainty-cases', 'blocking=true'));
    await accessible(t, page, 'home (waiting for you)');
    await screenshot(page, 'home-waiting');
    // The demo member does not see their own remediation or request as waiting for them.
    const other = await person(browser, base);
    try {
      await signIn(other.page, base, 'demo', PASSWORD);
      const theirs = other.page.locator('section[aria-labelledby="waiting"]');
      await theirs
        .getByText(/Nothing needs you now|to approve/)
        .first()
        .waitFor();
      t.is(await theirs.getByText('Remediation to approve:').count(), 0);
      t.is(await theirs.getByText('Workflow action to approve:').count(), 0);
    } finally {
      await other.context.close();
    }
    clean(t, watch, 'home');
  } finally {
    await context.close();
  }
});

test.serial(
  'remediations: another member approves; the author starts and finishes it; the next audit gives the verification',
  async (t) => {
    const bob = await person(browser, base);
    const author = await person(browser, base);
    try {
      const b = bob.page;
      await signIn(b, base, 'bob', PASSWORD);
      await b.locator('section[aria-labelledby="waiting"]').waitFor();
      await b.goto(`${base}${ws()}/remediations`);
      await b.getByRole('table').getByRole('link').first().click();
      const detail = b.locator('article.detail');
      await detail.getByRole('heading', { name: 'Steps' }).waitFor();
      await detail.getByLabel('Rationale').fill('The plan removes the shared database; go.');
      await press(b, 'Approve', detail);
      await b.locator('article.detail[data-status=approved]').waitFor();
      await detail.getByText('The plan removes the shared database; go.').waitFor();
      await accessible(t, b, 'remediation approved');

      const a = author.page;
      await signIn(a, base, 'demo', PASSWORD);
      await a.goto(`${base}${ws()}/remediations/${remediationId}`);
      const mine = a.locator('article.detail');
      await mine.getByLabel('Why (start the work)').fill('Picked up in this sprint.');
      await press(a, 'Start the work', mine);
      await a.locator('article.detail[data-status=in_progress]').waitFor();
      await mine.getByLabel('Why (mark done)').fill('Merged: each service owns its tables.');
      await press(a, 'Mark done', mine);
      await a.locator('article.detail[data-status=done]').waitFor();
      t.is((await api('GET', `/remediations/${remediationId}`)).body.status, 'done');

      // The code did not change: the next audit still observes the finding -> not verified.
      const next = await runAudit(base, demo.token, demo.workspaceId, {
        repository_id: demo.repositoryId,
      });
      t.is(next.status, 'completed');
      const deadline = Date.now() + 60_000;
      while ((await api('GET', `/remediations/${remediationId}`)).body.verification === null) {
        if (Date.now() > deadline) throw new Error('no verification');
        await new Promise((r) => setTimeout(r, 300));
      }
      await a.reload();
      const verification = a.locator('section[aria-labelledby="rem-verification"]');
      await verification.getByText('not verified').waitFor();
      await verification.getByText('1 still observed').waitFor();
      await a.locator('article.detail[data-status=not_verified]').waitFor();
      await accessible(t, a, 'remediation verified');
      await screenshot(a, 'remediation');
      await a.setViewportSize({ width: 390, height: 844 });
      await accessible(t, a, 'remediation at 390 px');
      await screenshot(a, 'remediation-390');
      clean(t, bob.watch, 'remediations (approver)');
      clean(t, author.watch, 'remediations (author)');
    } finally {
      await bob.context.close();
      await author.context.close();
    }
  },
);

test.serial('workflow actions: the requester cannot approve; another member does', async (t) => {
  const requester = await person(browser, base);
  const bob = await person(browser, base);
  try {
    await signIn(requester.page, base, 'demo', PASSWORD);
    await requester.page.goto(`${base}${ws()}/actions`);
    const own = requester.page.locator(`[id="${actionId}"]`);
    await own.getByText(ACTION_REASON).waitFor();
    t.is(await own.getByRole('button', { name: 'Approve' }).count(), 0);
    await own.getByText(/another member holding workflow_actions:approve/).waitFor();

    const b = bob.page;
    await signIn(b, base, 'bob', PASSWORD);
    await b.getByRole('banner').getByRole('link', { name: 'Workflow actions' }).click();
    const card = b.locator(`[id="${actionId}"]`);
    await card.getByText(ACTION_REASON).waitFor();
    await accessible(t, b, 'workflow actions');
    // A reason carrying HTML and script is shown as text; nothing runs.
    await b.getByText(HOSTILE_REASON).waitFor();
    await b.getByText('<b>main</b>').waitFor();
    t.is(await b.locator('main img, main script, main b').count(), 0);
    t.is(await b.evaluate('window.__pwned'), undefined);
    await card.getByLabel('Rationale').fill('Confirmed with the customer: purge it.');
    await press(b, 'Approve', card);
    await b
      .locator(`[id="${actionId}"]:is([data-status=approved], [data-status=executed])`)
      .waitFor();
    await card.getByText(/Decided by bob \(admin\)/).waitFor();
    const stored = await api('GET', `/workflow-actions/${actionId}`);
    t.true(['approved', 'executed'].includes(stored.body.status), stored.body.status);
    t.is(stored.body.decision_rationale, 'Confirmed with the customer: purge it.');
    await screenshot(b, 'workflow-actions');
    await b.setViewportSize({ width: 390, height: 844 });
    await accessible(t, b, 'workflow actions at 390 px');
    clean(t, requester.watch, 'workflow actions (requester)');
    clean(t, bob.watch, 'workflow actions (approver)');
  } finally {
    await requester.context.close();
    await bob.context.close();
  }
});

test.serial(
  'workflow actions: request one, its target fields by kind; a refusal names its field',
  async (t) => {
    const { context, page, watch } = await person(browser, base);
    try {
      await signIn(page, base, 'demo', PASSWORD);
      await page.goto(`${base}${ws()}/actions`);
      await page.getByText('Request an action').click();
      const form = page.getByRole('form', { name: 'Request an action' });
      // Each kind shows the target it takes.
      await form
        .getByLabel('Action')
        .selectOption({ label: 'Revoke every live token of a member' });
      await form
        .getByLabel('Member')
        .locator('option', { hasText: 'bob (admin)' })
        .waitFor({ state: 'attached' });
      t.is(await form.getByLabel('Repository').count(), 0);
      await form.getByLabel('Action').selectOption({ label: 'Purge the attachments of an audit' });
      await form.getByLabel('Audit').waitFor();
      t.is(await form.getByLabel('Member').count(), 0);
      await form
        .getByLabel('Action')
        .selectOption({ label: 'Audit a repository with a deep review' });
      // No repository picked: refused, said under the field.
      const reason = 'A second look at <em>main</em> before the release.';
      await form.getByLabel('Reason (shown to the approver)').fill(reason);
      await press(page, 'Request the action', form);
      const problem = form.locator('#wa-repository-problem');
      await problem.waitFor();
      t.regex((await problem.textContent())!, /^target\/repository_id /);
      t.is(await form.getByLabel('Repository').getAttribute('aria-invalid'), 'true');
      await accessible(t, page, 'workflow action request refused');
      await screenshot(page, 'workflow-action-request');
      await form.getByLabel('Repository').selectOption({ label: 'demo' });
      await form.getByLabel('Branch (default: the default branch)').fill('main');
      await press(page, 'Request the action', form);
      await form.getByText('Requested: Audit a repository with a deep review.').waitFor();
      t.is(await problem.count(), 0);
      const card = page.locator('article.card', { hasText: reason });
      await card.getByRole('heading', { name: 'deep review audit' }).waitFor();
      t.is(await page.locator('main em').count(), 0);
      const listed = await api('GET', '/workflow-actions?limit=100');
      const made = (listed.body.items as Array<Record<string, any>>).find(
        (a) => a.reason === reason,
      )!;
      t.like(made, {
        kind: 'deep_review_audit',
        status: 'pending',
        target: { repository_id: demo.repositoryId, branch_ref: 'main' },
      });
      // The requester cannot approve their own request.
      t.is(await card.getByRole('button', { name: 'Approve' }).count(), 0);
      await accessible(t, page, 'workflow action requested');
      const refused = /status of 400/;
      t.is(watch.errors.filter((e) => refused.test(e)).length, 1);
      watch.errors = watch.errors.filter((e) => !refused.test(e));
      clean(t, watch, 'workflow action request');
    } finally {
      await context.close();
    }
  },
);

test.serial('audit: cost and agent runs; another member approves the report', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    const latest = (await api('GET', `/audits?repository_id=${demo.repositoryId}&status=completed`))
      .body.items[0].id as string;
    const cost = await api('GET', `/audits/${latest}/cost`);
    const runs = await api('GET', `/audits/${latest}/agent-runs`);
    await signIn(page, base, 'bob', PASSWORD);
    await page
      .locator('section[aria-labelledby="waiting"]')
      .getByRole('link', { name: /^demo, audit of/ })
      .click();
    await page.waitForURL(new RegExp(`/a/${latest}#report$`));
    const costs = page.locator('section[aria-labelledby="cost"]');
    t.is(await costs.getByTestId('cost-usd').textContent(), `$${cost.body.cost_usd}`);
    await costs.getByText(`${cost.body.model_calls} model calls`).waitFor();
    // The cost figures and the agent runs are separate queries: wait for the runs' table (or its
    // empty state) before counting its rows.
    if (runs.body.runs.length > 0) {
      await costs
        .getByRole('region', { name: 'Agent runs table' })
        .locator('tbody tr')
        .first()
        .waitFor();
      t.is(await costs.locator('tbody tr').count(), runs.body.runs.length);
    } else await costs.getByText('No agent run.').waitFor();
    const report = page.locator('section[aria-labelledby="report"]');
    await page.locator('section[data-report-status=draft]').waitFor();
    await accessible(t, page, 'audit with cost and report');
    await report.getByLabel('Rationale').fill('Read it through: accurate.');
    await press(page, 'Approve', report);
    await page.locator('section[data-report-status=approved]').waitFor();
    await report.getByText(/Approved by bob \(admin\)/).waitFor();
    const stored = await api('GET', `/audits/${latest}/report`);
    t.is(stored.body.status, 'approved');
    t.is(stored.body.approval.rationale, 'Read it through: accurate.');
    await screenshot(page, 'audit-cost');
    clean(t, watch, 'audit');
  } finally {
    await context.close();
  }
});

test.serial(
  'OAuth grants: the member sees the clients they authorized and revokes one',
  async (t) => {
    const { context, page, watch } = await person(browser, base);
    try {
      await signIn(page, base, 'demo', PASSWORD);
      await page.getByRole('banner').getByRole('link', { name: 'OAuth grants' }).click();
      const row = page.locator(`tr[data-grant="${grantId}"]`);
      await row.getByRole('rowheader', { name: 'Test agent' }).waitFor();
      await row.getByText('audits:read, findings:read').waitFor();
      await accessible(t, page, 'OAuth grants');
      await screenshot(page, 'grants');
      await press(page, /^Revoke/, row);
      await row.getByText(/^revoked/).waitFor();
      const list = await api('GET', '/oauth-grants');
      const grant = list.body.items.find((g: any) => g.id === grantId);
      t.truthy(grant.revoked_at);
      // Bob, another member, sees none of demo's grants.
      const bob = await person(browser, base);
      try {
        await signIn(bob.page, base, 'bob', PASSWORD);
        await bob.page.goto(`${base}${ws()}/grants`);
        await bob.page.getByText('You have not authorized any client.').waitFor();
      } finally {
        await bob.context.close();
      }
      clean(t, watch, 'grants');
    } finally {
      await context.close();
    }
  },
);

test.serial('assistant: ask, read the answer, a cited key opens the explorer on it', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    await page.getByRole('banner').getByRole('link', { name: 'Assistant' }).click();
    await page.getByRole('heading', { name: 'Assistant', level: 1 }).waitFor();
    await page.getByLabel('Repository', { exact: true }).selectOption({ label: 'demo' });
    await page.getByLabel('Title').fill('Orders');
    await press(page, 'Start');
    await page.getByRole('heading', { name: 'Orders', level: 2 }).waitFor();
    await page.getByLabel('Your question').fill('What depends on service:orders?');
    await press(page, 'Ask');
    const answer = page.locator('li.message-assistant').first();
    await answer.waitFor({ timeout: 60_000 });
    const cited = answer.getByRole('list', { name: 'Cited keys' }).getByRole('link');
    await cited.first().waitFor();
    const keys = await cited.allTextContents();
    t.true(keys.includes('service:orders'), keys.join(', '));
    await accessible(t, page, 'assistant');
    await screenshot(page, 'assistant');
    await page.setViewportSize({ width: 390, height: 844 });
    await accessible(t, page, 'assistant at 390 px');
    await page.setViewportSize({ width: 1280, height: 900 });
    await cited.filter({ hasText: /^service:orders$/ }).click();
    const url = new URL(page.url());
    t.regex(url.pathname, new RegExp(`^${ws()}/a/[0-9a-f-]{36}/graph$`));
    t.is(url.searchParams.get('entity'), 'service:orders');
    // The audit is the one of the snapshot the answer was read from.
    const snapshots = await api('GET', `/repositories/${demo.repositoryId}/architecture/snapshots`);
    t.true(
      snapshots.body.items.some((s: any) => url.pathname.includes(s.audit_id)),
      'an audit of the repository',
    );
    await page.locator('.graph[data-ready=true]').waitFor({ timeout: 30_000 });
    clean(t, watch, 'assistant');
  } finally {
    await context.close();
  }
});

test.serial('repository: profiles and schedules with their next runs', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    await page.goto(`${base}${ws()}/r/${demo.repositoryId}`);
    const profiles = page.getByRole('region', { name: 'Profiles table' });
    await profiles.getByRole('rowheader', { name: 'nightly-main' }).waitFor();
    await profiles.getByText('The nightly look at main').waitFor();
    const schedules = page.getByRole('region', { name: 'Schedules table' });
    const row = schedules.getByRole('row', { name: /every night/ });
    await row.getByText('daily at 02:30 (Europe/Paris)').waitFor();
    t.is(await row.locator('.next-run time').getAttribute('datetime'), scheduleNextRun);
    // A profile can be picked to start an audit.
    t.deepEqual(await page.getByLabel('Profile').locator('option').allTextContents(), [
      'none',
      'nightly-main',
    ]);
    await accessible(t, page, 'repository with profiles and schedules');
    await screenshot(page, 'repository');
    await page.setViewportSize({ width: 390, height: 844 });
    await accessible(t, page, 'repository at 390 px');
    clean(t, watch, 'repository');
  } finally {
    await context.close();
  }
});

test.serial(
  'repository: create a profile and a schedule, pause, resume and change it; refusals name their field',
  async (t) => {
    const { context, page, watch } = await person(browser, base);
    try {
      await signIn(page, base, 'demo', PASSWORD);
      await page.goto(`${base}${ws()}/r/${demo.repositoryId}`);
      const main = page.locator('main');
      await page.getByRole('region', { name: 'Profiles table' }).waitFor();

      // A profile: a branch, a purpose and the paths it reads.
      await main.getByText('New profile').click();
      const profileForm = page.getByRole('form', { name: 'New profile' });
      await profileForm.getByLabel('Name').fill('release-<i>cut</i>');
      await profileForm.getByLabel('Branch').fill('release');
      await profileForm.getByLabel('Purpose (optional)').fill('Before each release');
      await profileForm.getByLabel(/^Include paths/).fill('services/**, deploy/**');
      await press(page, 'Create the profile', profileForm);
      const profiles = page.getByRole('region', { name: 'Profiles table' });
      await profiles.getByRole('rowheader', { name: 'release-<i>cut</i>' }).waitFor();
      await profiles.getByText('include services/**, deploy/**').waitFor();
      t.is(await main.locator('i').count(), 0);
      const stored = await api('GET', `/repositories/${demo.repositoryId}/audit-profiles`);
      const made = (stored.body.items as Array<Record<string, any>>).find(
        (p) => p.name === 'release-<i>cut</i>',
      )!;
      t.is(made.branch_ref, 'release');
      t.deepEqual(made.source_scope.include, ['services/**', 'deploy/**']);

      // A schedule: weekly on Friday at 18:15; an unknown time zone is refused under its field.
      await main.getByText('New schedule').click();
      const form = page.getByRole('form', { name: 'New schedule' });
      await form.getByLabel('Name').fill('release review');
      await form.getByLabel('Runs', { exact: true }).selectOption({ label: 'every week' });
      await form.getByLabel('On', { exact: true }).selectOption({ label: 'Friday' });
      await form.getByLabel('At (local time)').fill('18:15');
      await form.getByLabel(/^Time zone/).fill('Mars/Olympus_Mons');
      await form.getByLabel('Runs missed while nothing could run').selectOption('run_once');
      await press(page, 'Create the schedule', form);
      const zone = form.getByLabel(/^Time zone/);
      await form.locator('#s-tz-problem').waitFor();
      t.regex((await form.locator('#s-tz-problem').textContent())!, /^timezone /);
      t.is(await zone.getAttribute('aria-invalid'), 'true');
      t.is(await zone.getAttribute('aria-describedby'), 's-tz-problem');
      await form.getByRole('alert').waitFor();
      await accessible(t, page, 'repository with a refused schedule');
      await form.getByLabel('Name').scrollIntoViewIfNeeded();
      await screenshot(page, 'repository-schedule');
      await zone.fill('America/New_York');
      await press(page, 'Create the schedule', form);
      const schedules = page.getByRole('region', { name: 'Schedules table' });
      const row = schedules.getByRole('row', { name: /release review/ });
      await row.getByText('weekly at 18:15 (America/New_York)').waitFor();
      t.is(await form.locator('#s-tz-problem').count(), 0);
      const list = await api('GET', `/audit-schedules?repository_id=${demo.repositoryId}`);
      const schedule = (list.body.items as Array<Record<string, any>>).find(
        (s) => s.name === 'release review',
      )!;
      t.like(schedule, {
        cadence: 'weekly',
        weekday: 5,
        local_hour: 18,
        local_minute: 15,
        timezone: 'America/New_York',
        missed_run_policy: 'run_once',
        state: 'active',
      });

      // Pause, then resume.
      await press(page, /^Pause release review/, row);
      await row.locator('.next-run', { hasText: 'paused' }).waitFor();
      t.is((await api('GET', `/audit-schedules/${schedule.id}`)).body.state, 'paused');
      await press(page, /^Resume release review/, row);
      await row.locator('.next-run time').waitFor();
      t.is((await api('GET', `/audit-schedules/${schedule.id}`)).body.state, 'active');

      // A new calendar: every day at 03:45; a day of the month the cadence does not take is
      // impossible to send (the field is not offered), a bad time zone is refused again.
      await press(page, /^Change the calendar of release review/, row);
      const edit = page.getByRole('form', { name: 'Calendar of release review' });
      await edit.getByLabel('Runs', { exact: true }).selectOption({ label: 'every day' });
      t.is(await edit.getByLabel('On', { exact: true }).count(), 0);
      await edit.getByLabel('At (local time)').fill('03:45');
      await edit.getByLabel(/^Time zone/).fill('Nowhere/Atlantis');
      await press(page, 'Save the calendar', edit);
      await edit.locator('.field-problem', { hasText: /^timezone / }).waitFor();
      await edit.getByLabel(/^Time zone/).fill('Asia/Tokyo');
      await press(page, 'Save the calendar', edit);
      await row.getByText('daily at 03:45 (Asia/Tokyo)').waitFor();
      const changed = await api('GET', `/audit-schedules/${schedule.id}`);
      t.like(changed.body, { cadence: 'daily', weekday: null, local_hour: 3, local_minute: 45 });
      t.is(await row.locator('.next-run time').getAttribute('datetime'), changed.body.next_run_at);
      await accessible(t, page, 'repository after the changes');
      await page.setViewportSize({ width: 390, height: 844 });
      await accessible(t, page, 'repository forms at 390 px');
      // The browser logs the two refused requests (400); nothing else went wrong.
      const refused = /status of 400/;
      t.is(watch.errors.filter((e) => refused.test(e)).length, 2);
      watch.errors = watch.errors.filter((e) => !refused.test(e));
      clean(t, watch, 'repository forms');
    } finally {
      await context.close();
    }
  },
);

test.serial('the public demo shows the new pages read-only', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await page.goto(`${base}/app/demo`);
    await page.getByText('Public demo · read-only').waitFor();
    const nav = page.getByRole('banner');
    t.is(await nav.getByRole('link', { name: 'Assistant' }).count(), 0);
    t.is(await nav.getByRole('link', { name: 'OAuth grants' }).count(), 0);
    for (const where of [
      '/findings',
      '/remediations',
      `/remediations/${remediationId}`,
      '/actions',
      `/r/${demo.repositoryId}`,
    ]) {
      await page.goto(`${base}${ws()}${where}`);
      await page.locator('h1').waitFor();
      await page.waitForLoadState('networkidle');
      t.is(await page.locator('main form, main textarea').count(), 0, `no form on ${where}`);
      for (const name of ['Accept risk', 'Mark false positive', 'Plan a fix', 'Approve', 'Reject'])
        t.is(await page.getByRole('button', { name }).count(), 0, `${name} on ${where}`);
    }
    await accessible(t, page, 'public demo remediation');
    clean(t, watch, 'public demo');
  } finally {
    await context.close();
  }
});

test.serial(
  'decisions: the brief is shown as text and downloads as its Markdown file',
  async (t) => {
    const snapshots = await api('GET', `/repositories/${demo.repositoryId}/architecture/snapshots`);
    const snapshot = (snapshots.body.items as Array<{ id: string; audit_id: string }>)[0]!;
    const arch = await api('GET', `/audits/${snapshot.audit_id}/architecture`);
    const evidenceId = (arch.body.evidence as Array<{ id: string }>)[0]!.id;
    const caller = await call(base, 'GET', '/v1/caller', { token: demo.token });
    const title = 'Brief of <i>the queue</i>';
    const proposed = await api('POST', '/decisions', {
      title,
      question: 'Which broker carries the orders?',
      context: HOSTILE_REASON,
      snapshot_id: snapshot.id,
      owner_id: caller.body.member_id,
      options: [
        { id: 'keep', title: 'Keep **RabbitMQ**', description: 'As deployed.' },
        { id: 'kafka', title: '<script>window.__pwned=3</script>', description: 'A log.' },
      ],
      evidence_ids: [evidenceId],
      uncertainties: [],
      success_criteria: [
        {
          id: 'entity',
          description: 'The first entity is still there',
          check: {
            kind: 'entity_present',
            key: (arch.body.entities as Array<{ canonical_key: string }>)[0]!.canonical_key,
          },
        },
      ],
    });
    t.is(proposed.status, 201, proposed.text);
    const brief = await api('GET', `/decisions/${proposed.body.id}/brief`);
    t.is(brief.status, 200);
    // The brief escapes them as entities: shown as HTML they would turn back into tags, as text
    // the reader sees the Markdown exactly (checked below).
    t.true(brief.body.markdown.includes('&lt;script&gt;'), 'the brief carries the hostile strings');
    const { context, page, watch } = await person(browser, base);
    try {
      await signIn(page, base, 'demo', PASSWORD);
      await page.goto(`${base}${ws()}/decisions`);
      const card = page.locator(`article[id="${proposed.body.id}"]`);
      await card.getByRole('heading', { name: title }).waitFor();
      await card.getByText('The brief').click();
      const text = card.getByLabel(`Brief of ${title}`);
      await text.waitFor();
      // The Markdown as the API gives it, as text: no element made of it, no script run.
      t.is(await text.textContent(), brief.body.markdown);
      t.is(await text.locator('*').count(), 0);
      t.is(await page.evaluate('window.__pwned'), undefined);
      const link = card.getByRole('link', { name: `Download ${brief.body.filename}` });
      t.is(await link.getAttribute('download'), brief.body.filename);
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      t.is(download.suggestedFilename(), brief.body.filename);
      const saved = await download.path();
      const { readFile } = await import('node:fs/promises');
      t.is(await readFile(saved, 'utf8'), brief.body.markdown);
      await accessible(t, page, 'decisions with a brief');
      await page.setViewportSize({ width: 390, height: 844 });
      await accessible(t, page, 'decisions with a brief at 390 px');
      clean(t, watch, 'decision brief');
    } finally {
      await context.close();
    }
  },
);
