/**
 * Architecture diagrams: Mermaid source and a dagre-laid-out SVG, pure and deterministic, and
 * served for an audit's snapshot by getAuditArchitectureDiagram.
 */
import test from 'ava';
import { mermaid, mermaidLabel, svg, type DiagramGraph } from '../analysis/diagram';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';

const entity = (canonical_key: string, name?: string) => ({
  canonical_key,
  kind: canonical_key.slice(0, canonical_key.indexOf(':')),
  name: name ?? canonical_key.slice(canonical_key.indexOf(':') + 1),
});
const rel = (kind: string, source_key: string, target_key: string) => ({
  canonical_key: `${kind}:${source_key}->${target_key}`,
  source_key,
  target_key,
  kind,
});

const SHOP: DiagramGraph = {
  entities: [
    entity('service:api'),
    entity('service:worker'),
    entity('datastore:db', 'db "main" [primary] <pg> #1'),
    entity('queue:jobs'),
    entity('bucket:uploads'),
    entity('external:stripe', 'api.stripe.com'),
    entity('pipeline:github-actions/ci'),
  ],
  relationships: [
    rel('connects_to', 'service:api', 'datastore:db'),
    rel('publishes_to', 'service:api', 'queue:jobs'),
    rel('consumes', 'service:worker', 'queue:jobs'),
    rel('writes_to', 'service:worker', 'bucket:uploads'),
    rel('calls', 'service:api', 'external:stripe'),
    rel('deploys', 'pipeline:github-actions/ci', 'service:api'),
  ],
};

/** The node lines of a Mermaid flowchart: `id<shape>` keyed by node id. */
function mermaidNodes(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s+(n\d+)(\S.*)$/.exec(line);
    if (m && !line.includes('-->')) out.set(m[1]!, m[2]!);
  }
  return out;
}

interface Rect {
  key: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

function viewBox(doc: string) {
  const m = /<svg [^>]*viewBox="([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"/.exec(doc);
  if (!m) throw new Error('no viewBox');
  const [x, y, width, height] = m.slice(1).map(Number) as [number, number, number, number];
  return { x, y, width, height };
}

function nodeRects(doc: string): Rect[] {
  const re =
    /<g class="node" data-key="([^"]*)"[^>]*>.*?<rect x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"/g;
  return [...doc.matchAll(re)].map((m) => ({
    key: m[1]!,
    x: Number(m[2]),
    y: Number(m[3]),
    width: Number(m[4]),
    height: Number(m[5]),
  }));
}

/** Every number in every edge path's `d`. */
function edgePaths(doc: string): number[][] {
  return [...doc.matchAll(/<path class="edge"[^>]* d="([^"]*)"/g)].map((m) =>
    (m[1]!.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number),
  );
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

function shuffled<T>(items: readonly T[]): T[] {
  // A fixed permutation (reverse, then odd/even interleave): no randomness in tests.
  const r = [...items].reverse();
  return [...r.filter((_, i) => i % 2 === 1), ...r.filter((_, i) => i % 2 === 0)];
}

test('mermaid: labels with quotes, brackets, <> and # are quoted and entity-coded', (t) => {
  const label = mermaidLabel('db "main" [primary] <pg> #1 (x) {y} |z| & `w`');
  t.is(
    label,
    '"db #quot;main#quot; #91;primary#93; #lt;pg#gt; #35;1 #40;x#41; #123;y#125; #124;z#124; #amp; #96;w#96;"',
  );
  t.is(mermaidLabel('a\nb\r\nc'), '"a b c"', 'line breaks cannot end a statement');
  const text = mermaid(SHOP);
  const db = mermaidNodes(text).get('n1');
  t.is(db, '[("db #quot;main#quot; #91;primary#93; #lt;pg#gt; #35;1")]');
  // Inside every label: no raw quote, bracket or angle bracket is left.
  for (const shape of mermaidNodes(text).values()) {
    const inner = /"(.*)"/.exec(shape)![1]!;
    t.notRegex(inner, /["[\]<>()]/, shape);
  }
});

test('mermaid: ids n0, n1... in sorted key order, whatever the input order', (t) => {
  const text = mermaid(SHOP);
  t.true(text.startsWith('flowchart LR\n'));
  const keys = SHOP.entities.map((e) => e.canonical_key).sort();
  const nodes = mermaidNodes(text);
  t.is(nodes.size, keys.length);
  // bucket:uploads, datastore:db, external:stripe, pipeline:..., queue:jobs, service:api, service:worker
  t.deepEqual(keys, [
    'bucket:uploads',
    'datastore:db',
    'external:stripe',
    'pipeline:github-actions/ci',
    'queue:jobs',
    'service:api',
    'service:worker',
  ]);
  t.is(nodes.get('n0'), '[/"uploads"/]');
  t.is(nodes.get('n5'), '["api"]');
  t.is(nodes.get('n6'), '["worker"]');
  t.true(text.includes('  n5 -->|"connects_to"| n1\n'));
  t.true(text.includes('  n3 -->|"deploys"| n5\n'));

  const reordered: DiagramGraph = {
    entities: shuffled(SHOP.entities),
    relationships: shuffled(SHOP.relationships),
  };
  t.is(mermaid(reordered), text);
  t.is(svg(reordered), svg(SHOP));
});

test('mermaid: shapes and subgraphs by kind', (t) => {
  const text = mermaid(SHOP);
  const nodes = mermaidNodes(text);
  t.regex(nodes.get('n1')!, /^\[\(".*"\)\]$/, 'datastore: cylinder');
  t.is(nodes.get('n4'), '>"jobs"]', 'queue: asymmetric');
  t.is(nodes.get('n2'), '(("api.stripe.com"))', 'external: circle');
  t.is(nodes.get('n3'), '{{"github-actions/ci"}}', 'pipeline: hexagon');
  t.is(nodes.get('n5'), '["api"]', 'service: box');
  for (const title of ['Services', 'Datastores', 'Queues', 'Buckets', 'External systems']) {
    t.true(text.includes(`["${title}"]`), title);
  }
  t.is(count(text, 'subgraph '), 6);
  t.is(count(text, '\n  end\n'), 6);
  t.is(count(text, ' -->|'), SHOP.relationships.length);
  // Services come first: the subgraph order follows the kind order, not the key order.
  t.true(text.indexOf('g_service') < text.indexOf('g_datastore'));
  t.true(text.includes('classDef k_datastore '));
  t.true(text.includes('class n5,n6 k_service'));
  // A kind with a name that is a property of every object is just another kind.
  const odd = mermaid({ entities: [entity('constructor:x')], relationships: [] });
  t.true(odd.includes('subgraph g_other0["constructor"]'));
  t.true(odd.includes('    n0["x"]'));
});

test('svg: every box placed by dagre, inside the viewBox, left to right along the edges', (t) => {
  const doc = svg(SHOP, { title: 'Shop <architecture>' });
  t.true(doc.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  t.true(doc.endsWith('</svg>'));
  t.true(doc.includes('<title>Shop &lt;architecture&gt;</title>'));
  t.is(count(doc, 'class="node"'), SHOP.entities.length);
  t.is(count(doc, '<path class="edge"'), SHOP.relationships.length);
  t.true(doc.includes('marker-end="url(#arrow)"'));
  t.true(doc.includes('>db &quot;main&quot; [primary] &lt;pg&gt; #1</text>'));
  t.false(doc.includes('<pg>'));

  const box = viewBox(doc);
  const rects = nodeRects(doc);
  t.is(rects.length, SHOP.entities.length);
  for (const r of rects) {
    t.true(r.width > 0 && r.height > 0, r.key);
    t.true(r.x >= box.x && r.x + r.width <= box.x + box.width, `${r.key} within x`);
    t.true(r.y >= box.y && r.y + r.height <= box.y + box.height, `${r.key} within y`);
  }
  t.true(new Set(rects.map((r) => `${r.x},${r.y}`)).size === rects.length, 'no two boxes share');
  // Boxes do not overlap.
  for (const a of rects)
    for (const b of rects) {
      if (a === b) continue;
      const apart =
        a.x + a.width <= b.x ||
        b.x + b.width <= a.x ||
        a.y + a.height <= b.y ||
        b.y + b.height <= a.y;
      t.true(apart, `${a.key} / ${b.key}`);
    }
  // Ranked left to right: every edge's source box is left of its target box.
  const at = new Map(rects.map((r) => [r.key, r]));
  for (const r of SHOP.relationships) {
    const s = at.get(r.source_key)!;
    const d = at.get(r.target_key)!;
    t.true(s.x + s.width <= d.x, r.canonical_key);
  }
  // Wider label, wider box (sizes come from the labels).
  t.true(at.get('datastore:db')!.width > at.get('service:api')!.width);
  // Edges follow dagre's points, within the canvas.
  for (const nums of edgePaths(doc)) {
    t.true(nums.length >= 4);
    for (const [i, n] of nums.entries()) {
      t.true(Number.isFinite(n));
      if (i % 2 === 0) t.true(n >= box.x && n <= box.x + box.width);
      else t.true(n >= box.y && n <= box.y + box.height);
    }
  }
});

test('svg: a cycle lays out; a self loop is drawn; output is stable', (t) => {
  const cyclic: DiagramGraph = {
    entities: [entity('service:a'), entity('service:b'), entity('service:c')],
    relationships: [
      rel('calls', 'service:a', 'service:b'),
      rel('calls', 'service:b', 'service:c'),
      rel('calls', 'service:c', 'service:a'),
      rel('retries', 'service:a', 'service:a'),
    ],
  };
  const doc = svg(cyclic);
  t.is(count(doc, 'class="node"'), 3);
  t.is(count(doc, '<path class="edge"'), 4);
  t.false(doc.includes('NaN'));
  const rects = nodeRects(doc);
  t.true(new Set(rects.map((r) => `${r.x},${r.y}`)).size === 3);
  const box = viewBox(doc);
  for (const nums of edgePaths(doc)) {
    for (const [i, n] of nums.entries()) {
      if (i % 2 === 0) t.true(n >= box.x && n <= box.x + box.width);
      else t.true(n >= box.y && n <= box.y + box.height);
    }
  }
  t.is(svg(cyclic), doc);
  t.true(mermaid(cyclic).includes('  n0 -->|"retries"| n0\n'));
});

test('relationships to unknown entities are left out; duplicate keys drawn once', (t) => {
  const graph: DiagramGraph = {
    entities: [entity('service:a'), entity('service:a'), entity('service:b')],
    relationships: [rel('calls', 'service:a', 'service:b'), rel('calls', 'service:a', 'gone:x')],
  };
  t.is(count(mermaid(graph), ' -->|'), 1);
  t.is(count(svg(graph), 'class="node"'), 2);
  t.is(count(svg(graph), '<path class="edge"'), 1);
});

test('an empty graph: a small valid SVG and a one-node flowchart saying so', (t) => {
  const empty = { entities: [], relationships: [] };
  const doc = svg(empty);
  t.true(doc.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  t.true(doc.endsWith('</svg>'));
  t.true(doc.includes('No entities'));
  t.regex(doc, /<title>[^<]+<\/title>/);
  t.is(count(doc, 'class="node"'), 0);
  t.is(mermaid(empty), 'flowchart LR\n  empty["No entities"]\n');
});

// ---------------------------------------------------------------------------------------------
// Through the API, on a real audit.

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let auditId: string;

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
  const created = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${tenant.workspaceId}/repositories`,
    { token: tenant.token, body: { name: 'shop', url: `file://${repo.dir}` } },
  );
  const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: created.body.id },
  });
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  if (done.body.status !== 'completed') throw new Error(JSON.stringify(done.body.stages));
  auditId = done.body.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const diagramPath = (query = '') => `${ws()}/audits/${auditId}/architecture/diagram${query}`;

async function truth() {
  const arch = await call(h.app.url, 'GET', `${ws()}/audits/${auditId}/architecture`, {
    token: tenant.token,
  });
  return arch.body as {
    entities: Array<{ canonical_key: string; name: string }>;
    relationships: unknown[];
  };
}

test('format=mermaid: the snapshot as Mermaid flowchart source', async (t) => {
  const { entities, relationships } = await truth();
  t.true(entities.length >= 3);
  const reply = await call(h.app.url, 'GET', diagramPath('?format=mermaid'), {
    token: tenant.token,
  });
  t.is(reply.status, 200, reply.text);
  t.regex(reply.headers.get('content-type') ?? '', /^text\/vnd\.mermaid; charset=utf-8$/);
  t.true(reply.text.startsWith('flowchart LR\n'));
  for (const e of entities) t.true(reply.text.includes(mermaidLabel(e.name)), e.canonical_key);
  t.true(reply.text.includes('[("db")]'), 'the datastore is a cylinder');
  t.is(count(reply.text, ' -->|'), relationships.length);

  const byDefault = await call(h.app.url, 'GET', diagramPath(), { token: tenant.token });
  t.is(byDefault.status, 200);
  t.is(byDefault.text, reply.text, 'mermaid is the default, and the same snapshot gives the same');
});

test('format=svg: a standalone SVG with one node per entity', async (t) => {
  const { entities, relationships } = await truth();
  const reply = await call(h.app.url, 'GET', diagramPath('?format=svg'), {
    token: tenant.token,
  });
  t.is(reply.status, 200, reply.text);
  t.regex(reply.headers.get('content-type') ?? '', /^image\/svg\+xml/);
  t.is(reply.headers.get('x-content-type-options'), 'nosniff');
  t.true(reply.text.startsWith('<svg'));
  t.true(reply.text.endsWith('</svg>'));
  t.is(count(reply.text, 'class="node"'), entities.length);
  t.is(count(reply.text, '<path class="edge"'), relationships.length);
  for (const e of entities) t.true(reply.text.includes(`data-key="${e.canonical_key}"`));
  t.true(reply.text.includes(`<title>Architecture of audit ${auditId}`));
  const again = await call(h.app.url, 'GET', diagramPath('?format=svg'), { token: tenant.token });
  t.is(again.text, reply.text);
});

test('format=png is 400; another workspace, an unknown audit, no scope: 404 / 403', async (t) => {
  const png = await call(h.app.url, 'GET', diagramPath('?format=png'), { token: tenant.token });
  t.is(png.status, 400);
  t.is(png.body.code, 'validation_failed');
  t.true(png.body.errors.some((e: any) => e.in === 'query' && e.path === '/format'));

  const extra = await call(h.app.url, 'GET', diagramPath('?size=big'), { token: tenant.token });
  t.is(extra.status, 400);

  const other = await createTenant(h.app.services.db);
  const cross = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${other.workspaceId}/audits/${auditId}/architecture/diagram`,
    { token: other.token },
  );
  t.is(cross.status, 404);
  t.regex(cross.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const foreign = await call(h.app.url, 'GET', diagramPath(), { token: other.token });
  t.is(foreign.status, 404, "another workspace's path");

  const unknown = await call(
    h.app.url,
    'GET',
    `${ws()}/audits/00000000-0000-4000-8000-000000000000/architecture/diagram?format=svg`,
    { token: tenant.token },
  );
  t.is(unknown.status, 404);

  const narrow = await createToken(h.app.services.db, tenant, ['repositories:read']);
  const denied = await call(h.app.url, 'GET', diagramPath(), { token: narrow.token });
  t.is(denied.status, 403);
});

test('an audit without a snapshot: 404', async (t) => {
  const repos = await call(h.app.url, 'GET', `${ws()}/repositories`, { token: tenant.token });
  const failed = await call(h.app.url, 'POST', `${ws()}/audits`, {
    token: tenant.token,
    body: { repository_id: repos.body.items[0].id, branch_ref: 'nope' },
  });
  await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, failed.body.id);
  const reply = await call(
    h.app.url,
    'GET',
    `${ws()}/audits/${failed.body.id}/architecture/diagram`,
    { token: tenant.token },
  );
  t.is(reply.status, 404);
  t.regex(reply.body.detail, /architecture snapshot/);
});

test.serial(
  'each snapshot keeps its own drawing: two audits asked for in turn, repeats identical',
  async (t) => {
    // A second audit of a later commit with one more service: another snapshot, another drawing.
    repo.commit(
      {
        'docker-compose.yml': `${SAMPLE_FILES['docker-compose.yml']}  ledger:\n    image: ghcr.io/acme/ledger:1.0.0\n`,
      },
      'add ledger',
    );
    const repositories = await call(h.app.url, 'GET', `${ws()}/repositories`, {
      token: tenant.token,
    });
    const started = await call(h.app.url, 'POST', `${ws()}/audits`, {
      token: tenant.token,
      body: { repository_id: repositories.body.items[0].id },
    });
    const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
    t.is(done.body.status, 'completed');
    const later = done.body.id as string;
    const get = (audit: string, format: string) =>
      call(h.app.url, 'GET', `${ws()}/audits/${audit}/architecture/diagram?format=${format}`, {
        token: tenant.token,
      }).then((r) => r.text);

    for (const format of ['svg', 'mermaid']) {
      const first = [await get(auditId, format), await get(later, format)];
      const again = [await get(later, format), await get(auditId, format)];
      t.not(first[0], first[1], `${format}: the snapshots differ`);
      t.true(first[1]!.includes('ledger'), format);
      t.false(first[0]!.includes('ledger'), format);
      t.is(again[0], first[1], `${format}: the later audit again`);
      t.is(again[1], first[0], `${format}: the first audit again`);
    }
  },
);
