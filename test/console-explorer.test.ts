/**
 * The architecture explorer in a real browser (Debian's Chromium through playwright-core)
 * against the real stack: a repository audited twice (a compose service removed, one added, one
 * changed between the two commits), then in the explorer: the upstream and downstream paths of a
 * selected entity lit and the rest dimmed, by mouse and by keyboard; the two snapshots compared
 * (added, removed and changed drawn differently, a legend with symbols and counts); the cited
 * lines of an edge's evidence syntax-highlighted and still the file's text; ELK's layout made in
 * a Web Worker under the console's CSP. axe-core (no serious or critical violation) at 1280 and
 * 390 px. UPDATE_SCREENSHOTS=1 writes docs/console/explorer-*.png.
 */
import path from 'node:path';
import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { startAuditHarness, runAudit, type AuditHarness } from './helpers/audit-harness';
import { LOCAL_TEST_WORKSPACES } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { accessible, clean, launch, person, screenshot, signIn } from './helpers/console-browser';
import { ensureDemo, type Demo } from '../platform/bootstrap';
import { ensureDemoRepo } from '../platform/demo-repo';
import { setPasswordHash } from '../db/sessions';
import { hashPassword } from '../domain/sessions/password';

const PASSWORD = 'console explorer password';

const COMPOSE_1 = `services:
  web:
    build: ./web
    depends_on: [api]
  api:
    build: ./api
    depends_on: [db, cache]
    environment:
      DATABASE_URL: postgres://db:5432/shop
  db:
    image: postgres:16
  cache:
    image: redis:7
`;
// The second commit: cache gone, a queue added, db on another image.
const COMPOSE_2 = `services:
  web:
    build: ./web
    depends_on: [api]
  api:
    build: ./api
    depends_on: [db, queue]
    environment:
      DATABASE_URL: postgres://db:5432/shop
  db:
    image: postgres:17
  queue:
    image: rabbitmq:3
`;

let h: AuditHarness;
let browser: Browser;
let demo: Demo;
let repo: TestRepo;
let repositoryId: string;
let first: string;
let second: string;
let base: string;

interface Truth {
  entities: Array<{ canonical_key: string; name: string; kind: string }>;
  relationships: Array<{
    canonical_key: string;
    source_key: string;
    target_key: string;
    kind: string;
    evidence_ids: string[];
  }>;
  evidence: Array<{ id: string; location: { path: string; start_line: number } | null }>;
}

test.before(async () => {
  h = await startAuditHarness({
    config: { localRepositoryWorkspaces: [LOCAL_TEST_WORKSPACES, 'demo'] },
  });
  base = h.app.url;
  const db = h.app.services.db;
  demo = await ensureDemo(db, h.dir, ensureDemoRepo(path.join(h.dir, 'demo-repo')));
  await setPasswordHash(db, 'demo', await hashPassword(PASSWORD));
  repo = createRepo({
    'web/package.json': JSON.stringify({ name: 'web', private: true }),
    'web/Dockerfile': 'FROM node:20\nCOPY . .\n',
    'api/package.json': JSON.stringify({ name: 'api', private: true }),
    'api/Dockerfile': 'FROM node:20\nCOPY . .\n',
    'docker-compose.yml': COMPOSE_1,
  });
  const created = await call(base, 'POST', `/v1/workspaces/${demo.workspaceId}/repositories`, {
    token: demo.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  if (created.status !== 201) throw new Error(created.text);
  repositoryId = created.body.id;
  const one = await runAudit(base, demo.token, demo.workspaceId, { repository_id: repositoryId });
  if (one.status !== 'completed') throw new Error(`first audit ${one.status}`);
  first = one.id;
  repo.commit({ 'docker-compose.yml': COMPOSE_2 }, 'queue instead of cache');
  const two = await runAudit(base, demo.token, demo.workspaceId, { repository_id: repositoryId });
  if (two.status !== 'completed') throw new Error(`second audit ${two.status}`);
  second = two.id;
  browser = await launch();
});

test.after.always(async () => {
  await browser?.close();
  await h?.close();
  repo?.remove();
});

async function truthOf(audit: string): Promise<Truth> {
  const r = await call(
    base,
    'GET',
    `/v1/workspaces/${demo.workspaceId}/audits/${audit}/architecture`,
    { token: demo.token },
  );
  if (r.status !== 200) throw new Error(r.text);
  return r.body;
}

/** What the reader sees: the ids of the graph's nodes (or edges) that carry a class. */
async function idsWith(page: Page, what: 'node' | 'edge', cls: string): Promise<string[]> {
  const ids = await page
    .locator(`.react-flow__${what}.${cls}`)
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid') ?? ''));
  return ids.map((id) => id.replace(/^rf__(node|edge)-/, '')).sort();
}

/** Everything reachable from `root` along the relationships (or against them). */
function walk(truth: Truth, root: string, direction: 'down' | 'up'): string[] {
  const seen = new Set<string>();
  const queue = [root];
  while (queue.length) {
    const at = queue.shift()!;
    for (const r of truth.relationships) {
      const [from, to] =
        direction === 'down' ? [r.source_key, r.target_key] : [r.target_key, r.source_key];
      if (from === at && to !== root && !seen.has(to)) {
        seen.add(to);
        queue.push(to);
      }
    }
  }
  return [...seen].sort();
}

async function openGraph(page: Page, audit: string) {
  await page.goto(`${base}/app/w/${demo.workspaceId}/a/${audit}/graph`);
  await page.locator('.graph[data-ready=true] .react-flow__node').first().waitFor();
}

test.serial(
  'a selected entity lights its upstream and downstream paths; keyboard too',
  async (t) => {
    const truth = await truthOf(second);
    // The entity with the most relationships on both sides (the api service).
    const score = (k: string) =>
      Math.min(walk(truth, k, 'up').length, 1) * 100 + walk(truth, k, 'down').length;
    const root = [...truth.entities].sort(
      (a, b) => score(b.canonical_key) - score(a.canonical_key),
    )[0]!;
    const down = walk(truth, root.canonical_key, 'down');
    const up = walk(truth, root.canonical_key, 'up');
    t.true(down.length > 0, 'the chosen entity has something downstream');
    const { context, page, watch } = await person(browser, base);
    try {
      await signIn(page, base, 'demo', PASSWORD);
      await openGraph(page, second);
      // The worker's layout replaces the quick one: the worker ran under the CSP.
      await page.locator('.graph[data-layout=final]').waitFor({ timeout: 30_000 });
      await page.locator(`[data-testid="rf__node-${root.canonical_key}"]`).click();
      await page.getByRole('heading', { name: root.name, level: 2 }).waitFor();
      t.deepEqual(await idsWith(page, 'node', 'path-down'), down);
      t.deepEqual(await idsWith(page, 'node', 'path-up'), up);
      const others = truth.entities
        .map((e) => e.canonical_key)
        .filter((k) => k !== root.canonical_key && !down.includes(k) && !up.includes(k))
        .sort();
      // The others are dimmed (a muted grey, its text still legible), the paths are not.
      const look = (key: string) =>
        page
          .locator(`[data-testid="rf__node-${key}"]`)
          .evaluate((el) => getComputedStyle(el).backgroundColor);
      for (const k of others) t.is(await look(k), 'rgb(244, 245, 247)', `${k} dimmed`);
      for (const k of [...down, ...up]) t.not(await look(k), 'rgb(244, 245, 247)', `${k} lit`);
      const legend = page.getByRole('list', { name: 'Paths legend' });
      await t.notThrowsAsync(legend.getByText(`downstream: ${down.length}`).waitFor());
      await t.notThrowsAsync(legend.getByText(`upstream: ${up.length}`).waitFor());
      // The panel lists the downstream entities; a button there walks the path by keyboard.
      const downstream = page.getByRole('region', { name: 'Downstream' });
      const next = truth.entities.find((e) => e.canonical_key === down[0])!;
      await downstream.getByRole('button', { name: next.name, exact: true }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: next.name, level: 2 }).waitFor();
      t.deepEqual(await idsWith(page, 'node', 'path-root'), [next.canonical_key]);
      t.deepEqual(await idsWith(page, 'node', 'path-up'), walk(truth, next.canonical_key, 'up'));
      await accessible(t, page, 'explorer with paths');
      await screenshot(page, 'explorer-paths');
      // Escape clears the selection: nothing is dimmed any more.
      await page.keyboard.press('Escape');
      await page.getByText('Select an entity or a relationship').waitFor();
      await page.locator('.graph[data-paths=false]').waitFor();
      if (others[0]) t.not(await look(others[0]), 'rgb(244, 245, 247)');
      // A node takes the focus and Enter selects it. Escape's re-render can land after the
      // focus call and take the focus back, so Enter is pressed only once the node holds it
      // (and the pair is tried again if a late re-render took it in between).
      const rootNode = page.locator(`[data-testid="rf__node-${root.canonical_key}"]`);
      const rootHeading = page.getByRole('heading', { name: root.name, level: 2 });
      for (let attempt = 1; ; attempt++) {
        await rootNode.focus();
        await page.waitForFunction(
          (id) => document.activeElement?.getAttribute('data-testid') === id,
          `rf__node-${root.canonical_key}`,
        );
        await page.keyboard.press('Enter');
        try {
          await rootHeading.waitFor({ timeout: 5_000 });
          break;
        } catch (err) {
          if (attempt === 3) throw err;
        }
      }
      t.deepEqual(await idsWith(page, 'node', 'path-down'), down);
      // "Highlight paths" off: nothing dimmed, the panel still lists them.
      await page.getByRole('checkbox', { name: 'Highlight paths' }).uncheck();
      await page.locator('.graph[data-paths=false]').waitFor();
      t.deepEqual(await idsWith(page, 'node', 'path-down'), []);
      await downstream.getByRole('button', { name: next.name, exact: true }).waitFor();
      await page.setViewportSize({ width: 390, height: 844 });
      await accessible(t, page, 'explorer with paths at 390 px');
      clean(t, watch, 'explorer paths');
    } finally {
      await context.close();
    }
  },
);

test.serial(
  'two snapshots compared: added, removed and changed drawn apart, with a legend',
  async (t) => {
    const snapshots = await call(
      base,
      'GET',
      `/v1/workspaces/${demo.workspaceId}/repositories/${repositoryId}/architecture/snapshots`,
      { token: demo.token },
    );
    const snap = (audit: string) =>
      snapshots.body.items.find((s: { audit_id: string }) => s.audit_id === audit).id as string;
    const changes = await call(
      base,
      'GET',
      `/v1/workspaces/${demo.workspaceId}/repositories/${repositoryId}/architecture/changes?from_snapshot_id=${snap(first)}&to_snapshot_id=${snap(second)}`,
      { token: demo.token },
    );
    t.is(changes.status, 200, changes.text);
    const keysOf = (type: string) =>
      (changes.body.changes as Array<{ change_type: string; key: string }>)
        .filter((c) => c.change_type === type)
        .map((c) => c.key)
        .sort();
    const added = keysOf('entity_added');
    const removed = keysOf('entity_removed');
    const changed = keysOf('entity_changed');
    t.true(added.length > 0 && removed.length > 0 && changed.length > 0, changes.text);
    const old = await truthOf(first);
    const { context, page, watch } = await person(browser, base);
    try {
      await signIn(page, base, 'demo', PASSWORD);
      await openGraph(page, second);
      await page.getByRole('combobox', { name: 'Compare with' }).selectOption(snap(first));
      await page.locator('.graph[data-comparing=true]').waitFor();
      t.deepEqual(await idsWith(page, 'node', 'diff-added'), added);
      t.deepEqual(await idsWith(page, 'node', 'diff-removed'), removed);
      t.deepEqual(await idsWith(page, 'node', 'diff-changed'), changed);
      t.deepEqual(
        await idsWith(page, 'edge', 'diff-added'),
        keysOf('relationship_added'),
        'added relationships',
      );
      t.deepEqual(
        await idsWith(page, 'edge', 'diff-removed'),
        keysOf('relationship_removed'),
        'removed relationships',
      );
      // Not by colour alone: a symbol in the label and a legend with words and counts.
      const gone = old.entities.find((e) => e.canonical_key === removed[0])!;
      const node = page.locator(`[data-testid="rf__node-${gone.canonical_key}"]`);
      t.is((await node.textContent())?.trim(), `− ${gone.name} · ${gone.kind}`);
      t.regex((await node.getAttribute('aria-label')) ?? '', /removed/);
      const legend = page.getByRole('list', { name: 'Comparison legend' });
      for (const [word, n] of [
        ['added', added.length + keysOf('relationship_added').length],
        ['removed', removed.length + keysOf('relationship_removed').length],
        ['changed', changed.length + keysOf('relationship_changed').length],
      ] as const)
        await t.notThrowsAsync(legend.getByText(new RegExp(`^. ${word}.*: ${n}$`)).waitFor());
      // A removed entity opens from the other snapshot, and says so.
      await node.click();
      await page.getByRole('heading', { name: gone.name, level: 2 }).waitFor();
      await t.notThrowsAsync(page.locator('.panel .diff-note.diff-removed').waitFor());
      // Its history across the snapshots (getEntityHistory): removed now, added before.
      const history = page.getByRole('region', { name: 'History' });
      await history.locator('li[data-change=removed]').waitFor();
      t.deepEqual(
        await history
          .locator('li')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-change'))),
        ['removed', 'added'],
      );
      await t.notThrowsAsync(history.getByText('this snapshot').waitFor());
      // A removed relationship's evidence is read from the audit that saw it, and still verifies.
      const edgeKey = keysOf('relationship_removed')[0];
      const edge = old.relationships.find(
        (r) => r.canonical_key === edgeKey && r.evidence_ids.length > 0,
      );
      if (edge) {
        await page.locator(`[data-testid="rf__edge-${edge.canonical_key}"]`).dispatchEvent('click');
        const item = page.locator('.evidence').first();
        await item.waitFor();
        t.is(await item.getAttribute('data-verification'), 'verified');
      }
      await accessible(t, page, 'explorer comparing');
      await screenshot(page, 'explorer-compare');
      await page.setViewportSize({ width: 390, height: 844 });
      await accessible(t, page, 'explorer comparing at 390 px');
      await screenshot(page, 'explorer-compare-390');
      clean(t, watch, 'explorer comparison');
    } finally {
      await context.close();
    }
  },
);

test.serial(
  'the cited lines of an edge are syntax-highlighted and still the file text',
  async (t) => {
    const truth = await truthOf(second);
    const edge = truth.relationships.find((r) =>
      r.evidence_ids.some((id) =>
        truth.evidence.find((e) => e.id === id)?.location?.path.endsWith('.yml'),
      ),
    );
    t.truthy(edge, 'an edge cites the compose file');
    const evidence = truth.evidence.find(
      (e) => edge!.evidence_ids.includes(e.id) && e.location?.path.endsWith('.yml'),
    )!;
    const line = COMPOSE_2.split('\n')[evidence.location!.start_line - 1]!;
    const { context, page, watch } = await person(browser, base);
    try {
      await signIn(page, base, 'demo', PASSWORD);
      await openGraph(page, second);
      await page.locator(`[data-testid="rf__edge-${edge!.canonical_key}"]`).dispatchEvent('click');
      const item = page
        .locator('.evidence', { has: page.getByText(evidence.location!.path) })
        .first();
      const cited = item.locator('.cited[data-highlighted=true]');
      await cited.waitFor();
      // Highlighted: highlight.js's classes on parts of the YAML; the text is the file's.
      t.true((await cited.locator('span[class^="hljs-"]').count()) > 0);
      t.is(
        await cited.locator('.cited-line').first().textContent(),
        `${evidence.location!.start_line}${line}\n`,
      );
      await accessible(t, page, 'explorer with highlighted evidence');
      await screenshot(page, 'explorer-evidence');
      clean(t, watch, 'explorer evidence');
    } finally {
      await context.close();
    }
  },
);

test.serial('an entity lists its findings and the decisions about it, each a link', async (t) => {
  const truth = await truthOf(second);
  const findings = await call(
    base,
    'GET',
    `/v1/workspaces/${demo.workspaceId}/audits/${second}/findings?limit=200`,
    { token: demo.token },
  );
  t.is(findings.status, 200);
  const withEntity = (
    findings.body.items as Array<{ id: string; title: string; entity_key: string | null }>
  ).filter((f) => f.entity_key && truth.entities.some((e) => e.canonical_key === f.entity_key));
  // The entity with a finding (else the one with the most relationships), and one decision
  // naming it, one naming a relationship of it, one about something else.
  const touching = (k: string) =>
    truth.relationships.filter((r) => r.source_key === k || r.target_key === k);
  const root =
    truth.entities.find((e) => e.canonical_key === withEntity[0]?.entity_key) ??
    [...truth.entities].sort(
      (a, b) => touching(b.canonical_key).length - touching(a.canonical_key).length,
    )[0]!;
  const rel = touching(root.canonical_key)[0]!;
  const unrelated = truth.entities.find(
    (e) =>
      e.canonical_key !== root.canonical_key &&
      !touching(root.canonical_key).some(
        (r) => r.source_key === e.canonical_key || r.target_key === e.canonical_key,
      ),
  )!;
  const snapshots = await call(
    base,
    'GET',
    `/v1/workspaces/${demo.workspaceId}/repositories/${repositoryId}/architecture/snapshots`,
    { token: demo.token },
  );
  const snapshotId = (snapshots.body.items as Array<{ id: string; audit_id: string }>).find(
    (s) => s.audit_id === second,
  )!.id;
  const caller = await call(base, 'GET', '/v1/caller', { token: demo.token });
  const propose = async (title: string, over: Record<string, unknown>) => {
    const r = await call(base, 'POST', `/v1/workspaces/${demo.workspaceId}/decisions`, {
      token: demo.token,
      body: {
        title,
        question: 'What should this part of the system become?',
        context: 'Seen in the explorer.',
        snapshot_id: snapshotId,
        owner_id: caller.body.member_id,
        options: [
          { id: 'keep', title: 'Keep', description: 'Keep it as it is.' },
          { id: 'change', title: 'Change', description: 'Change it.' },
        ],
        evidence_ids: [rel.evidence_ids[0]],
        uncertainties: [],
        success_criteria: [
          {
            id: 'present',
            description: 'Still present',
            check: { kind: 'entity_present', key: root.canonical_key },
          },
        ],
        ...over,
      },
    });
    if (r.status !== 201) throw new Error(r.text);
    return r.body as { id: string };
  };
  const byEntity = await propose(`Decide about <b>${root.name}</b>`, {
    affected_entity_keys: [root.canonical_key],
  });
  await propose('Decide about its relationship', {
    affected_relationship_keys: [rel.canonical_key],
  });
  await propose('Decide about something else', {
    affected_entity_keys: [unrelated.canonical_key],
  });
  const { context, page, watch } = await person(browser, base);
  try {
    await signIn(page, base, 'demo', PASSWORD);
    await openGraph(page, second);
    await page.locator(`[data-testid="rf__node-${root.canonical_key}"]`).click();
    await page.getByRole('heading', { name: root.name, level: 2 }).waitFor();
    const decisions = page.getByRole('region', { name: 'Decisions' });
    await decisions.getByRole('heading', { name: 'Decisions (2)' }).waitFor();
    t.deepEqual(
      (await decisions.getByRole('link').allTextContents()).sort(),
      [`Decide about <b>${root.name}</b>`, 'Decide about its relationship'].sort(),
    );
    const listed = page.getByRole('region', { name: 'Findings' });
    const mine = withEntity.filter((f) => f.entity_key === root.canonical_key);
    t.true(mine.length > 0, 'the audit raised a finding about the entity');
    await listed.getByRole('heading', { name: `Findings (${mine.length})` }).waitFor();
    t.deepEqual(
      (await listed.getByRole('link').allTextContents()).sort(),
      mine.map((f) => f.title).sort(),
    );
    for (const f of mine)
      t.is(
        await listed.getByRole('link', { name: f.title, exact: true }).first().getAttribute('href'),
        `/app/w/${demo.workspaceId}/findings#${f.id}`,
      );
    await accessible(t, page, 'explorer entity with findings and decisions');
    // A finding's link opens the findings page on its card (every status shown), focused.
    await listed.getByRole('link', { name: mine[0]!.title, exact: true }).first().click();
    await page.getByRole('heading', { name: 'Findings', level: 1 }).waitFor();
    await page.waitForFunction((id) => document.activeElement?.id === id, mine[0]!.id);
    t.is(await page.getByLabel('Status').inputValue(), 'all');
    await openGraph(page, second);
    await page.locator(`[data-testid="rf__node-${root.canonical_key}"]`).click();
    await decisions.getByRole('heading', { name: 'Decisions (2)' }).waitFor();
    // The decision's link opens the decisions page on its card.
    await decisions.getByRole('link', { name: `Decide about <b>${root.name}</b>` }).click();
    await page.getByRole('heading', { name: 'Decisions', level: 1 }).waitFor();
    t.is(new URL(page.url()).hash, `#${byEntity.id}`);
    await page.locator(`article[id="${byEntity.id}"]`).waitFor();
    await page.waitForFunction((id) => document.activeElement?.id === id, byEntity.id);
    clean(t, watch, 'explorer linked findings and decisions');
  } finally {
    await context.close();
  }
});
