/**
 * Repositories: create/get/update/delete, validation bounds and URL rules, scopes, tenancy,
 * audit events and activity items of every write, and keyset pagination of the list.
 */
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, createToken, LOCAL_TEST_WORKSPACES, type Tenant } from './helpers/factories';
import { call, isProblem, type Reply } from './helpers/http';

interface Repo {
  id: string;
  workspace_id: string;
  name: string;
  url: string;
  default_branch: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

interface Page<T> {
  items: T[];
  has_more?: boolean;
  next_cursor?: string | null;
}

interface FieldError {
  in: string;
  path: string;
  message: string;
}

interface AuditEvent {
  id: string;
  actor_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

interface ActivityItem {
  id: string;
  action: string;
  resource_type: string;
  resource_id: string | null;
  actor_login: string | null;
  workspace_id: string | null;
  workspace_name: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

let app: TestApp;

/** ssh is enabled for createTenant's workspaces (`ws-` slugs); no workspace may use local paths. */
const SSH_FOR_TEST_TENANTS = {
  [LOCAL_TEST_WORKSPACES]: { knownHostsFile: '/etc/ssh/ssh_known_hosts', identityFile: null },
};

test.before(async () => {
  app = await startTestApp({ repositorySshWorkspaces: SSH_FOR_TEST_TENANTS });
});
test.after.always(async () => {
  await app?.close();
});

const ws = (tenant: Tenant) => `/v1/workspaces/${tenant.workspaceId}`;
const reposPath = (tenant: Tenant) => `${ws(tenant)}/repositories`;
const repoPath = (tenant: Tenant, id: string) => `${reposPath(tenant)}/${id}`;

let counter = 0;
const uniqueName = (prefix = 'repo') =>
  `${prefix}-${++counter}-${crypto.randomBytes(3).toString('hex')}`;

async function create(
  tenant: Tenant,
  body: Record<string, unknown>,
  base = app.url,
): Promise<Reply<Repo>> {
  return call<Repo>(base, 'POST', reposPath(tenant), { token: tenant.token, body });
}

async function createOk(tenant: Tenant, body: Partial<Repo> = {}): Promise<Repo> {
  const reply = await create(tenant, {
    name: uniqueName(),
    url: 'https://git.example.com/org/r.git',
    ...body,
  });
  if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${reply.text}`);
  return reply.body;
}

/** The distinct paths named in a problem's `errors` (a value may break several rules). */
function errorPaths(reply: Reply): string[] {
  const errors = (reply.body as { errors?: FieldError[] } | undefined)?.errors ?? [];
  return [...new Set(errors.map((e) => e.path))];
}

/** The problem code of a reply. */
const codeOf = (reply: Reply<unknown>) => (reply.body as { code?: string } | undefined)?.code;

function errorFor(reply: Reply, path: string): FieldError | undefined {
  const errors = (reply.body as { errors?: FieldError[] } | undefined)?.errors ?? [];
  return errors.find((e) => e.path === path);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function assertRepoShape(t: ExecutionContext, repo: Repo, tenant: Tenant) {
  t.deepEqual(Object.keys(repo).sort(), [
    'created_at',
    'default_branch',
    'description',
    'id',
    'name',
    'updated_at',
    'url',
    'workspace_id',
  ]);
  t.regex(repo.id, UUID);
  t.is(repo.workspace_id, tenant.workspaceId);
  t.regex(repo.created_at, ISO_MS);
  t.regex(repo.updated_at, ISO_MS);
}

/** Walks every page of a list with the given limit. */
async function walk<T>(
  tenant: Tenant,
  path: string,
  limit: number,
  token = tenant.token,
): Promise<Array<Page<T>>> {
  const pages: Array<Page<T>> = [];
  let cursor: string | null | undefined = undefined;
  for (let i = 0; i < 100; i++) {
    const qs: string = cursor
      ? `?limit=${limit}&cursor=${encodeURIComponent(cursor)}`
      : `?limit=${limit}`;
    const reply: Reply<Page<T>> = await call<Page<T>>(app.url, 'GET', `${path}${qs}`, { token });
    if (reply.status !== 200) throw new Error(`list failed: ${reply.status} ${reply.text}`);
    pages.push(reply.body);
    cursor = reply.body.next_cursor;
    if (!reply.body.has_more) break;
  }
  return pages;
}

async function auditEventsFor(tenant: Tenant, resourceId: string): Promise<AuditEvent[]> {
  const pages = await walk<AuditEvent>(tenant, `${ws(tenant)}/audit-events`, 200);
  return pages.flatMap((p) => p.items).filter((e) => e.resource_id === resourceId);
}

async function activityFor(tenant: Tenant, resourceId: string): Promise<ActivityItem[]> {
  const pages = await walk<ActivityItem>(tenant, `${ws(tenant)}/activity`, 200);
  return pages.flatMap((p) => p.items).filter((e) => e.resource_id === resourceId);
}

/** True when `items` are newest first: created_at descending, ties broken by id descending. */
function isNewestFirst(items: Repo[]): boolean {
  for (let i = 1; i < items.length; i++) {
    const a = items[i - 1]!;
    const b = items[i]!;
    if (a.created_at < b.created_at) return false;
    if (a.created_at === b.created_at && a.id < b.id) return false;
  }
  return true;
}

function cursorOf(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

// Create ---------------------------------------------------------------------------------

test('createRepository answers 201 with Location and a RepositoryResponse; default_branch defaults to main', async (t) => {
  const tenant = await createTenant(app.services.db);
  const name = uniqueName('created');
  const reply = await create(tenant, { name, url: 'https://git.example.com/org/created.git' });
  t.is(reply.status, 201, reply.text);
  const repo = reply.body;
  assertRepoShape(t, repo, tenant);
  t.is(repo.name, name);
  t.is(repo.url, 'https://git.example.com/org/created.git');
  t.is(repo.default_branch, 'main');
  t.is(repo.description, null);
  t.is(repo.created_at, repo.updated_at);
  t.is(
    reply.headers.get('location'),
    `/v1/workspaces/${tenant.workspaceId}/repositories/${repo.id}`,
  );

  const fetched = await call<Repo>(app.url, 'GET', reply.headers.get('location') ?? '', {
    token: tenant.token,
  });
  t.is(fetched.status, 200);
  t.deepEqual(fetched.body, repo);
});

test('createRepository keeps an explicit default_branch and description', async (t) => {
  const tenant = await createTenant(app.services.db);
  const reply = await create(tenant, {
    name: uniqueName(),
    url: 'ssh://git@git.example.com/org/r.git',
    default_branch: 'develop',
    description: 'The payments service.',
  });
  t.is(reply.status, 201, reply.text);
  t.is(reply.body.default_branch, 'develop');
  t.is(reply.body.description, 'The payments service.');

  const withNull = await create(tenant, {
    name: uniqueName(),
    url: 'https://h.example/r',
    description: null,
  });
  t.is(withNull.status, 201, withNull.text);
  t.is(withNull.body.description, null);
});

test('name length: 1 and 200 accepted, 0 and 201 rejected naming /name', async (t) => {
  const tenant = await createTenant(app.services.db);
  const url = 'https://git.example.com/org/r.git';
  const one = await create(tenant, { name: 'a', url });
  t.is(one.status, 201, one.text);
  t.is(one.body.name, 'a');
  const max = 'b'.repeat(200);
  const twoHundred = await create(tenant, { name: max, url });
  t.is(twoHundred.status, 201, twoHundred.text);
  t.is(twoHundred.body.name, max);

  for (const name of ['', 'c'.repeat(201)]) {
    const reply = await create(tenant, { name, url });
    t.is(reply.status, 400, `length ${name.length}`);
    t.true(isProblem(reply));
    t.is((reply.body as unknown as { code: string }).code, 'validation_failed');
    t.deepEqual(errorPaths(reply), ['/name'], `length ${name.length}`);
  }
});

test('description: 2000 characters accepted, 2001 rejected naming /description', async (t) => {
  const tenant = await createTenant(app.services.db);
  const url = 'https://git.example.com/org/r.git';
  const ok = await create(tenant, { name: uniqueName(), url, description: 'd'.repeat(2000) });
  t.is(ok.status, 201, ok.text);
  t.is(ok.body.description?.length, 2000);

  const over = await create(tenant, { name: uniqueName(), url, description: 'd'.repeat(2001) });
  t.is(over.status, 400);
  t.is((over.body as unknown as { code: string }).code, 'validation_failed');
  t.deepEqual(errorPaths(over), ['/description']);
});

test('a duplicate name, compared case-insensitively, is 409 conflict; another workspace may use it', async (t) => {
  const tenant = await createTenant(app.services.db);
  const first = await createOk(tenant, { name: 'Billing-Service' });
  for (const name of ['Billing-Service', 'billing-service', 'BILLING-SERVICE']) {
    const reply = await create(tenant, { name, url: 'https://git.example.com/org/other.git' });
    t.is(reply.status, 409, name);
    t.true(isProblem(reply), reply.text);
    t.is((reply.body as unknown as { code: string }).code, 'conflict');
  }
  const list = await call<Page<Repo>>(app.url, 'GET', reposPath(tenant), { token: tenant.token });
  t.deepEqual(
    list.body.items.map((r) => r.id),
    [first.id],
  );

  const other = await createTenant(app.services.db);
  const elsewhere = await create(other, {
    name: 'billing-service',
    url: 'https://git.example.com/org/b.git',
  });
  t.is(elsewhere.status, 201, elsewhere.text);
});

// URL rules ------------------------------------------------------------------------------

const GOOD_URLS = [
  'https://git.example.com/org/repo.git',
  'https://github.com/org/repo',
  'ssh://git@git.example.com/org/repo.git',
  'ssh://git@git.example.com:2222/org/repo.git',
  'git@github.com:org/repo.git',
];
const LOCAL_URLS = ['file:///etc', '/etc', 'file:///srv/git/repo.git', '/srv/git/repo.git'];
const BAD_URLS = [
  '-uhack',
  '--upload-pack=touch /tmp/x',
  'ext::sh -c x',
  'ext::sh',
  'fd::17',
  'http://plain/x',
  'https://user:pw@host/r',
  'https://ghp_personalaccesstoken@github.com/org/r.git',
  'ssh://user:pw@host/r',
  'ftp://host/r',
  'https://host',
  'https://host/',
  'relative/path',
  'https://host/a b',
  'https://host/a\nb',
  'https://git.example.com\\@127.0.0.1/r.git',
  'https://git.example.com\\/r.git',
];

test('https, ssh and scp-like git URLs are accepted', async (t) => {
  const tenant = await createTenant(app.services.db);
  for (const url of GOOD_URLS) {
    const reply = await create(tenant, { name: uniqueName(), url });
    t.is(reply.status, 201, `${url}: ${reply.text}`);
    t.is(reply.body.url, url);
  }
});

test('local paths and file:// URLs are refused by default as local_repository_not_allowed, naming /url and LOCAL_REPOSITORY_WORKSPACES', async (t) => {
  const tenant = await createTenant(app.services.db);
  for (const url of LOCAL_URLS) {
    const reply = await create(tenant, { name: uniqueName(), url });
    t.is(reply.status, 400, url);
    t.true(isProblem(reply));
    t.is((reply.body as unknown as { code: string }).code, 'local_repository_not_allowed');
    t.deepEqual(errorPaths(reply), ['/url'], url);
    t.regex(errorFor(reply, '/url')?.message ?? '', /LOCAL_REPOSITORY_WORKSPACES/, url);
  }
  const list = await call<Page<Repo>>(app.url, 'GET', reposPath(tenant), { token: tenant.token });
  t.deepEqual(list.body.items, []);
});

test('unsafe, plain-http, credentialed and malformed URLs are refused naming /url', async (t) => {
  const tenant = await createTenant(app.services.db);
  for (const url of BAD_URLS) {
    const reply = await create(tenant, { name: uniqueName(), url });
    t.is(reply.status, 400, `${JSON.stringify(url)}: ${reply.text}`);
    t.is((reply.body as unknown as { code: string }).code, 'validation_failed', url);
    t.deepEqual(errorPaths(reply), ['/url'], JSON.stringify(url));
  }
  const list = await call<Page<Repo>>(app.url, 'GET', reposPath(tenant), { token: tenant.token });
  t.deepEqual(list.body.items, []);
});

test('an ssh URL whose host looks like a command-line option is refused (CVE-2017-1000117 form)', async (t) => {
  // domain/repositories/url.ts promises that option-like forms are refused; the host of these
  // URLs is what ssh would see as an argument.
  const tenant = await createTenant(app.services.db);
  const urls = ['ssh://-oProxyCommand=touch%20pwned/repo', 'ssh://git@-oProxyCommand=x/repo'];
  const seen: Record<string, [number, string[]]> = {};
  for (const url of urls) {
    const reply = await create(tenant, { name: uniqueName(), url });
    seen[url] = [reply.status, errorPaths(reply)];
  }
  t.deepEqual(seen, Object.fromEntries(urls.map((u) => [u, [400, ['/url']]])));
});

test('a workspace named in LOCAL_REPOSITORY_WORKSPACES may register local paths and file:// URLs; another may not; unsafe forms stay refused', async (t) => {
  const local = await startTestApp({ localRepositoryWorkspaces: [LOCAL_TEST_WORKSPACES] });
  try {
    const tenant = await createTenant(local.services.db);
    for (const url of [...LOCAL_URLS, 'FILE:///srv/git/upper.git', 'File:///srv/git/mixed.git']) {
      const reply = await create(tenant, { name: uniqueName(), url }, local.url);
      t.is(reply.status, 201, `${url}: ${reply.text}`);
      t.is(reply.body.url, url);
    }
    for (const url of ['-uhack', 'ext::sh -c x', 'http://plain/x', 'https://user:pw@host/r']) {
      const reply = await create(tenant, { name: uniqueName(), url }, local.url);
      t.is(reply.status, 400, url);
      t.deepEqual(errorPaths(reply), ['/url'], url);
    }
    // PATCH follows the same switch.
    const repo = (
      await create(tenant, { name: uniqueName(), url: 'https://h.example/r' }, local.url)
    ).body;
    const patched = await call<Repo>(local.url, 'PATCH', repoPath(tenant, repo.id), {
      token: tenant.token,
      body: { url: '/srv/git/r.git' },
    });
    t.is(patched.status, 200, patched.text);
    t.is(patched.body.url, '/srv/git/r.git');

    // A workspace the setting does not name: refused on create and on update, nothing stored.
    const other = await createTenant(local.services.db, { slugPrefix: 'other-' });
    const kept = (
      await create(other, { name: uniqueName(), url: 'https://h.example/r' }, local.url)
    ).body;
    for (const url of [...LOCAL_URLS, 'FILE:///srv/git/upper.git']) {
      const reply = await create(other, { name: uniqueName(), url }, local.url);
      t.is(reply.status, 400, url);
      t.is(codeOf(reply), 'local_repository_not_allowed', url);
      const update = await call(local.url, 'PATCH', repoPath(other, kept.id), {
        token: other.token,
        body: { url },
      });
      t.is(update.status, 400, url);
      t.is(update.body.code, 'local_repository_not_allowed', url);
    }
    const list = await call<Page<Repo>>(local.url, 'GET', reposPath(other), {
      token: other.token,
    });
    t.deepEqual(
      list.body.items.map((r) => r.url),
      ['https://h.example/r'],
    );
  } finally {
    await local.close();
  }
});

test("local paths inside the service's data, blob, scratch or code folders are refused even for an allowed workspace", async (t) => {
  const local = await startTestApp({ localRepositoryWorkspaces: [LOCAL_TEST_WORKSPACES] });
  try {
    const tenant = await createTenant(local.services.db);
    const config = local.services.config;
    const codeDir = path.resolve(__dirname, '..');
    // The checkout's repository: inside it, or elsewhere for a worktree (none in an image).
    const commonDir = spawnSync(
      'git',
      ['rev-parse', '--path-format=absolute', '--git-common-dir'],
      { cwd: codeDir, encoding: 'utf8' },
    ).stdout?.trim();
    for (const dir of [
      ...(commonDir ? [commonDir] : []),
      config.dataDir,
      path.join(config.dataDir, 'postgres'),
      path.join(config.blobDir, 'ab'),
      path.join(config.workDir, crypto.randomUUID(), 'repo.git'),
      codeDir,
      path.join(codeDir, '.git'),
    ]) {
      for (const url of [dir, `file://${dir}`, `FILE://${dir}`]) {
        const reply = await create(tenant, { name: uniqueName(), url }, local.url);
        t.is(reply.status, 400, url);
        t.true(isProblem(reply));
        t.is(codeOf(reply), 'repository_path_protected', url);
        t.deepEqual(errorPaths(reply), ['/url'], url);
      }
    }
    // Written with `..`, `.` or `%`-escapes, a path is refused as written.
    for (const url of [
      `${os.tmpdir()}/../${path.relative('/', codeDir)}`,
      `file://${codeDir}/./x`,
      `file://${codeDir.replace(/\//g, '%2F')}`,
    ]) {
      const reply = await create(tenant, { name: uniqueName(), url }, local.url);
      t.is(reply.status, 400, url);
      t.is(codeOf(reply), 'validation_failed', url);
    }
    // A link elsewhere that leads into the data folder is followed to where it leads.
    const linkDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repo-link-'));
    t.teardown(() => fs.rmSync(linkDir, { recursive: true, force: true }));
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.symlinkSync(config.dataDir, path.join(linkDir, 'data'));
    const linked = await create(
      tenant,
      { name: uniqueName(), url: path.join(linkDir, 'data') },
      local.url,
    );
    t.is(linked.status, 400, linked.text);
    t.is(codeOf(linked), 'repository_path_protected');
    const list = await call<Page<Repo>>(local.url, 'GET', reposPath(tenant), {
      token: tenant.token,
    });
    t.deepEqual(list.body.items, []);
  } finally {
    await local.close();
  }
});

/**
 * Hosts that are, or spell, this machine, its networks or a cloud metadata service: refused at
 * registration with repository_host_not_allowed, whatever the scheme.
 */
const INTERNAL_URLS = [
  'https://127.0.0.1/r.git',
  'https://127.0.0.1:8080/r.git',
  'https://2130706433/r.git',
  'https://0x7f000001/r.git',
  'https://0x7F.0.0.1/r.git',
  'https://017700000001/r.git',
  'https://127.1/r.git',
  'https://127.0.0.1./r.git',
  'https://%31%32%37.0.0.1/r.git',
  'https://localhost/r.git',
  'https://localhost./r.git',
  'https://LocalHost/r.git',
  'https://git.localhost/r.git',
  'https://[::1]/r.git',
  'https://[0:0:0:0:0:0:0:1]/r.git',
  'https://[::ffff:127.0.0.1]/r.git',
  'https://[::ffff:7f00:1]/r.git',
  'https://[::127.0.0.1]/r.git',
  'https://[64:ff9b::a9fe:a9fe]/r.git',
  'https://[2002:a9fe:a9fe::1]/r.git',
  'https://[::]/r.git',
  'https://0.0.0.0/r.git',
  'https://0/r.git',
  'https://169.254.169.254/latest/meta-data/',
  'https://169.254.170.2/v2/credentials',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://metadata.google.internal./computeMetadata/v1/',
  'https://metadata/computeMetadata/v1/',
  'https://metadata.goog/computeMetadata/v1/',
  'https://instance-data/latest/meta-data/',
  'https://[fd00:ec2::254]/latest/meta-data/',
  'https://100.100.100.200/latest/meta-data',
  'https://10.0.0.1/r.git',
  'https://172.16.0.1/r.git',
  'https://172.31.255.255/r.git',
  'https://192.168.0.1/r.git',
  'https://[fc00::1]/r.git',
  'https://[fe80::1]/r.git',
  'https://[ff02::1]/r.git',
  'https://224.0.0.251/r.git',
  'https://255.255.255.255/r.git',
  'https://gitlab.internal/r.git',
  'https://printer.local/r.git',
  'ssh://git@127.0.0.1/r.git',
  'ssh://git@2130706433/r.git',
  'ssh://git@0x7f000001/r.git',
  'ssh://git@[::1]/r.git',
  'ssh://git@localhost/r.git',
  'git@127.1:r.git',
  'git@localhost.:r.git',
  'git@169.254.169.254:r.git',
  'git@metadata.google.internal:r.git',
];

test('internal, loopback and metadata hosts in every spelling are refused at registration as repository_host_not_allowed', async (t) => {
  const tenant = await createTenant(app.services.db);
  const kept = await createOk(tenant);
  const seen: Record<string, string> = {};
  for (const url of INTERNAL_URLS) {
    const reply = await create(tenant, { name: uniqueName(), url });
    const update = await call(app.url, 'PATCH', repoPath(tenant, kept.id), {
      token: tenant.token,
      body: { url },
    });
    seen[url] =
      `${reply.status} ${codeOf(reply)} ${errorPaths(reply).join()} / ${update.status} ${codeOf(update)}`;
    t.true(isProblem(reply), url);
  }
  t.deepEqual(
    seen,
    Object.fromEntries(
      INTERNAL_URLS.map((u) => [
        u,
        '400 repository_host_not_allowed /url / 400 repository_host_not_allowed',
      ]),
    ),
  );
  const list = await call<Page<Repo>>(app.url, 'GET', reposPath(tenant), { token: tenant.token });
  t.deepEqual(
    list.body.items.map((r) => r.url),
    [kept.url],
  );
});

test('public IPv6 and IPv4 literal hosts are accepted; odd spellings of public addresses are refused naming the canonical one', async (t) => {
  const tenant = await createTenant(app.services.db);
  for (const url of [
    'https://[2606:4700:4700::1111]/org/r.git',
    'https://[2a00:1450:4001:82b::200e]:8443/org/r.git',
    'https://140.82.112.3/org/r.git',
    'ssh://git@[2606:4700:4700::1111]/org/r.git',
  ]) {
    const reply = await create(tenant, { name: uniqueName(), url });
    t.is(reply.status, 201, `${url}: ${reply.text}`);
    t.is(reply.body.url, url);
  }
  for (const [url, canonical] of [
    ['https://0x8c.82.112.3/org/r.git', '140.82.112.3'],
    ['https://2354212867/org/r.git', '140.82.112.3'],
  ]) {
    const reply = await create(tenant, { name: uniqueName(), url });
    t.is(reply.status, 400, url);
    t.is(codeOf(reply), 'validation_failed', url);
    t.true(errorFor(reply, '/url')!.message.includes(canonical!), url);
  }
});

test('ssh URLs need a workspace an operator enabled; the allow-list admits a named internal host', async (t) => {
  const plain = await createTenant(app.services.db, { slugPrefix: 'plain-' });
  for (const url of ['ssh://git@git.example.com/org/r.git', 'git@github.com:org/r.git']) {
    const reply = await create(plain, { name: uniqueName(), url });
    t.is(reply.status, 400, url);
    t.is(codeOf(reply), 'ssh_repository_not_allowed', url);
    t.deepEqual(errorPaths(reply), ['/url'], url);
  }
  const allowing = await startTestApp({
    repositoryAllowedHosts: ['gitlab.internal', '10.20.0.0/16'],
  });
  try {
    const tenant = await createTenant(allowing.services.db);
    for (const url of ['https://gitlab.internal/org/r.git', 'https://10.20.3.4/org/r.git']) {
      const reply = await create(tenant, { name: uniqueName(), url }, allowing.url);
      t.is(reply.status, 201, `${url}: ${reply.text}`);
    }
    for (const url of ['https://10.21.0.1/org/r.git', 'https://127.0.0.1/r.git']) {
      const reply = await create(tenant, { name: uniqueName(), url }, allowing.url);
      t.is(codeOf(reply), 'repository_host_not_allowed', url);
    }
  } finally {
    await allowing.close();
  }
});

// Get / update / delete ------------------------------------------------------------------

test('getRepository returns the repository; an unknown id is 404', async (t) => {
  const tenant = await createTenant(app.services.db);
  const repo = await createOk(tenant, { description: 'x' });
  const got = await call<Repo>(app.url, 'GET', repoPath(tenant, repo.id), { token: tenant.token });
  t.is(got.status, 200);
  t.deepEqual(got.body, repo);

  const missing = await call(app.url, 'GET', repoPath(tenant, crypto.randomUUID()), {
    token: tenant.token,
  });
  t.is(missing.status, 404);
  t.true(isProblem(missing));
  t.is(missing.body.code, 'not_found');

  const badId = await call(app.url, 'GET', repoPath(tenant, 'nope'), { token: tenant.token });
  t.is(badId.status, 400);
  t.deepEqual(errorPaths(badId), ['/repository_id']);
});

test('updateRepository changes the given fields only and moves updated_at', async (t) => {
  const tenant = await createTenant(app.services.db);
  const repo = await createOk(tenant, { description: 'before' });
  await new Promise((r) => setTimeout(r, 5));

  const reply = await call<Repo>(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { description: 'after', default_branch: 'trunk' },
  });
  t.is(reply.status, 200, reply.text);
  assertRepoShape(t, reply.body, tenant);
  t.is(reply.body.id, repo.id);
  t.is(reply.body.name, repo.name);
  t.is(reply.body.url, repo.url);
  t.is(reply.body.description, 'after');
  t.is(reply.body.default_branch, 'trunk');
  t.is(reply.body.created_at, repo.created_at);
  t.true(reply.body.updated_at > repo.updated_at, `${reply.body.updated_at} > ${repo.updated_at}`);

  const renamed = await call<Repo>(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { name: 'renamed-repo', description: null, url: 'git@github.com:org/renamed.git' },
  });
  t.is(renamed.status, 200, renamed.text);
  t.is(renamed.body.name, 'renamed-repo');
  t.is(renamed.body.description, null);
  t.is(renamed.body.url, 'git@github.com:org/renamed.git');

  // Renaming to itself in another case is not a conflict with itself.
  const recased = await call<Repo>(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { name: 'Renamed-Repo' },
  });
  t.is(recased.status, 200, recased.text);
  t.is(recased.body.name, 'Renamed-Repo');

  const got = await call<Repo>(app.url, 'GET', repoPath(tenant, repo.id), { token: tenant.token });
  t.deepEqual(got.body, recased.body);
});

test('updateRepository rejects an empty body, bad bounds and unknown properties', async (t) => {
  const tenant = await createTenant(app.services.db);
  const repo = await createOk(tenant);

  const empty = await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: {},
  });
  t.is(empty.status, 400, empty.text);
  t.true(isProblem(empty));
  t.is(empty.body.code, 'validation_failed');

  const none = await call(app.url, 'PATCH', repoPath(tenant, repo.id), { token: tenant.token });
  t.is(none.status, 400);
  t.is(none.body.code, 'validation_failed');

  const longName = await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { name: 'n'.repeat(201) },
  });
  t.is(longName.status, 400);
  t.deepEqual(errorPaths(longName), ['/name']);

  const emptyName = await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { name: '' },
  });
  t.is(emptyName.status, 400);
  t.deepEqual(errorPaths(emptyName), ['/name']);

  const longDescription = await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { description: 'd'.repeat(2001) },
  });
  t.is(longDescription.status, 400);
  t.deepEqual(errorPaths(longDescription), ['/description']);

  const unknown = await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { colour: 'red' },
  });
  t.is(unknown.status, 400);
  t.is(unknown.body.code, 'unknown_property');

  const idChange = await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { id: crypto.randomUUID() },
  });
  t.is(idChange.status, 400);
  t.is(idChange.body.code, 'unknown_property');

  const got = await call<Repo>(app.url, 'GET', repoPath(tenant, repo.id), { token: tenant.token });
  t.deepEqual(got.body, repo, 'nothing changed');
});

test('updateRepository: renaming to a taken name (any case) is 409; an unknown id is 404', async (t) => {
  const tenant = await createTenant(app.services.db);
  const a = await createOk(tenant, { name: 'alpha' });
  const b = await createOk(tenant, { name: 'beta' });
  for (const name of ['alpha', 'ALPHA']) {
    const reply = await call(app.url, 'PATCH', repoPath(tenant, b.id), {
      token: tenant.token,
      body: { name },
    });
    t.is(reply.status, 409, name);
    t.true(isProblem(reply));
    t.is(reply.body.code, 'conflict');
  }
  const still = await call<Repo>(app.url, 'GET', repoPath(tenant, b.id), { token: tenant.token });
  t.is(still.body.name, 'beta');
  t.is(
    (await call<Repo>(app.url, 'GET', repoPath(tenant, a.id), { token: tenant.token })).body.name,
    'alpha',
  );

  const missing = await call(app.url, 'PATCH', repoPath(tenant, crypto.randomUUID()), {
    token: tenant.token,
    body: { description: 'x' },
  });
  t.is(missing.status, 404);
  t.is(missing.body.code, 'not_found');
});

test('updateRepository validates a new url with the same rules as create', async (t) => {
  const tenant = await createTenant(app.services.db);
  const repo = await createOk(tenant);
  for (const url of [...LOCAL_URLS, ...BAD_URLS]) {
    const reply = await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
      token: tenant.token,
      body: { url },
    });
    t.is(reply.status, 400, JSON.stringify(url));
    t.is(
      reply.body.code,
      LOCAL_URLS.includes(url) ? 'local_repository_not_allowed' : 'validation_failed',
    );
    t.deepEqual(errorPaths(reply), ['/url'], JSON.stringify(url));
  }
  const local = await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { url: '/etc' },
  });
  t.regex(errorFor(local, '/url')?.message ?? '', /LOCAL_REPOSITORY_WORKSPACES/);

  for (const url of GOOD_URLS) {
    const reply = await call<Repo>(app.url, 'PATCH', repoPath(tenant, repo.id), {
      token: tenant.token,
      body: { url },
    });
    t.is(reply.status, 200, `${url}: ${reply.text}`);
    t.is(reply.body.url, url);
  }
});

test('deleteRepository: then GET is 404, the list omits it, and the name can be reused', async (t) => {
  const tenant = await createTenant(app.services.db);
  const keep = await createOk(tenant);
  const repo = await createOk(tenant, { name: 'Doomed' });

  const deleted = await call<Repo>(app.url, 'DELETE', repoPath(tenant, repo.id), {
    token: tenant.token,
  });
  t.is(deleted.status, 200, deleted.text);
  assertRepoShape(t, deleted.body, tenant);
  t.is(deleted.body.id, repo.id);
  t.is(deleted.body.name, 'Doomed');

  const got = await call(app.url, 'GET', repoPath(tenant, repo.id), { token: tenant.token });
  t.is(got.status, 404);
  t.is(got.body.code, 'not_found');

  const list = await call<Page<Repo>>(app.url, 'GET', reposPath(tenant), { token: tenant.token });
  t.deepEqual(
    list.body.items.map((r) => r.id),
    [keep.id],
  );

  const again = await call(app.url, 'DELETE', repoPath(tenant, repo.id), { token: tenant.token });
  t.is(again.status, 404);
  const patch = await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { description: 'x' },
  });
  t.is(patch.status, 404);

  const reused = await create(tenant, {
    name: 'doomed',
    url: 'https://git.example.com/org/doomed.git',
  });
  t.is(reused.status, 201, reused.text);
  t.not(reused.body.id, repo.id);

  // A live repository may be renamed to the deleted one's name too.
  const renamed = await call<Repo>(app.url, 'PATCH', repoPath(tenant, keep.id), {
    token: tenant.token,
    body: { name: 'DOOMED' },
  });
  t.is(renamed.status, 409, 'the reused name is now taken by the new repository');
});

// Scopes and tenancy ---------------------------------------------------------------------

test('a token with only repositories:read can list and get but not create, update or delete', async (t) => {
  const tenant = await createTenant(app.services.db);
  const repo = await createOk(tenant);
  const reader = await createToken(app.services.db, tenant, ['repositories:read']);

  const list = await call<Page<Repo>>(app.url, 'GET', reposPath(tenant), { token: reader.token });
  t.is(list.status, 200, list.text);
  t.deepEqual(
    list.body.items.map((r) => r.id),
    [repo.id],
  );
  const got = await call<Repo>(app.url, 'GET', repoPath(tenant, repo.id), { token: reader.token });
  t.is(got.status, 200);
  t.deepEqual(got.body, repo);

  const attempts: Array<[string, Promise<Reply>]> = [
    [
      'create',
      call(app.url, 'POST', reposPath(tenant), {
        token: reader.token,
        body: { name: uniqueName(), url: 'https://h.example/r' },
      }),
    ],
    [
      'update',
      call(app.url, 'PATCH', repoPath(tenant, repo.id), {
        token: reader.token,
        body: { description: 'x' },
      }),
    ],
    ['delete', call(app.url, 'DELETE', repoPath(tenant, repo.id), { token: reader.token })],
  ];
  for (const [name, pending] of attempts) {
    const reply = await pending;
    t.is(reply.status, 403, name);
    t.true(isProblem(reply), name);
    t.is(reply.body.code, 'insufficient_scope', name);
    t.deepEqual(reply.body.required_scopes, ['repositories:write'], name);
    t.regex(reply.headers.get('www-authenticate') ?? '', /insufficient_scope/, name);
  }

  const writerOnly = await createToken(app.services.db, tenant, ['repositories:write']);
  const noRead = await call(app.url, 'GET', reposPath(tenant), { token: writerOnly.token });
  t.is(noRead.status, 403);
  t.is(noRead.body.code, 'insufficient_scope');

  const after = await call<Page<Repo>>(app.url, 'GET', reposPath(tenant), { token: tenant.token });
  t.deepEqual(after.body.items, [repo], 'nothing was written');
});

test('tenant A cannot read, update or delete tenant B repositories', async (t) => {
  const a = await createTenant(app.services.db);
  const b = await createTenant(app.services.db);
  const bRepo = await createOk(b, { name: 'secret-b' });
  await createOk(a, { name: 'mine-a' });

  const viaOwnPath = `${reposPath(a)}/${bRepo.id}`;
  const viaTheirPath = repoPath(b, bRepo.id);
  const attempts: Array<[string, string, string, unknown]> = [
    ['get own path', 'GET', viaOwnPath, undefined],
    ['patch own path', 'PATCH', viaOwnPath, { description: 'owned' }],
    ['delete own path', 'DELETE', viaOwnPath, undefined],
    ['get their path', 'GET', viaTheirPath, undefined],
    ['patch their path', 'PATCH', viaTheirPath, { description: 'owned' }],
    ['delete their path', 'DELETE', viaTheirPath, undefined],
    ['list their path', 'GET', reposPath(b), undefined],
    ['create in their path', 'POST', reposPath(b), { name: 'planted', url: 'https://h.example/r' }],
  ];
  for (const [name, method, path, body] of attempts) {
    const reply = await call(app.url, method, path, { token: a.token, body });
    t.is(reply.status, 404, `${name}: ${reply.text}`);
    t.true(isProblem(reply), name);
    t.is(reply.body.code, 'not_found', name);
    t.false(reply.text.includes('secret-b'), name);
  }

  const aList = await call<Page<Repo>>(app.url, 'GET', reposPath(a), { token: a.token });
  t.deepEqual(
    aList.body.items.map((r) => r.name),
    ['mine-a'],
  );
  const bList = await call<Page<Repo>>(app.url, 'GET', reposPath(b), { token: b.token });
  t.deepEqual(bList.body.items, [bRepo], 'B is untouched');
});

// Audit events and activity --------------------------------------------------------------

test('create, update and delete each append an audit event and an activity item', async (t) => {
  const tenant = await createTenant(app.services.db, { login: 'alice' });
  const workspace = await call<{ name: string }>(app.url, 'GET', ws(tenant), {
    token: tenant.token,
  });
  t.is(workspace.status, 200);

  const repo = await createOk(tenant, {
    name: 'tracked',
    url: 'https://git.example.com/org/tracked.git',
  });
  const updated = await call<Repo>(app.url, 'PATCH', repoPath(tenant, repo.id), {
    token: tenant.token,
    body: { name: 'tracked-2', description: 'now described' },
  });
  t.is(updated.status, 200, updated.text);
  const deleted = await call(app.url, 'DELETE', repoPath(tenant, repo.id), { token: tenant.token });
  t.is(deleted.status, 200);

  const events = await auditEventsFor(tenant, repo.id);
  t.deepEqual(
    events.map((e) => e.action).sort(),
    ['repository.created', 'repository.deleted', 'repository.updated'],
    'one per write',
  );
  for (const e of events) {
    t.is(e.resource_type, 'repository');
    t.is(e.resource_id, repo.id);
    t.is(e.actor_id, tenant.memberId);
    t.regex(e.created_at, ISO_MS);
  }
  const byAction = (action: string) => events.find((e) => e.action === action);
  const evCreated = byAction('repository.created');
  const evUpdated = byAction('repository.updated');
  const evDeleted = byAction('repository.deleted');
  t.like(evCreated!.details, {
    name: 'tracked',
    url: 'https://git.example.com/org/tracked.git',
    default_branch: 'main',
  });
  t.deepEqual(evUpdated!.details, {
    name: 'tracked-2',
    changes: {
      name: { from: 'tracked', to: 'tracked-2' },
      description: { from: null, to: 'now described' },
    },
  });
  t.like(evDeleted!.details, { name: 'tracked-2' });

  const items = await activityFor(tenant, repo.id);
  t.deepEqual(items.map((e) => e.action).sort(), [
    'repository.created',
    'repository.deleted',
    'repository.updated',
  ]);
  for (const item of items) {
    t.is(item.resource_type, 'repository');
    t.is(item.resource_id, repo.id);
    t.is(item.actor_login, 'alice');
    t.is(item.workspace_id, tenant.workspaceId);
    t.is(item.workspace_name, workspace.body.name);
  }
  const itemUpdated = items.find((e) => e.action === 'repository.updated');
  t.deepEqual(itemUpdated?.details, evUpdated!.details, 'the update shows what changed');
  t.like(items.find((e) => e.action === 'repository.created')?.details, { name: 'tracked' });
  t.like(items.find((e) => e.action === 'repository.deleted')?.details, { name: 'tracked-2' });
});

test('the default createTenant member appears as actor_login owner', async (t) => {
  const tenant = await createTenant(app.services.db);
  const repo = await createOk(tenant);
  const items = await activityFor(tenant, repo.id);
  t.is(items.length, 1);
  t.is(items[0]!.action, 'repository.created');
  t.is(items[0]!.actor_login, 'owner');
});

test('failed writes leave no audit event or activity item', async (t) => {
  const tenant = await createTenant(app.services.db);
  const repo = await createOk(tenant, { name: 'only' });
  const before = await walk<AuditEvent>(tenant, `${ws(tenant)}/audit-events`, 200);
  const beforeActivity = await walk<ActivityItem>(tenant, `${ws(tenant)}/activity`, 200);

  t.is((await create(tenant, { name: 'ONLY', url: 'https://h.example/r' })).status, 409);
  t.is((await create(tenant, { name: 'x', url: '/etc' })).status, 400);
  t.is(
    (
      await call(app.url, 'PATCH', repoPath(tenant, repo.id), {
        token: tenant.token,
        body: { url: 'http://plain/x' },
      })
    ).status,
    400,
  );
  t.is(
    (await call(app.url, 'DELETE', repoPath(tenant, crypto.randomUUID()), { token: tenant.token }))
      .status,
    404,
  );

  const after = await walk<AuditEvent>(tenant, `${ws(tenant)}/audit-events`, 200);
  const afterActivity = await walk<ActivityItem>(tenant, `${ws(tenant)}/activity`, 200);
  t.deepEqual(
    after.flatMap((p) => p.items),
    before.flatMap((p) => p.items),
  );
  t.deepEqual(
    afterActivity.flatMap((p) => p.items),
    beforeActivity.flatMap((p) => p.items),
  );
});

test('audit events and activity need members:read', async (t) => {
  const tenant = await createTenant(app.services.db);
  await createOk(tenant);
  const repoOnly = await createToken(app.services.db, tenant, [
    'repositories:read',
    'repositories:write',
  ]);
  for (const path of [`${ws(tenant)}/audit-events`, `${ws(tenant)}/activity`]) {
    const denied = await call(app.url, 'GET', path, { token: repoOnly.token });
    t.is(denied.status, 403, path);
    t.true(isProblem(denied));
    t.is(denied.body.code, 'insufficient_scope', path);
    t.deepEqual(denied.body.required_scopes, ['members:read']);

    const membersOnly = await createToken(app.services.db, tenant, ['members:read']);
    const allowed = await call(app.url, 'GET', path, { token: membersOnly.token });
    t.is(allowed.status, 200, `${path}: ${allowed.text}`);
  }
});

// Pagination -----------------------------------------------------------------------------

test('listRepositories pages newest first with limit and next_cursor, without gaps or repeats', async (t) => {
  const tenant = await createTenant(app.services.db);
  const created: Repo[] = [];
  for (let i = 0; i < 12; i++)
    created.push(await createOk(tenant, { name: `page-${String(i).padStart(2, '0')}` }));

  const pages = await walk<Repo>(tenant, reposPath(tenant), 5);
  t.deepEqual(
    pages.map((p) => p.items.length),
    [5, 5, 2],
  );
  t.deepEqual(
    pages.map((p) => p.has_more),
    [true, true, false],
  );
  t.is(typeof pages[0]!.next_cursor, 'string');
  t.is(typeof pages[1]!.next_cursor, 'string');
  t.is(pages[2]!.next_cursor, null);

  const all = pages.flatMap((p) => p.items);
  const ids = all.map((r) => r.id);
  t.is(new Set(ids).size, 12, 'no duplicates');
  t.deepEqual([...ids].sort(), created.map((r) => r.id).sort(), 'no gaps');
  t.true(isNewestFirst(all), 'created_at descending');
  // Sequential creates: the list is the creation order reversed (timestamps have millisecond
  // precision, so two creates in the same millisecond are ordered by id instead).
  const expected = [...created].sort((a, b) =>
    a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1,
  );
  t.deepEqual(
    ids,
    expected.map((r) => r.id),
  );
  for (const item of all)
    t.deepEqual(
      item,
      created.find((c) => c.id === item.id),
    );

  // One page of everything gives the same order.
  const whole = await call<Page<Repo>>(app.url, 'GET', `${reposPath(tenant)}?limit=200`, {
    token: tenant.token,
  });
  t.deepEqual(
    whole.body.items.map((r) => r.id),
    ids,
  );
  t.false(whole.body.has_more);
  t.is(whole.body.next_cursor, null);

  // Default limit (50) holds all twelve.
  const dflt = await call<Page<Repo>>(app.url, 'GET', reposPath(tenant), { token: tenant.token });
  t.is(dflt.body.items.length, 12);
  t.false(dflt.body.has_more);
});

test('a repository created between pages neither shifts nor repeats the walk', async (t) => {
  const tenant = await createTenant(app.services.db);
  const created: Repo[] = [];
  for (let i = 0; i < 12; i++) created.push(await createOk(tenant));

  const first = await call<Page<Repo>>(app.url, 'GET', `${reposPath(tenant)}?limit=5`, {
    token: tenant.token,
  });
  t.is(first.status, 200);
  t.true(first.body.has_more);

  const inserted = await createOk(tenant, { name: 'inserted-between-pages' });

  const rest: Repo[][] = [];
  let cursor = first.body.next_cursor;
  const hasMore: boolean[] = [];
  while (cursor) {
    const page = await call<Page<Repo>>(
      app.url,
      'GET',
      `${reposPath(tenant)}?limit=5&cursor=${encodeURIComponent(cursor)}`,
      {
        token: tenant.token,
      },
    );
    t.is(page.status, 200, page.text);
    rest.push(page.body.items);
    hasMore.push(page.body.has_more ?? false);
    cursor = page.body.next_cursor ?? null;
  }
  t.deepEqual(
    rest.map((p) => p.length),
    [5, 2],
  );
  t.deepEqual(hasMore, [true, false]);

  const walked = [...first.body.items, ...rest.flat()];
  const ids = walked.map((r) => r.id);
  t.is(new Set(ids).size, 12, 'no repeats');
  t.false(ids.includes(inserted.id), 'the newer repository belongs before the first page');
  t.deepEqual([...ids].sort(), created.map((r) => r.id).sort(), 'no gaps');
  t.true(isNewestFirst(walked));

  // A fresh walk shows the inserted one first.
  const fresh = await call<Page<Repo>>(app.url, 'GET', `${reposPath(tenant)}?limit=5`, {
    token: tenant.token,
  });
  t.is(fresh.body.items[0]!.id, inserted.id);
});

test('a repository deleted between pages does not shift the walk, even the cursor row itself', async (t) => {
  const tenant = await createTenant(app.services.db);
  for (let i = 0; i < 12; i++) await createOk(tenant);
  const everything = await call<Page<Repo>>(app.url, 'GET', `${reposPath(tenant)}?limit=200`, {
    token: tenant.token,
  });
  const order = everything.body.items.map((r) => r.id);
  t.is(order.length, 12);

  const first = await call<Page<Repo>>(app.url, 'GET', `${reposPath(tenant)}?limit=5`, {
    token: tenant.token,
  });
  t.deepEqual(
    first.body.items.map((r) => r.id),
    order.slice(0, 5),
  );
  // Delete the last item of page 1 (the row the cursor points at) and the first of page 2.
  for (const id of [order[4]!, order[5]!]) {
    t.is(
      (await call(app.url, 'DELETE', repoPath(tenant, id), { token: tenant.token })).status,
      200,
    );
  }
  const second = await call<Page<Repo>>(
    app.url,
    'GET',
    `${reposPath(tenant)}?limit=5&cursor=${encodeURIComponent(first.body.next_cursor ?? '')}`,
    { token: tenant.token },
  );
  t.is(second.status, 200, second.text);
  t.deepEqual(
    second.body.items.map((r) => r.id),
    order.slice(6, 11),
  );
  t.true(second.body.has_more);
});

test('limit outside 1..200 and a tampered cursor are 400 validation_failed naming the parameter', async (t) => {
  const tenant = await createTenant(app.services.db);
  for (let i = 0; i < 3; i++) await createOk(tenant);

  for (const limit of ['0', '201', 'x']) {
    const reply = await call(app.url, 'GET', `${reposPath(tenant)}?limit=${limit}`, {
      token: tenant.token,
    });
    t.is(reply.status, 400, limit);
    t.is(reply.body.code, 'validation_failed');
    t.deepEqual(errorPaths(reply), ['/limit'], limit);
  }

  const first = await call<Page<Repo>>(app.url, 'GET', `${reposPath(tenant)}?limit=1`, {
    token: tenant.token,
  });
  const good = first.body.next_cursor ?? '';
  t.truthy(good);
  const flipped = good.slice(0, 3) + (good[3] === 'A' ? 'B' : 'A') + good.slice(4);
  const tampered = [
    'not-a-cursor',
    good.slice(0, -6),
    flipped,
    cursorOf(['2026-01-01T00:00:00.000Z', 'not-a-uuid']),
    cursorOf({ createdAt: '2026-01-01T00:00:00.000Z', id: crypto.randomUUID() }),
    cursorOf(['not a date', crypto.randomUUID()]),
    cursorOf(['2026-01-01T00:00:00.000Z']),
    cursorOf([1, crypto.randomUUID()]),
  ];
  for (const cursor of tampered) {
    const reply = await call(
      app.url,
      'GET',
      `${reposPath(tenant)}?cursor=${encodeURIComponent(cursor)}`,
      {
        token: tenant.token,
      },
    );
    t.is(reply.status, 400, `${cursor}: ${reply.text}`);
    t.true(isProblem(reply));
    t.is(reply.body.code, 'validation_failed', cursor);
    t.deepEqual(errorPaths(reply), ['/cursor'], cursor);
  }

  const empty = await call(app.url, 'GET', `${reposPath(tenant)}?cursor=`, { token: tenant.token });
  t.is(empty.status, 400);
  t.deepEqual(errorPaths(empty), ['/cursor']);
});

test('a cursor whose timestamp JavaScript accepts but PostgreSQL does not is 400, not 500', async (t) => {
  // decodeCursor checks the timestamp with Date.parse, which is lenient ("1", "March 7",
  // 2026-02-30 rolled over to March 2); PostgreSQL then refuses the cast.
  const tenant = await createTenant(app.services.db);
  await createOk(tenant);
  const seen: Record<string, [number, string[]]> = {};
  for (const createdAt of ['2026-02-30T00:00:00.000Z', '1', 'March 7']) {
    const cursor = cursorOf([createdAt, crypto.randomUUID()]);
    const reply = await call(app.url, 'GET', `${reposPath(tenant)}?cursor=${cursor}`, {
      token: tenant.token,
    });
    seen[createdAt] = [reply.status, errorPaths(reply)];
    if (reply.status === 500) {
      const id = String(reply.body.request_id);
      for (const line of app.logs().split('\n')) {
        if (!line.includes(id) || !line.includes('"level":50')) continue;
        const err = (JSON.parse(line) as { err?: { message?: string } }).err;
        t.log(`${createdAt}: ${err?.message?.replace(/^.* - /, '') ?? line}`);
      }
    }
  }
  t.deepEqual(seen, {
    '2026-02-30T00:00:00.000Z': [400, ['/cursor']],
    '1': [400, ['/cursor']],
    'March 7': [400, ['/cursor']],
  });
});
