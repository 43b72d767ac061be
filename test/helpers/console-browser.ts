/**
 * Driving the console in a real browser: Debian's Chromium through playwright-core, one
 * context per person; every page is watched for script errors, CSP violations and dialogs (a
 * dialog would mean an injected script ran), and checked with axe-core.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS as ARGS } from './chromium';
import { startAuditHarness, type AuditHarness } from './audit-harness';
import { LOCAL_TEST_WORKSPACES } from './factories';
import { ensureDemo, type Demo } from '../../platform/bootstrap';
import { ensureDemoRepo } from '../../platform/demo-repo';
import { setPasswordHash } from '../../db/sessions';
import { addMember } from '../../db/workspaces';
import { hashPassword } from '../../domain/sessions/password';

const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'console');

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

/** What went wrong on a page: script errors, CSP refusals, dialogs, requests to other origins. */
export interface Watch {
  errors: string[];
  dialogs: string[];
  foreign: string[];
}

export async function person(
  browser: Browser,
  origin: string,
  viewport = { width: 1280, height: 900 },
): Promise<{ context: BrowserContext; page: Page; watch: Watch }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const watch: Watch = { errors: [], dialogs: [], foreign: [] };
  page.on('pageerror', (err) => watch.errors.push(err.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) watch.errors.push(m.text());
  });
  page.on('dialog', (d) => {
    watch.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) watch.foreign.push(r.url());
  });
  return { context, page, watch };
}

/** Signs in through the existing sign-in page, starting from the console; lands on /app/. */
export async function signIn(page: Page, origin: string, login: string, password: string) {
  await page.goto(`${origin}/app/`);
  await page.getByRole('link', { name: 'Sign in' }).first().click();
  await page.waitForURL(/\/session\/sign-in/);
  await page.fill('#login', login);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/app\/$/);
  // The shell shows the member once /v1/caller answered.
  await page.getByRole('banner').getByRole('link', { name: login, exact: true }).waitFor();
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function accessible(t: ExecutionContext, page: Page, what: string) {
  // Evaluated through the DevTools protocol, not as a page script: the page's CSP stays on.
  await page.evaluate(AXE);
  const result = (await page.evaluate(`axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
  })`)) as { violations: Array<{ id: string; impact: string; help: string; nodes: unknown[] }> };
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  t.deepEqual(
    bad.map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} ×${v.nodes.length} ${JSON.stringify(v.nodes.map((n) => (n as { target: unknown }).target))}`,
    ),
    [],
    `axe on ${what}`,
  );
}

/** Nothing went wrong on the pages of this person. */
export function clean(t: ExecutionContext, watch: Watch, what: string) {
  t.deepEqual(watch.errors, [], `script errors or CSP refusals on ${what}`);
  t.deepEqual(watch.dialogs, [], `dialogs on ${what}`);
  t.deepEqual(watch.foreign, [], `requests to other origins on ${what}`);
}

/** With UPDATE_SCREENSHOTS=1, writes docs/console/<name>.png (the README shows them). */
export async function screenshot(page: Page, name: string) {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: false });
}

/**
 * The stack the console tests sign in to: an audit harness serving the public demo (repositories
 * on disk allowed for the tests' and the demo's workspaces), the demo workspace with the `demo`
 * owner's password set, and Bob, an admin who may approve what the demo member proposes.
 */
export async function startConsoleDemo(password: string): Promise<{
  h: AuditHarness;
  demo: Demo;
}> {
  const h = await startAuditHarness({
    config: {
      demoPublicRead: true,
      localRepositoryWorkspaces: [LOCAL_TEST_WORKSPACES, 'demo'],
    },
  });
  const db = h.app.services.db;
  const demo = await ensureDemo(db, h.dir, ensureDemoRepo(path.join(h.dir, 'demo-repo')));
  await setPasswordHash(db, 'demo', await hashPassword(password));
  await addMember(db, { workspaceId: demo.workspaceId, login: 'bob', role: 'admin' });
  await setPasswordHash(db, 'bob', await hashPassword(password));
  return { h, demo };
}
