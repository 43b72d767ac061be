/**
 * The console in a real browser (Debian's Chromium through playwright-core) against the real
 * stack: the API serving the built console, an in-process worker on the test Temporal server,
 * PostgreSQL, git repositories made on disk. Each page visited is checked with axe-core (no
 * serious or critical violation) and watched for script errors, CSP refusals, dialogs and
 * requests to other origins. UPDATE_SCREENSHOTS=1 writes docs/console/*.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { runAudit, type AuditHarness } from './helpers/audit-harness';
import { createRepo, type TestRepo } from './helpers/git';
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

const XSS_IMG = '<img src=x onerror="window.__pwned=1;alert(1)">';
const XSS_SCRIPT = '<script>window.__pwned=2;alert(2)</script>';

let h: AuditHarness;
let browser: Browser;
let demo: Demo;
let hostile: TestRepo;
let hostileRepositoryId: string;
let hostileAuditId: string;
let base: string;
const PASSWORD = 'console browser password';

test.before(async () => {
  // The demo workspace with its owner and Bob, a second member who may approve.
  ({ h, demo } = await startConsoleDemo(PASSWORD));
  base = h.app.url;
  // A repository whose names and content carry HTML and script: two compose services built
  // from one unit (an ambiguous identity: an uncertainty case to resolve).
  hostile = createRepo({
    'app/package.json': JSON.stringify({ name: 'app', private: true }),
    'app/Dockerfile': 'FROM node:20\nCOPY . .\n',
    'docker-compose.yml': `services:\n  '${XSS_IMG}':\n    build: ./app\n  '${XSS_SCRIPT}':\n    build: ./app\n    depends_on: ['${XSS_IMG}']\n`,
  });
  const created = await call(base, 'POST', `/v1/workspaces/${demo.workspaceId}/repositories`, {
    token: demo.token,
    body: {
      name: 'hostile',
      url: `file://${hostile.dir}`,
      description: `${XSS_IMG} ${XSS_SCRIPT}`,
    },
  });
  if (created.status !== 201) throw new Error(created.text);
  hostileRepositoryId = created.body.id;
  const audited = await runAudit(base, demo.token, demo.workspaceId, {
    repository_id: hostileRepositoryId,
  });
  if (audited.status !== 'completed') throw new Error(`hostile audit ${audited.status}`);
  hostileAuditId = audited.id;
  browser = await launch();
});

test.after.always(async () => {
  await browser?.close();
  await h?.close();
  hostile?.remove();
});

const ws = () => `/app/w/${demo.workspaceId}`;

async function pwned(page: Page): Promise<unknown> {
  return page.evaluate('window.__pwned');
}

test.serial('sign in from the console, land on the workspace home', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await page.goto(`${base}/`);
    // `/` sends the browser to the console, which offers the sign-in page.
    t.regex(page.url(), /\/app\/$/);
    await accessible(t, page, 'the signed-out console');
    await signIn(page, base, 'demo', PASSWORD);
    await page.getByRole('heading', { name: 'Demo', level: 1 }).waitFor();
    const table = page.getByRole('table');
    await table.getByRole('link', { name: 'demo', exact: true }).waitFor();
    await table.getByRole('link', { name: 'hostile', exact: true }).waitFor();
    await accessible(t, page, 'home');
    await screenshot(page, 'home');
    await page.setViewportSize({ width: 390, height: 844 });
    await accessible(t, page, 'home at 390 px');
    await screenshot(page, 'home-390');
    clean(t, watch, 'sign-in and home');
  } finally {
    await context.close();
  }
});

test.serial('start an audit of the demo repository and see its stages complete live', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    await page.getByRole('table').getByRole('link', { name: 'demo', exact: true }).click();
    await page.getByRole('heading', { name: 'demo', level: 1 }).waitFor();
    await accessible(t, page, 'repository');
    // By keyboard: focus the button and press Enter.
    await page.getByRole('button', { name: 'Start an audit' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/a\/[0-9a-f-]{36}$/);
    // The page updates by itself: a stage is seen running or pending before all complete.
    const seen = new Set<string>();
    const deadline = Date.now() + 150_000;
    for (;;) {
      const statuses = await page
        .locator('.stages li')
        .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.status ?? ''));
      for (const s of statuses) seen.add(s);
      if (statuses.length > 0 && statuses.every((s) => s === 'completed' || s === 'skipped')) break;
      if (Date.now() > deadline) throw new Error(`stages still ${statuses.join(',')}`);
      await page.waitForTimeout(300);
    }
    t.true(seen.has('running') || seen.has('pending'), [...seen].join(','));
    await page.getByRole('heading', { name: /Audit completed/ }).waitFor();
    await page.getByRole('link', { name: 'Open the architecture explorer' }).waitFor();
    await accessible(t, page, 'audit');
    await screenshot(page, 'audit');
    clean(t, watch, 'audit');
  } finally {
    await context.close();
  }
});

test.serial('open the graph, click an edge: cited lines and a verified hash', async (t) => {
  const audits = await call(
    base,
    'GET',
    `/v1/workspaces/${demo.workspaceId}/audits?repository_id=${demo.repositoryId}&status=completed`,
    {
      token: demo.token,
    },
  );
  const auditId = audits.body.items[0].id as string;
  const truth = await call(
    base,
    'GET',
    `/v1/workspaces/${demo.workspaceId}/audits/${auditId}/architecture`,
    {
      token: demo.token,
    },
  );
  const edge = truth.body.relationships.find((r: any) => r.evidence_ids.length > 0);
  const evidence = truth.body.evidence.find((e: any) => e.id === edge.evidence_ids[0]);
  const file = fs.readFileSync(path.join(h.dir, 'demo-repo', evidence.location.path), 'utf8');
  const { context, page, watch } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    await page.goto(`${base}${ws()}/a/${auditId}/graph`);
    await page.locator('.graph[data-ready=true] .react-flow__edge').first().waitFor();
    // A click on the edge (dispatched on it: under the zoom another edge may cross its middle).
    await page.locator(`[data-testid="rf__edge-${edge.canonical_key}"]`).dispatchEvent('click');
    await page
      .getByRole('heading', { name: `${edge.kind}: ${edge.source_key} → ${edge.target_key}` })
      .waitFor();
    const item = page.locator('.evidence').first();
    await item.waitFor();
    t.is(await item.getAttribute('data-verification'), 'verified');
    await t.notThrowsAsync(item.getByText(evidence.content_sha256).waitFor());
    const first = file.split('\n')[evidence.location.start_line - 1]!;
    const shown = await item.locator('.cited-line').first().textContent();
    t.is(shown, `${evidence.location.start_line}${first}\n`);
    t.is(await item.locator('.path').textContent(), evidence.location.path);
    await accessible(t, page, 'explorer');
    await screenshot(page, 'explorer');
    // By keyboard: an edge takes the focus and Enter opens its evidence.
    const other = truth.body.relationships.find(
      (r: any) => r.canonical_key !== edge.canonical_key && r.evidence_ids.length > 0,
    );
    await page.locator(`[data-testid="rf__edge-${other.canonical_key}"]`).focus();
    await page.keyboard.press('Enter');
    await page
      .getByRole('heading', { name: `${other.kind}: ${other.source_key} → ${other.target_key}` })
      .waitFor();
    clean(t, watch, 'explorer');
  } finally {
    await context.close();
  }
});

test.serial('member A proposes a decision, member B approves it', async (t) => {
  const alice = await person(browser, base);
  const bob = await person(browser, base);
  const title = `Keep the cart behind the API ${Date.now()}`;
  try {
    const a = alice.page;
    await signIn(a, base, 'demo', PASSWORD);
    await a.goto(`${base}${ws()}/decisions`);
    await a.getByText('Propose a decision').click();
    await a.getByLabel('Repository').selectOption({ label: 'demo' });
    const rel = a.getByLabel('Evidence: the relationship it is about');
    await rel.locator('option').nth(1).waitFor({ state: 'attached' });
    await rel.selectOption({ index: 1 });
    await a.getByLabel('Title').fill(title);
    await a.getByLabel('Question').fill('Should this dependency stay?');
    await a.getByLabel('Context').fill('The audit found it with evidence.');
    await a.getByLabel('Option A').fill('Keep it');
    await a.getByLabel('Option B').fill('Remove it');
    await a.getByRole('button', { name: 'Propose' }).click();
    const card = a.locator('article.card', { hasText: title });
    await card.waitFor();
    await card.getByLabel('Rationale').fill('Ready for review.');
    await card.getByRole('button', { name: 'Submit for review' }).click();
    await a.locator('#col-in_review').locator('..').getByText(title).waitFor();
    // The proposer cannot approve their own decision: no Approve button on their card.
    t.is(
      await a
        .locator('article.card', { hasText: title })
        .getByRole('button', { name: 'Approve' })
        .count(),
      0,
    );
    await accessible(t, a, 'decisions');
    await screenshot(a, 'decisions');

    const b = bob.page;
    await signIn(b, base, 'bob', PASSWORD);
    // Bob's home says what waits for him.
    await b.getByRole('link', { name: title }).waitFor();
    await b.goto(`${base}${ws()}/decisions`);
    const theirs = b.locator('article.card', { hasText: title });
    await theirs.getByLabel('Rationale').fill('Evidence is clear; keep it.');
    await theirs.getByRole('button', { name: 'Approve' }).click();
    await b.locator('#col-approved').locator('..').getByText(title).waitFor({ timeout: 30_000 });
    const list = await call(base, 'GET', `/v1/workspaces/${demo.workspaceId}/decisions`, {
      token: demo.token,
    });
    const decided = list.body.items.find((d: any) => d.title === title);
    t.is(decided.status, 'approved');
    clean(t, alice.watch, 'decisions (A)');
    clean(t, bob.watch, 'decisions (B)');
  } finally {
    await alice.context.close();
    await bob.context.close();
  }
});

test.serial('resolve an uncertainty case', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    await page.goto(`${base}${ws()}/uncertainty`);
    const card = page.locator('article.card', { hasText: 'ambiguous identity' }).first();
    await card.waitFor();
    await accessible(t, page, 'uncertainty');
    const id = await card.getAttribute('id');
    await card.getByLabel('Resolution summary').fill('Two services on purpose: web and worker.');
    await card.getByRole('button', { name: 'Resolve' }).click();
    await page.locator(`[id="${id}"]`).getByText('Resolution: Two services on purpose').waitFor();
    const reply = await call(
      base,
      'GET',
      `/v1/workspaces/${demo.workspaceId}/uncertainty-cases/${id}`,
      {
        token: demo.token,
      },
    );
    t.is(reply.body.state, 'resolved');
    await screenshot(page, 'uncertainty');
    clean(t, watch, 'uncertainty');
  } finally {
    await context.close();
  }
});

test.serial('create a token and see its secret once', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByLabel('Name').fill('ci reader');
    await page.getByLabel(/^repositories:read/).check();
    await accessible(t, page, 'tokens');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.locator('.token-secret').textContent())!;
    t.regex(secret, /^aat_/);
    const used = await call(base, 'GET', '/v1/workspaces', { token: secret });
    t.is(used.status, 200);
    await screenshot(page, 'tokens');
    await page.reload();
    await page.getByRole('cell', { name: 'ci reader' }).waitFor();
    t.false((await page.content()).includes(secret), 'the secret is never shown again');
    clean(t, watch, 'tokens');
  } finally {
    await context.close();
  }
});

test.serial('the public demo without signing in: browsable, no write control', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await page.goto(`${base}/app/demo`);
    await page.waitForURL(new RegExp(`${ws()}$`));
    await page.getByText('Public demo · read-only').waitFor();
    await page.getByRole('table').getByRole('link', { name: 'demo', exact: true }).click();
    await page.getByRole('heading', { name: 'demo', level: 1 }).waitFor();
    await page.getByRole('table').waitFor();
    for (const where of ['', '/decisions', '/uncertainty']) {
      if (where) await page.goto(`${base}${ws()}${where}`);
      await page.locator('h1').waitFor();
      await page.waitForLoadState('networkidle');
      t.is(await page.locator('form, textarea').count(), 0, `no form on ${where || 'repository'}`);
      for (const name of [
        'Start an audit',
        'Propose',
        'Approve',
        'Resolve',
        'Create token',
        'Revoke',
      ])
        t.is(await page.getByRole('button', { name }).count(), 0, `${name} on ${where}`);
    }
    t.is(await page.getByRole('link', { name: 'Tokens' }).count(), 0);
    await accessible(t, page, 'public demo');
    // And a write from the page is refused by the API (no credential).
    const status = await page.evaluate(
      `fetch('/v1/workspaces/${demo.workspaceId}/repositories', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x', url: 'https://git.example.com/x.git' }) }).then((r) => r.status)`,
    );
    t.is(status, 401);
    clean(t, watch, 'public demo');
  } finally {
    await context.close();
  }
});

test.serial('a write without the CSRF header is refused', async (t) => {
  const { context, page } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    const reply = (await page.evaluate(
      `fetch('/v1/workspaces/${demo.workspaceId}/repositories', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'no-csrf', url: 'https://git.example.com/no-csrf.git' }) }).then(async (r) => ({ status: r.status, type: r.headers.get('content-type'), body: await r.json() }))`,
    )) as { status: number; type: string; body: { code: string } };
    t.is(reply.status, 403);
    t.regex(reply.type, /^application\/problem\+json/);
    t.is(reply.body.code, 'csrf_token_missing');
    const repos = await call(base, 'GET', `/v1/workspaces/${demo.workspaceId}/repositories`, {
      token: demo.token,
    });
    t.false(repos.body.items.some((r: any) => r.name === 'no-csrf'));
  } finally {
    await context.close();
  }
});

test.serial('names carrying HTML and script render as text; nothing runs', async (t) => {
  const { context, page, watch } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    await page.goto(`${base}${ws()}/r/${hostileRepositoryId}`);
    await page.getByText(XSS_SCRIPT).first().waitFor();
    t.true((await page.locator('main').textContent())!.includes(`${XSS_IMG} ${XSS_SCRIPT}`));
    t.is(await page.locator('main img, main script').count(), 0);
    await page.goto(`${base}${ws()}/a/${hostileAuditId}/graph`);
    await page.locator('.graph[data-ready=true] .react-flow__node').first().waitFor();
    await page.getByText('Relationships as a list').click();
    await page.locator('.rel-list button').first().click();
    const cited = page.locator('.evidence .cited').first();
    await cited.waitFor();
    t.true(
      (await cited.textContent())!.includes('<'),
      'the cited compose lines show their markup as text',
    );
    t.is(await page.locator('main img, main script').count(), 0);
    await page.goto(`${base}${ws()}/uncertainty`);
    await page.locator('article.card').first().waitFor();
    t.is(await page.locator('main img, main script').count(), 0);
    t.is(await pwned(page), undefined);
    await screenshot(page, 'hostile');
    clean(t, watch, 'hostile names');
  } finally {
    await context.close();
  }
});
