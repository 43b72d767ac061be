/**
 * The `archaudit` CLI as a user runs it: a subprocess (the package.json bin) against the real
 * stack (API, Temporal worker, PostgreSQL). Scopes without a token, the refused token flag, an
 * audit of a local folder followed stage by stage, the gate's exit code for each outcome,
 * contract checks, `archaudit api`, and retries that honour Retry-After under a quota of 2.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { STAGE_KEYS } from '../domain/contract/values';
import { startTestApp, type TestApp } from './helpers/app';
import { startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { CHANGES_V1, CHANGES_V2 } from './fixtures/changes-repo';

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'cli', 'bin.cjs');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `archaudit args...` with only the given environment for credentials; stdout is a pipe.
 * `env.watch` sees stderr as it grows.
 */
function archaudit(
  env: { url?: string; token?: string; watch?: (stderr: string) => void },
  ...args: string[]
): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  delete childEnv.ARCHAUDIT_TOKEN;
  delete childEnv.ARCHAUDIT_URL;
  delete childEnv.CI;
  if (env.url) childEnv.ARCHAUDIT_URL = env.url;
  if (env.token) childEnv.ARCHAUDIT_TOKEN = env.token;
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    env.watch?.(stderr);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

let h: AuditHarness;
let tenant: Tenant;
let as: { url: string; token: string };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-cli-'));
const repos: TestRepo[] = [];

test.before(async () => {
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  as = { url: h.app.url, token: tenant.token };
});

test.after.always(async () => {
  await h?.close();
  for (const r of repos) r.remove();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const show = (r: Run) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

test('scopes lists the 25 scopes without a token', async (t) => {
  const r = await archaudit({ url: h.app.url }, 'scopes');
  t.is(r.code, 0, show(r));
  t.regex(r.stdout, /^SCOPE\s+DESCRIPTION/);
  t.regex(r.stdout, /repositories:read\s+\S/);
  const json = await archaudit({ url: h.app.url }, 'scopes', '--json');
  t.is(JSON.parse(json.stdout).items.length, 25);
});

test('a token given as a flag or an argument is refused, and never repeated', async (t) => {
  for (const args of [
    ['whoami', '--token', tenant.token],
    ['repos', 'list', `--api-key=${tenant.token}`],
    ['api', 'getAudit', '--param', `audit_id=${tenant.token}`],
    ['repos', 'show', tenant.token.slice(0, 22)],
  ]) {
    const r = await archaudit({ url: h.app.url }, ...args);
    t.is(r.code, 2, show(r));
    t.regex(r.stderr, /only from the ARCHAUDIT_TOKEN environment variable/);
    t.regex(r.stderr, /shell history/);
    t.false(r.stderr.includes(tenant.token.slice(0, 22)), show(r));
    t.is(r.stdout, '');
  }
});

test('whoami names the token without its secret; the token appears in no output', async (t) => {
  const who = await archaudit(as, 'whoami');
  t.is(who.code, 0, show(who));
  t.regex(who.stdout, new RegExp(`workspace:\\s+${tenant.workspaceId}`));
  t.true(who.stdout.includes(tenant.prefix));
  const runs = [
    who,
    // A server that is not there.
    await archaudit({ url: 'http://127.0.0.1:9', token: tenant.token }, 'repos', 'list'),
    // Bad requests: a malformed id, an unknown repository, a revoked-looking token.
    await archaudit(as, 'api', 'getAudit', '--param', 'audit_id=nope'),
    await archaudit(as, 'repos', 'show', 'no-such-repo'),
    await archaudit({ url: h.app.url, token: `${tenant.token.slice(0, -4)}AAAA` }, 'whoami'),
    await archaudit(as, 'whoami', '--json'),
  ];
  t.is(runs[1]!.code, 3, show(runs[1]!));
  t.regex(runs[1]!.stderr, /Cannot reach http:\/\/127\.0\.0\.1:9/);
  t.is(runs[2]!.code, 1, show(runs[2]!));
  t.regex(runs[2]!.stderr, /validation_failed: .*\[cli-[0-9a-f-]+\]/);
  t.regex(runs[2]!.stderr, /\/audit_id/);
  t.is(runs[3]!.code, 1);
  t.is(runs[4]!.code, 3, show(runs[4]!));
  t.regex(runs[4]!.stderr, /invalid_token/);
  for (const r of runs) {
    t.false(r.stdout.includes(tenant.token), show(r));
    t.false(r.stderr.includes(tenant.token), show(r));
    t.false(/at .*\.ts:\d+/.test(r.stderr), `no stack trace: ${show(r)}`);
  }
});

test('audit run --path --wait packs the folder (respecting .gitignore) and prints every stage', async (t) => {
  const dir = path.join(tmp, 'service');
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'build'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.gitignore'), 'build/\n*.log\n');
  fs.writeFileSync(path.join(dir, 'src', '.gitignore'), 'secret.txt\n');
  for (const [p, text] of Object.entries({
    ...CHANGES_V1,
    'build/out.js': 'built',
    'debug.log': 'log',
    'src/secret.txt': 'x',
  })) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), text);
  }
  const r = await archaudit(as, 'audit', 'run', '--path', dir, '--wait', '--timeout', '300');
  t.is(r.code, 0, show(r));
  // .gitignore (root and nested) applied: the fixture files and the root .gitignore only.
  const expected = Object.keys(CHANGES_V1).length + 2;
  t.regex(r.stderr, new RegExp(`packed ${expected} files`), show(r));
  for (const key of STAGE_KEYS)
    t.regex(
      r.stdout,
      new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\] stage ${key}: (completed|skipped)`, 'm'),
      key,
    );
  t.regex(r.stdout, /^\[\d\d:\d\d:\d\d\] audit [0-9a-f-]+: completed$/m);
  t.regex(r.stdout, /^status:\s+completed$/m);
  t.regex(r.stdout, /^entities:\s+\d+$/m);
  t.regex(r.stdout, /^findings:\s+high \d+, medium \d+, low \d+$/m);
  t.regex(r.stdout, /^gate:\s+insufficient_evidence$/m);
  t.regex(r.stdout, /^cost:\s+\$\d/m);
  const auditId = /audit ([0-9a-f-]{36}) started/.exec(r.stdout)![1]!;
  const audit = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${tenant.workspaceId}/audits/${auditId}`,
    {
      token: tenant.token,
    },
  );
  const upload = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${tenant.workspaceId}/uploads/${audit.body.upload_id}`,
    { token: tenant.token },
  );
  t.is(upload.body.file_count, expected);

  // The records of that audit, through the other commands.
  const diagram = await archaudit(as, 'diagram', auditId);
  t.is(diagram.code, 0, show(diagram));
  t.regex(diagram.stdout, /^flowchart/);
  const svg = path.join(tmp, 'diagram.svg');
  t.is((await archaudit(as, 'diagram', auditId, '--format', 'svg', '--output', svg)).code, 0);
  t.regex(fs.readFileSync(svg, 'utf8'), /^<svg /);
  const logs = await archaudit(as, 'audit', 'logs', auditId, '--follow');
  t.is(logs.code, 0, show(logs));
  t.regex(logs.stdout, /^\S+Z (info|warning|error)\s+\w+\s+\S/m);
  const findings = await archaudit(as, 'findings', 'list', '--json', '--limit', '500');
  t.is(findings.code, 0, show(findings));
  const high = await archaudit(as, 'findings', 'list', '--severity', 'high', '--json');
  t.true(JSON.parse(high.stdout).every((f: any) => f.severity === 'high'));
  t.true(JSON.parse(findings.stdout).length >= JSON.parse(high.stdout).length);
  const open = await archaudit(as, 'uncertainty', 'list', '--state', 'open');
  t.is(open.code, 0, show(open));
  const decisions = await archaudit(as, 'decisions', 'list');
  t.is(decisions.code, 0, show(decisions));
  const preview = await archaudit(
    as,
    ...['schedules', 'preview', '--timezone', 'Europe/Paris', '--cadence', 'weekly'],
    ...['--weekday', '1', '--at', '06:30', '--count', '3', '--json'],
  );
  t.is(preview.code, 0, show(preview));
  t.is(JSON.parse(preview.stdout).runs.length, 3);
  const badTime = await archaudit(
    as,
    ...['schedules', 'preview', '--timezone', 'UTC', '--cadence', 'daily', '--at', '25h'],
  );
  t.is(badTime.code, 2);
});

test('audit run --path --repo: the folder of a repository; findings list says whose each finding is', async (t) => {
  const own = await createTenant(h.app.services.db);
  const me = { url: h.app.url, token: own.token };
  const git = createRepo(CHANGES_V1);
  repos.push(git);
  const registered = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${own.workspaceId}/repositories`,
    {
      token: own.token,
      body: { name: 'orders', url: `file://${git.dir}` },
    },
  );
  t.is(registered.status, 201, registered.text);
  const dir = path.join(tmp, 'orders-folder');
  for (const [p, text] of Object.entries(CHANGES_V1)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), text);
  }
  const named = await archaudit(
    me,
    'audit',
    'run',
    '--path',
    dir,
    '--repo',
    'orders',
    '--wait',
    '--json',
  );
  t.is(named.code, 0, show(named));
  t.is(JSON.parse(named.stdout).audit.repository_id, registered.body.id);
  const loose = await archaudit(me, 'audit', 'run', '--path', dir, '--wait', '--json');
  t.is(loose.code, 0, show(loose));
  const looseId = JSON.parse(loose.stdout).audit.id as string;

  const table = await archaudit(me, 'findings', 'list');
  t.is(table.code, 0, show(table));
  t.regex(table.stdout, /\bSOURCE\b/);
  t.regex(table.stdout, /\borders\b/, "the named folder's findings are the repository's");
  t.true(
    table.stdout.includes(`upload orders-folder.tar.gz (audit ${looseId.slice(0, 8)})`),
    show(table),
  );
  const both = await archaudit(me, 'audit', 'run', '--path', dir, '--branch', 'main');
  t.is(both.code, 2, show(both));
  t.regex(both.stderr, /--branch and --commit apply to a repository audit/);
});

test('lists follow next_cursor page by page up to --limit', async (t) => {
  const own = await createTenant(h.app.services.db);
  for (let i = 0; i < 5; i++)
    await call(h.app.url, 'POST', `/v1/workspaces/${own.workspaceId}/repositories`, {
      token: own.token,
      body: { name: `paged-${i}`, url: `https://example.com/acme/paged-${i}.git` },
    });
  const listPath = `"path":"/v1/workspaces/${own.workspaceId}/repositories"`;
  const requests = () =>
    h.app
      .logs()
      .split('\n')
      .filter((l) => l.includes(listPath)).length;
  const before = requests();
  const env = { url: h.app.url, token: own.token };
  const r = await archaudit(env, 'repos', 'list', '--limit', '4', '--page-size', '2', '--json');
  t.is(r.code, 0, show(r));
  const names = JSON.parse(r.stdout).map((x: any) => x.name);
  t.is(names.length, 4);
  t.is(new Set(names).size, 4);
  t.is(requests() - before, 2);
  const all = await archaudit(env, 'repos', 'list', '--page-size', '2', '--json');
  t.is(JSON.parse(all.stdout).length, 5);
  t.is(requests() - before, 5);
  t.is((await archaudit(env, 'repos', 'list', '--limit', '0')).code, 2);
});

/** Audits a repository through the CLI and returns the audit id. */
async function auditWithCli(repo: string): Promise<string> {
  const r = await archaudit(as, 'audit', 'run', '--repo', repo, '--wait', '--json');
  if (r.code !== 0) throw new Error(show(r));
  return JSON.parse(r.stdout).audit.id;
}

test.serial(
  'audit gate: one exit code per outcome, --fail-on, and the CI renderings',
  async (t) => {
    const a = createRepo(CHANGES_V1);
    const b = createRepo(CHANGES_V1);
    repos.push(a, b);
    for (const [name, repo] of [
      ['gate-a', a],
      ['gate-b', b],
    ] as const) {
      const add = await archaudit(
        as,
        'repos',
        'add',
        name,
        `file://${repo.dir}`,
        '--default-branch',
        'main',
      );
      t.is(add.code, 0, show(add));
    }
    const gate = (id: string, ...extra: string[]) => archaudit(as, 'audit', 'gate', id, ...extra);

    const first = await auditWithCli('gate-a');
    const insufficient = await gate(first);
    t.is(insufficient.code, 12, show(insufficient));
    t.regex(insufficient.stdout, /^gate: insufficient_evidence/);
    t.is((await gate(first, '--fail-on', 'review,blocked')).code, 0);

    const again = await auditWithCli('gate-a');
    const pass = await gate(again);
    t.is(pass.code, 0, show(pass));
    t.regex(pass.stdout, /^gate: pass/);

    // A policy whose blocking rules only ask for a review: gate-b's change is reviewed.
    await auditWithCli('gate-b');
    const ws = `/v1/workspaces/${tenant.workspaceId}`;
    const policy = await call(h.app.url, 'GET', `${ws}/policies/gate`, { token: tenant.token });
    const put = (rules: unknown[], expected_version: number) =>
      call(h.app.url, 'PUT', `${ws}/policies/gate`, {
        token: tenant.token,
        body: {
          enabled: true,
          confidence_floor: policy.body.confidence_floor,
          rules,
          expected_version,
        },
      });
    const reviewOnly = policy.body.rules.map((r: { consequence: string }) => ({
      ...r,
      consequence: 'review',
    }));
    t.is((await put(reviewOnly, policy.body.version)).status, 200);
    b.commit(CHANGES_V2, 'v2');
    const reviewed = await auditWithCli('gate-b');
    const review = await gate(reviewed);
    t.is(review.code, 10, show(review));
    t.is((await gate(reviewed, '--fail-on', 'blocked')).code, 0);

    t.is((await put(policy.body.rules, policy.body.version + 1)).status, 200);
    a.commit(CHANGES_V2, 'v2');
    const blockedId = await auditWithCli('gate-a');
    const blocked = await gate(blockedId);
    t.is(blocked.code, 11, show(blocked));
    t.regex(blocked.stdout, /datastore:legacy-db\s+blocked/);
    t.is((await gate(blockedId, '--fail-on', 'review')).code, 0);

    const sarifFile = path.join(tmp, 'gate.sarif');
    const sarif = await gate(blockedId, '--format', 'sarif', '--output', sarifFile);
    t.is(sarif.code, 11);
    t.regex(sarif.stderr, /gate: blocked \(sarif written to/);
    t.is(JSON.parse(fs.readFileSync(sarifFile, 'utf8')).version, '2.1.0');
    const junit = await gate(blockedId, '--format', 'junit');
    t.regex(junit.stdout, /<testcase[^>]*name="datastore-removed"/);
    const md = await gate(blockedId, '--format', 'markdown');
    t.regex(md.stdout, /Architecture gate: blocked/);
    const json = await gate(blockedId, '--json');
    t.is(JSON.parse(json.stdout).outcome, 'blocked');
    t.is((await gate(blockedId, '--fail-on', 'nonsense')).code, 2);
    const unknown = await gate('00000000-0000-4000-8000-000000000000');
    t.is(unknown.code, 1);
    t.regex(unknown.stderr, /not_found: /);
  },
);

test('contract check: the served contract passes; a baseline it breaks is listed, exit 1', async (t) => {
  const ok = await archaudit({ url: h.app.url }, 'contract', 'check');
  t.is(ok.code, 0, show(ok));
  t.regex(ok.stdout, /valid OpenAPI 3\.1/);
  t.regex(ok.stdout, /breaking changes: 0/);

  const got = await archaudit({ url: h.app.url }, 'contract', 'get');
  const baseline = JSON.parse(got.stdout);
  // A baseline that knew an operation the server no longer has, another scope, another enum
  // value, and a field the server now requires.
  baseline.paths['/v1/workspaces/{workspace_id}/legacy-reports'] = {
    get: { ...baseline.paths['/v1/scopes'].get, operationId: 'listLegacyReports' },
  };
  baseline.paths['/v1/workspaces/{workspace_id}/audits/{audit_id}'].get['x-required-scope'] =
    'reports:read';
  baseline.components.schemas.ArchitectureDecisionState.anyOf.push({
    const: 'legacy',
    type: 'string',
  });
  const create = baseline.components.schemas.RepositoryCreate;
  create.required = create.required.filter((f: string) => f !== 'url');
  const file = path.join(tmp, 'baseline.json');
  fs.writeFileSync(file, JSON.stringify(baseline));
  const broken = await archaudit({ url: h.app.url }, 'contract', 'check', '--against', file);
  t.is(broken.code, 1, show(broken));
  t.regex(
    broken.stdout,
    /removed operation listLegacyReports \(GET \/v1\/workspaces\/\{workspace_id\}\/legacy-reports\)/,
  );
  t.regex(broken.stdout, /getAudit: scope changed from reports:read to audits:read/);
  t.regex(broken.stdout, /createRepository: body\.url is now required/);
  t.regex(broken.stdout, /narrowed enum at .*no longer accepts "legacy"/);
  const json = await archaudit(
    { url: h.app.url },
    'contract',
    'check',
    '--against',
    file,
    '--json',
  );
  t.is(json.code, 1);
  t.true(JSON.parse(json.stdout).breaking.some((c: any) => c.operation === 'listLegacyReports'));

  // The other way round the operation is an addition: reported, exit 0.
  const served = path.join(tmp, 'served.json');
  fs.writeFileSync(served, got.stdout);
  const reverse = await archaudit(
    { url: h.app.url },
    ...['contract', 'check', '--against', served, '--file', file, '--json'],
  );
  const addition = JSON.parse(reverse.stdout);
  t.true(addition.additions.some((c: any) => /new operation listLegacyReports/.test(c.text)));

  // A document with a path outside /v1, or another server, is refused; an invalid one too.
  const outside = JSON.parse(got.stdout);
  outside.servers = [{ url: 'https://elsewhere.example.com' }];
  outside.paths['/admin/reset'] = outside.paths['/v1/scopes'];
  fs.writeFileSync(file, JSON.stringify(outside));
  const refused = await archaudit({ url: h.app.url }, 'contract', 'check', '--file', file);
  t.is(refused.code, 1);
  t.regex(refused.stdout, /another server: https:\/\/elsewhere\.example\.com/);
  t.regex(refused.stdout, /the path \/admin\/reset is outside \/v1/);
  outside.paths['/v1/scopes'].get.responses = 'none';
  fs.writeFileSync(file, JSON.stringify(outside));
  const invalid = await archaudit({ url: h.app.url }, 'contract', 'check', '--file', file);
  t.is(invalid.code, 1);
  t.regex(invalid.stdout, /NOT a valid OpenAPI 3\.1 document/);
});

test('archaudit api calls any operation by its id, and names its scope in --help', async (t) => {
  const help = await archaudit({}, 'api', 'createRepository', '--help');
  t.is(help.code, 0);
  t.regex(help.stdout, /POST \/v1\/workspaces\/\{workspace_id\}\/repositories/);
  t.regex(help.stdout, /Scope: repositories:write/);

  const health = await archaudit({ url: h.app.url }, 'api', 'getHealth');
  t.is(health.code, 0, show(health));
  t.is(JSON.parse(health.stdout).db, 'ok');

  const body = path.join(tmp, 'repo.json');
  fs.writeFileSync(
    body,
    JSON.stringify({ name: 'via-api', url: 'https://example.com/acme/via-api.git' }),
  );
  const created = await archaudit(as, 'api', 'createRepository', '--body', body);
  t.is(created.code, 0, show(created));
  const id = JSON.parse(created.stdout).id;
  const read = await archaudit(as, 'api', 'getRepository', '--param', `repository_id=${id}`);
  t.is(read.code, 0, show(read));
  t.is(JSON.parse(read.stdout).name, 'via-api');
  const listed = await archaudit(as, 'repos', 'list', '--limit', '1', '--json');
  t.is(JSON.parse(listed.stdout).length, 1);

  const unknownParam = await archaudit(as, 'api', 'getRepository', '--param', 'nope=1');
  t.is(unknownParam.code, 2);
  t.regex(unknownParam.stderr, /has no parameter nope \(it has: workspace_id, repository_id\)/);
  const missing = await archaudit(as, 'api', 'getRepository');
  t.is(missing.code, 2);
  const noToken = await archaudit({ url: h.app.url }, 'api', 'listRepositories');
  t.is(noToken.code, 3);
  t.regex(noToken.stderr, /ARCHAUDIT_TOKEN is not set/);
});

test('retries honour Retry-After under a quota of 2, never past the deadline', async (t) => {
  const app: TestApp = await startTestApp({ rateLimitQuota: 2, rateLimitWindowSeconds: 30 });
  // The limiter's clock is held still by the test and moved on when the test says so, so the
  // outcome does not depend on how fast the CLI starts on a loaded machine.
  let now = Date.now();
  (app.services.rateLimiter as unknown as { now: () => number }).now = () => now;
  try {
    const spend = async (token: string) => {
      for (let i = 0; i < 3; i++) await call(app.url, 'GET', '/v1/token', { token });
    };
    const patient = await createTenant(app.services.db);
    await spend(patient.token);
    const r = await archaudit(
      {
        url: app.url,
        token: patient.token,
        // The window ends once the CLI has been told to wait (and waits).
        watch: (err) => {
          if (err.includes('retrying in')) now += 30_000;
        },
      },
      ...['whoami', '--json'],
    );
    t.is(r.code, 0, show(r));
    t.is(JSON.parse(r.stdout).workspace_id, patient.workspaceId);
    const said = /429 from GET \/v1\/token: retrying in (\d+)s as Retry-After says/.exec(r.stderr);
    t.truthy(said, show(r));
    t.is(Number(said![1]), 30);
    // It waited as long as the server asked before retrying (a lower bound: never earlier).
    t.true(r.ms >= 29_000, `${r.ms} ms`);

    const hurried = await createTenant(app.services.db);
    await spend(hurried.token);
    const late = await archaudit(
      { url: app.url, token: hurried.token },
      'whoami',
      '--deadline',
      '5',
    );
    t.is(late.code, 3, show(late));
    t.regex(late.stderr, /the wait asked for \(30s\) passes the 5s deadline; giving up/);
    t.regex(late.stderr, /rate_limited: .*\[cli-/);
  } finally {
    await app.close();
  }
});
