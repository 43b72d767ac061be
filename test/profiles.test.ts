/**
 * Audit profiles through the real HTTP API: CRUD, optimistic concurrency (concurrent PUTs),
 * every schema bound at its limit and one past it, tenancy, and createAudit with a profile run
 * by a real worker against a real git repository with two branches.
 */
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, createToken, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call, isProblem, type Reply } from './helpers/http';

let h: AuditHarness;
let tenant: Tenant;
let other: Tenant;
let repo: TestRepo;
let repositoryId: string;
let otherRepositoryId: string;
let releaseSha: string;

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  other = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
  repo.git('checkout', '--quiet', '-b', 'release');
  releaseSha = repo.commit(
    {
      'services/api/src/release.ts': 'export const release = "2.0";\n',
      'services/worker/release.go': 'package main\n',
    },
    'release',
  );
  repo.git('checkout', '--quiet', 'main');
  repositoryId = await createRepository(tenant, 'shop');
  otherRepositoryId = await createRepository(other, 'elsewhere');
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

async function createRepository(who: Tenant, name: string): Promise<string> {
  const reply = await call(h.app.url, 'POST', `/v1/workspaces/${who.workspaceId}/repositories`, {
    token: who.token,
    body: { name, url: `file://${repo.dir}` },
  });
  if (reply.status !== 201) throw new Error(`createRepository: ${reply.status} ${reply.text}`);
  return reply.body.id;
}

const ws = (who: Tenant = tenant) => `/v1/workspaces/${who.workspaceId}`;
const profilesOf = (repoId = repositoryId, who: Tenant = tenant) =>
  `${ws(who)}/repositories/${repoId}/audit-profiles`;
const profilePath = (id: string, who: Tenant = tenant) => `${ws(who)}/audit-profiles/${id}`;

let seq = 0;
const uniqueName = (base: string) => `${base}-${++seq}`;

function post(path: string, body: unknown, who: Tenant = tenant): Promise<Reply> {
  return call(h.app.url, 'POST', path, { token: who.token, body });
}
function put(path: string, body: unknown, who: Tenant = tenant): Promise<Reply> {
  return call(h.app.url, 'PUT', path, { token: who.token, body });
}
function get(path: string, who: Tenant = tenant): Promise<Reply> {
  return call(h.app.url, 'GET', path, { token: who.token });
}

async function createProfile(body: Record<string, unknown>): Promise<any> {
  const reply = await post(profilesOf(), { branch_ref: 'main', ...body });
  if (reply.status !== 201) throw new Error(`createAuditProfile: ${reply.status} ${reply.text}`);
  return reply.body;
}

/** Asserts a 400 problem whose errors name exactly `path` in the body. */
function assertRejects(t: any, reply: Reply, path: string, code = 'validation_failed') {
  t.is(reply.status, 400, reply.text);
  t.true(isProblem(reply));
  t.is(reply.body.code, code);
  t.true(
    (reply.body.errors as Array<{ path: string }>).some((e) => e.path === path),
    `errors name ${path}: ${reply.text}`,
  );
}

async function eventsFor(resourceId: string, path: 'audit-events' | 'activity') {
  const reply = await get(`${ws()}/${path}?limit=200`);
  return (reply.body.items as Array<{ resource_id: string; action: string }>).filter(
    (e) => e.resource_id === resourceId,
  );
}

// CRUD ----------------------------------------------------------------------------------------

test('create, get, list, replace and delete a profile, each write recorded', async (t) => {
  const name = uniqueName('nightly');
  const created = await post(profilesOf(), {
    name,
    branch_ref: 'release',
    purpose: 'Nightly audit of the release branch',
    source_scope: { include: ['services/**'], source_types: ['code', 'cloud'] },
  });
  t.is(created.status, 201, created.text);
  const p = created.body;
  t.is(created.headers.get('location'), profilePath(p.id));
  t.like(p, {
    name,
    branch_ref: 'release',
    purpose: 'Nightly audit of the release branch',
    workspace_id: tenant.workspaceId,
    repository_id: repositoryId,
    created_by: tenant.memberId,
    version: 1,
  });
  t.deepEqual(p.source_scope, { include: ['services/**'], source_types: ['code', 'cloud'] });
  t.is(p.created_at, p.updated_at);

  const fetched = await get(profilePath(p.id));
  t.is(fetched.status, 200);
  t.deepEqual(fetched.body, p);

  const listed = await get(`${profilesOf()}?limit=200`);
  t.is(listed.status, 200);
  t.deepEqual(
    listed.body.items.find((x: any) => x.id === p.id),
    p,
  );

  // PUT replaces: the omitted purpose becomes empty, the omitted source_scope goes.
  const replaced = await put(profilePath(p.id), {
    name: `${name}-renamed`,
    branch_ref: 'main',
    expected_version: 1,
  });
  t.is(replaced.status, 200, replaced.text);
  t.like(replaced.body, { name: `${name}-renamed`, branch_ref: 'main', purpose: '', version: 2 });
  t.false('source_scope' in replaced.body);
  t.true(replaced.body.updated_at >= p.updated_at);
  t.is(replaced.body.created_at, p.created_at);

  const deleted = await call(h.app.url, 'DELETE', profilePath(p.id), { token: tenant.token });
  t.is(deleted.status, 200);
  t.is(deleted.body.version, 2);
  t.is((await get(profilePath(p.id))).status, 404);
  t.falsy((await get(`${profilesOf()}?limit=200`)).body.items.find((x: any) => x.id === p.id));
  const again = await call(h.app.url, 'DELETE', profilePath(p.id), { token: tenant.token });
  t.is(again.status, 404);
  t.true(isProblem(again));
  const late = await put(profilePath(p.id), { name, branch_ref: 'main', expected_version: 2 });
  t.is(late.status, 404);

  for (const feed of ['audit-events', 'activity'] as const) {
    t.deepEqual(
      (await eventsFor(p.id, feed)).map((e) => e.action).sort(),
      ['audit_profile.created', 'audit_profile.deleted', 'audit_profile.updated'],
      feed,
    );
  }
});

test('a stale expected_version is 409 version_mismatch and changes nothing', async (t) => {
  const p = await createProfile({ name: uniqueName('stale'), purpose: 'first' });
  const v2 = await put(profilePath(p.id), {
    name: p.name,
    branch_ref: 'main',
    purpose: 'second',
    expected_version: 1,
  });
  t.is(v2.status, 200);
  const stale = await put(profilePath(p.id), {
    name: 'overwritten',
    branch_ref: 'release',
    purpose: 'third',
    expected_version: 1,
  });
  t.is(stale.status, 409);
  t.true(isProblem(stale));
  t.is(stale.body.code, 'version_mismatch');
  t.is(stale.body.current_version, 2);
  const ahead = await put(profilePath(p.id), {
    name: p.name,
    branch_ref: 'main',
    expected_version: 3,
  });
  t.is(ahead.status, 409);
  t.is(ahead.body.code, 'version_mismatch');
  const now = await get(profilePath(p.id));
  t.deepEqual(now.body, v2.body, 'unchanged by the refused updates');
  t.deepEqual(
    (await eventsFor(p.id, 'audit-events')).map((e) => e.action).sort(),
    ['audit_profile.created', 'audit_profile.updated'],
    'refused updates leave no event',
  );
});

test('two concurrent updates with the same expected_version: exactly one wins', async (t) => {
  for (let round = 0; round < 5; round++) {
    const p = await createProfile({ name: uniqueName('race') });
    const bodies = ['left', 'right'].map((side) => ({
      name: `${p.name}-${side}`,
      branch_ref: side === 'left' ? 'main' : 'release',
      purpose: side,
      expected_version: 1,
    }));
    // Fired together: neither waits for the other's answer.
    const replies = await Promise.all(bodies.map((b) => put(profilePath(p.id), b)));
    const statuses = replies.map((r) => r.status).sort();
    t.deepEqual(statuses, [200, 409], `round ${round}: ${replies.map((r) => r.text).join(' | ')}`);
    const winner = replies.find((r) => r.status === 200)!;
    const loser = replies.find((r) => r.status === 409)!;
    t.is(loser.body.code, 'version_mismatch');
    t.is(loser.body.current_version, 2);
    const now = await get(profilePath(p.id));
    t.is(now.body.version, 2);
    t.deepEqual(now.body, winner.body, 'the stored profile is the winner, untouched by the loser');
  }
});

test('names are unique per repository, case-insensitively, and free again after delete', async (t) => {
  const name = uniqueName('Weekly');
  const first = await createProfile({ name });
  const clash = await post(profilesOf(), { name: name.toLowerCase(), branch_ref: 'main' });
  t.is(clash.status, 409);
  t.is(clash.body.code, 'conflict');
  t.is(clash.body.profile_id, first.id);
  const second = await createProfile({ name: uniqueName('other') });
  const rename = await put(profilePath(second.id), {
    name: name.toUpperCase(),
    branch_ref: 'main',
    expected_version: 1,
  });
  t.is(rename.status, 409);
  t.is(rename.body.code, 'conflict');
  t.is((await get(profilePath(second.id))).body.version, 1);
  await call(h.app.url, 'DELETE', profilePath(first.id), { token: tenant.token });
  t.is((await post(profilesOf(), { name, branch_ref: 'main' })).status, 201);
});

test('the list pages newest first with a cursor', async (t) => {
  const repoId = await createRepository(tenant, uniqueName('paged'));
  const made: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await post(profilesOf(repoId), { name: `p${i}`, branch_ref: 'main' });
    made.push(r.body.id);
  }
  const first = await get(`${profilesOf(repoId)}?limit=2`);
  t.is(first.body.items.length, 2);
  t.true(first.body.has_more);
  const second = await get(
    `${profilesOf(repoId)}?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
  );
  t.is(second.body.items.length, 1);
  t.false(second.body.has_more);
  t.deepEqual(
    [...first.body.items, ...second.body.items].map((p: any) => p.id),
    [...made].reverse(),
  );
  const bad = await get(`${profilesOf(repoId)}?limit=201`);
  assertRejects(t, bad, '/limit');
});

// Bounds --------------------------------------------------------------------------------------

test('every bound of AuditProfileFields at its limit and one past it', async (t) => {
  const ok = async (body: Record<string, unknown>, what: string) => {
    const r = await post(profilesOf(), { name: uniqueName('b'), branch_ref: 'main', ...body });
    t.is(r.status, 201, `${what}: ${r.text}`);
    return r.body;
  };
  const bad = async (body: Record<string, unknown>, path: string, code?: string) =>
    assertRejects(
      t,
      await post(profilesOf(), { name: uniqueName('b'), branch_ref: 'main', ...body }),
      path,
      code,
    );

  t.is((await ok({ name: 'n'.repeat(100) }, 'name 100')).name, 'n'.repeat(100));
  await bad({ name: 'n'.repeat(101) }, '/name');
  await bad({ name: '' }, '/name');
  t.is((await ok({ branch_ref: 'b'.repeat(500) }, 'branch_ref 500')).branch_ref.length, 500);
  await bad({ branch_ref: 'b'.repeat(501) }, '/branch_ref');
  await bad({ branch_ref: '' }, '/branch_ref');
  await bad({ branch_ref: '--upload-pack=evil' }, '/branch_ref');
  await bad({ branch_ref: 'a..b' }, '/branch_ref');
  t.is((await ok({ purpose: 'p'.repeat(500) }, 'purpose 500')).purpose.length, 500);
  t.is((await ok({ purpose: '' }, 'purpose empty')).purpose, '');
  await bad({ purpose: 'p'.repeat(501) }, '/purpose');

  const scope = (s: Record<string, unknown>) => ({ source_scope: s });
  await ok(scope({ max_files: 1 }), 'max_files 1');
  await ok(scope({ max_files: 100000 }), 'max_files 100000');
  await bad(scope({ max_files: 0 }), '/source_scope/max_files');
  await bad(scope({ max_files: 100001 }), '/source_scope/max_files');
  await ok(scope({ include: Array.from({ length: 200 }, (_, i) => `d${i}/**`) }), 'include 200');
  await bad(
    scope({ include: Array.from({ length: 201 }, (_, i) => `d${i}/**`) }),
    '/source_scope/include',
  );
  await ok(scope({ exclude: ['x'.repeat(500)] }), 'exclude pattern 500');
  await bad(scope({ exclude: ['x'.repeat(501)] }), '/source_scope/exclude/0');
  await bad(scope({ exclude: [''] }), '/source_scope/exclude/0');
  await ok(scope({ source_types: ['code', 'cloud', 'cicd'] }), 'three source types');
  await ok(scope({ source_types: ['cicd'] }), 'one source type');
  await bad(scope({ source_types: [] }), '/source_scope/source_types');
  await bad(scope({ source_types: ['code', 'code'] }), '/source_scope/source_types');
  await bad(scope({ source_types: ['docs'] }), '/source_scope/source_types/0');

  const missing = await post(profilesOf(), { name: uniqueName('m') });
  assertRejects(t, missing, '/branch_ref');
  const unknown = await post(profilesOf(), {
    name: uniqueName('u'),
    branch_ref: 'main',
    color: 'red',
  });
  t.is(unknown.status, 400);
  t.is(unknown.body.code, 'unknown_property');
  const unknownScope = await post(profilesOf(), {
    name: uniqueName('u'),
    branch_ref: 'main',
    source_scope: { paths: ['x'] },
  });
  t.is(unknownScope.status, 400);
  t.is(unknownScope.body.code, 'unknown_property');
});

test('every bound of AuditProfileUpdate at its limit and one past it', async (t) => {
  const p = await createProfile({ name: uniqueName('upd') });
  let version = 1;
  const ok = async (body: Record<string, unknown>, what: string) => {
    const r = await put(profilePath(p.id), {
      name: p.name,
      branch_ref: 'main',
      expected_version: version,
      ...body,
    });
    t.is(r.status, 200, `${what}: ${r.text}`);
    version = r.body.version;
    return r.body;
  };
  const bad = async (body: Record<string, unknown>, path: string) =>
    assertRejects(
      t,
      await put(profilePath(p.id), {
        name: p.name,
        branch_ref: 'main',
        expected_version: version,
        ...body,
      }),
      path,
    );
  t.is((await ok({ name: 'u'.repeat(100) }, 'name 100')).name.length, 100);
  p.name = 'u'.repeat(100);
  await bad({ name: 'u'.repeat(101) }, '/name');
  await bad({ name: '' }, '/name');
  await ok({ branch_ref: 'r'.repeat(500) }, 'branch_ref 500');
  await bad({ branch_ref: 'r'.repeat(501) }, '/branch_ref');
  await ok({ purpose: 'q'.repeat(500) }, 'purpose 500');
  await bad({ purpose: 'q'.repeat(501) }, '/purpose');
  await bad({ expected_version: 0 }, '/expected_version');
  await bad({ expected_version: 1.5 }, '/expected_version');
  const noVersion = await put(profilePath(p.id), { name: p.name, branch_ref: 'main' });
  assertRejects(t, noVersion, '/expected_version');
  t.is((await get(profilePath(p.id))).body.version, version, 'refusals change nothing');
  // expected_version's lower bound, 1, is accepted (and stale here: a 409, not a 400).
  const one = await put(profilePath(p.id), {
    name: p.name,
    branch_ref: 'main',
    expected_version: 1,
  });
  t.is(one.status, 409);
});

// Access and tenancy --------------------------------------------------------------------------

test("another workspace's profiles and repositories are 404; scopes are enforced", async (t) => {
  const mine = await createProfile({ name: uniqueName('mine') });
  t.is((await get(profilePath(mine.id, other), other)).status, 404);
  const theirPut = await put(
    profilePath(mine.id, other),
    { name: 'x', branch_ref: 'main', expected_version: 1 },
    other,
  );
  t.is(theirPut.status, 404);
  const theirDelete = await call(h.app.url, 'DELETE', profilePath(mine.id, other), {
    token: other.token,
  });
  t.is(theirDelete.status, 404);
  t.is((await get(profilePath(mine.id))).body.version, 1, 'untouched');
  // My repository named under their workspace, and their repository named under mine.
  t.is((await get(profilesOf(repositoryId, other), other)).status, 404);
  t.is((await post(profilesOf(otherRepositoryId), { name: 'x', branch_ref: 'main' })).status, 404);
  t.is((await get(profilesOf(otherRepositoryId))).status, 404);

  const reader = await createToken(h.app.services.db, tenant, ['audits:read']);
  const denied = await call(h.app.url, 'POST', profilesOf(), {
    token: reader.token,
    body: { name: uniqueName('ro'), branch_ref: 'main' },
  });
  t.is(denied.status, 403);
  t.is(denied.body.code, 'insufficient_scope');
  t.is((await call(h.app.url, 'GET', profilePath(mine.id), { token: reader.token })).status, 200);
});

// createAudit with a profile -----------------------------------------------------------------

const audits = () => `${ws()}/audits`;

async function runAudit(body: Record<string, unknown>) {
  const started = await post(audits(), body);
  if (started.status !== 202) throw new Error(`createAudit: ${started.status} ${started.text}`);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, started.body.id);
  return { started: started.body, done: done.body };
}

test("createAudit with a profile audits the profile's branch and scope and keeps its snapshot", async (t) => {
  const p = await createProfile({
    name: uniqueName('api-release'),
    branch_ref: 'release',
    purpose: 'API code on the release branch',
    source_scope: { include: ['services/api/**'], source_types: ['code'] },
  });
  const { started, done } = await runAudit({ profile_id: p.id, profile_version: 1 });
  t.is(started.repository_id, repositoryId, "the profile's repository");
  t.is(done.status, 'completed', JSON.stringify(done.stages));
  t.is(done.branch_ref, 'release');
  t.is(done.commit_sha, releaseSha);
  const apiFiles = repo
    .git('ls-tree', '-r', '--name-only', 'release')
    .split('\n')
    .filter((f) => f.startsWith('services/api/'));
  t.true(apiFiles.includes('services/api/src/release.ts'), 'the release-only file is in scope');
  t.is(done.source.file_count, apiFiles.length, 'only the files the profile includes were read');
  t.deepEqual(done.source_scope, { include: ['services/api/**'], source_types: ['code'] });
  const stage = (k: string) => done.stages.find((s: any) => s.key === k).status;
  t.is(stage('code'), 'completed');
  t.is(stage('cloud'), 'skipped');
  t.is(stage('cicd'), 'skipped');
  const snapshot = {
    id: p.id,
    version: 1,
    name: p.name,
    branch_ref: 'release',
    source_scope: { include: ['services/api/**'], source_types: ['code'] },
    purpose: 'API code on the release branch',
  };
  t.deepEqual(done.profile_snapshot, snapshot);

  // The profile moves on; the audit keeps the profile as it ran, even after the delete.
  const v2 = await put(profilePath(p.id), {
    name: p.name,
    branch_ref: 'main',
    expected_version: 1,
  });
  t.is(v2.status, 200);
  await call(h.app.url, 'DELETE', profilePath(p.id), { token: tenant.token });
  const later = await get(`${audits()}/${done.id}`);
  t.deepEqual(later.body.profile_snapshot, snapshot);
  const listed = await get(`${audits()}?repository_id=${repositoryId}&limit=200`);
  t.deepEqual(listed.body.items.find((a: any) => a.id === done.id).profile_snapshot, snapshot);
});

test('a request branch_ref or source_scope overrides the profile; profile_version must be current', async (t) => {
  const p = await createProfile({
    name: uniqueName('override'),
    branch_ref: 'release',
    source_scope: { include: ['services/worker/**'] },
  });
  await put(profilePath(p.id), {
    name: p.name,
    branch_ref: 'release',
    source_scope: { include: ['services/worker/**'] },
    expected_version: 1,
  });

  const stale = await post(audits(), { profile_id: p.id, profile_version: 1 });
  t.is(stale.status, 409, stale.text);
  t.true(isProblem(stale));
  t.is(stale.body.code, 'version_mismatch');
  t.is(stale.body.current_version, 2);
  const ahead = await post(audits(), { profile_id: p.id, profile_version: 3 });
  t.is(ahead.status, 409);

  const { done } = await runAudit({
    profile_id: p.id,
    profile_version: 2,
    branch_ref: 'main',
    source_scope: { include: ['services/api/**'] },
  });
  t.is(done.status, 'completed', JSON.stringify(done.stages));
  t.is(done.branch_ref, 'main');
  t.is(done.commit_sha, repo.git('rev-parse', 'main'));
  t.deepEqual(done.source_scope, { include: ['services/api/**'] });
  const mainApi = repo
    .git('ls-tree', '-r', '--name-only', 'main')
    .split('\n')
    .filter((f) => f.startsWith('services/api/'));
  t.is(done.source.file_count, mainApi.length);
  t.like(done.profile_snapshot, { id: p.id, version: 2, branch_ref: 'release' });
});

test('createAudit refuses a profile it cannot use', async (t) => {
  const p = await createProfile({ name: uniqueName('refuse') });
  const theirs = await post(
    profilesOf(otherRepositoryId, other),
    { name: 'theirs', branch_ref: 'main' },
    other,
  );
  t.is(theirs.status, 201);

  assertRejects(t, await post(audits(), { profile_id: theirs.body.id }), '/profile_id');
  assertRejects(
    t,
    await post(audits(), { profile_id: '00000000-0000-4000-8000-000000000000' }),
    '/profile_id',
  );
  const otherRepo = await createRepository(tenant, uniqueName('second'));
  assertRejects(
    t,
    await post(audits(), { profile_id: p.id, repository_id: otherRepo }),
    '/repository_id',
  );
  assertRejects(
    t,
    await post(audits(), { profile_id: p.id, upload_id: '00000000-0000-4000-8000-000000000000' }),
    '/profile_id',
  );
  assertRejects(
    t,
    await post(audits(), { profile_version: 1, repository_id: repositoryId }),
    '/profile_version',
  );
  assertRejects(
    t,
    await post(audits(), { profile_id: p.id, profile_version: 0 }),
    '/profile_version',
  );
  await call(h.app.url, 'DELETE', profilePath(p.id), { token: tenant.token });
  assertRejects(t, await post(audits(), { profile_id: p.id }), '/profile_id');
  const mine = await get(`${audits()}?limit=200`);
  t.false(
    mine.body.items.some((a: any) => a.profile_snapshot?.id === p.id),
    'no audit was started by a refused request',
  );
});
