/**
 * getEntityHistory: one entity across the snapshots of its repository, from two real audits of a
 * git repository whose second commit removes a compose service, adds one and changes another.
 * Each listed snapshot says whether the entity is there and how it differs from the one before;
 * an unknown key, another workspace and a missing key are clear problems.
 */
import test from 'ava';
import { startAuditHarness, runAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call, isProblem } from './helpers/http';

const COMPOSE_1 =
  'services:\n  api:\n    build: ./api\n    depends_on: [db, cache]\n  db:\n    image: postgres:16\n  cache:\n    image: redis:7\n';
const COMPOSE_2 =
  'services:\n  api:\n    build: ./api\n    depends_on: [db, queue]\n  db:\n    image: postgres:17\n  queue:\n    image: rabbitmq:3\n';

let h: AuditHarness;
let tenant: Tenant;
let other: Tenant;
let repo: TestRepo;
let repositoryId: string;
let first: string;
let second: string;

type Entity = { canonical_key: string; name: string } & Record<string, unknown>;

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  other = await createTenant(h.app.services.db);
  repo = createRepo({
    'api/package.json': JSON.stringify({ name: 'api', private: true }),
    'api/Dockerfile': 'FROM node:20\nCOPY . .\n',
    'docker-compose.yml': COMPOSE_1,
  });
  const created = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  repositoryId = created.body.id;
  const one = await runAudit(h.app.url, tenant.token, tenant.workspaceId, {
    repository_id: repositoryId,
  });
  if (one.status !== 'completed') throw new Error(`first audit ${one.status}`);
  first = one.id;
  repo.commit({ 'docker-compose.yml': COMPOSE_2 });
  const two = await runAudit(h.app.url, tenant.token, tenant.workspaceId, {
    repository_id: repositoryId,
  });
  if (two.status !== 'completed') throw new Error(`second audit ${two.status}`);
  second = two.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

function ws(t: Tenant = tenant) {
  return `/v1/workspaces/${t.workspaceId}`;
}

async function entities(audit: string): Promise<Entity[]> {
  const r = await call(h.app.url, 'GET', `${ws()}/audits/${audit}/architecture`, {
    token: tenant.token,
  });
  return r.body.entities;
}

function history(key: string, t: Tenant = tenant) {
  return call(
    h.app.url,
    'GET',
    `${ws(t)}/repositories/${repositoryId}/architecture/entity-history?key=${encodeURIComponent(key)}`,
    { token: t.token },
  );
}

test('a removed, an added and a changed entity across two snapshots, newest first', async (t) => {
  const [before, after] = [await entities(first), await entities(second)];
  const named = (list: Entity[], name: string) => list.find((e) => e.name === name);
  const cache = named(before, 'cache')!;
  const queue = named(after, 'queue')!;
  t.truthy(cache && queue && !named(after, 'cache') && !named(before, 'queue'));

  const gone = await history(cache.canonical_key);
  t.is(gone.status, 200, gone.text);
  t.is(gone.body.canonical_key, cache.canonical_key);
  t.deepEqual(
    gone.body.items.map((i: { audit_id: string; present: boolean; change: string }) => [
      i.audit_id,
      i.present,
      i.change,
    ]),
    [
      [second, false, 'removed'],
      [first, true, 'added'],
    ],
  );
  t.is(gone.body.items[1].name, 'cache');
  t.is(gone.body.items[1].kind, cache.kind);
  t.true(gone.body.items[1].relationship_count >= 1, 'api depends on cache');
  t.is(gone.body.items[0].relationship_count, 0);

  const added = await history(queue.canonical_key);
  t.deepEqual(
    added.body.items.map((i: { change: string }) => i.change),
    ['added', 'absent'],
  );

  // db is in both: its change names exactly the fields that differ between the two snapshots.
  const db1 = named(before, 'db')!;
  const db2 = named(after, 'db')!;
  const fields = ['name', 'kind', 'confidence', 'sources', 'attributes', 'contradictions'].filter(
    (f) => JSON.stringify(db1[f] ?? null) !== JSON.stringify(db2[f] ?? null),
  );
  const kept = await history(db2.canonical_key);
  t.is(kept.body.items[0].change, fields.length ? 'changed' : 'unchanged');
  t.deepEqual(kept.body.items[0].changed_fields, fields);
  t.is(kept.body.items[0].confidence, db2.confidence);
  t.deepEqual(kept.body.items[0].sources, db2.sources);
});

test('unknown key, another workspace, no key: problems', async (t) => {
  const unknown = await history('service:never-there');
  t.is(unknown.status, 404);
  t.true(isProblem(unknown));
  const foreign = await history('service:api', other);
  t.is(foreign.status, 404);
  t.true(isProblem(foreign));
  const none = await call(
    h.app.url,
    'GET',
    `${ws()}/repositories/${repositoryId}/architecture/entity-history`,
    { token: tenant.token },
  );
  t.is(none.status, 400);
  t.true(isProblem(none));
});
