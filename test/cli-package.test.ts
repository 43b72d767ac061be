/**
 * The CLI as someone without this checkout gets it: `npm run build:cli` makes the tarball, which
 * the API serves and npm installs from there into an empty folder; it is run from that folder
 * with a PATH that holds no tsx, against the real stack: README's CLI commands, the GitHub Actions
 * step (`--branch` with `--commit`), and the gate's loud failures (an empty, malformed or unknown
 * id, an ended audit without a gate, an answer that is not the API's).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { CHANGES_V1, CHANGES_V2 } from './fixtures/changes-repo';

const ROOT = path.resolve(__dirname, '..');
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-install-'));
let bin: string;
let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The installed `archaudit`, as a shell would find it: only node's folder and /usr/bin on PATH. */
function archaudit(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const child = spawn(bin, args, {
    cwd: folder,
    env: {
      PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: folder,
      ARCHAUDIT_URL: h.app.url,
      ARCHAUDIT_TOKEN: tenant.token,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const cli = (...args: string[]) => archaudit({}, ...args);
const show = (r: Run) => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;

test.before(async () => {
  execFileSync('npm', ['run', '--silent', 'build:cli'], { cwd: ROOT, stdio: 'ignore' });
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(CHANGES_V1);
  // As README says: from the server itself, never from a public registry (asynchronously: the
  // server answering npm runs in this process).
  await promisify(execFile)(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefix',
      folder,
      `${h.app.url}/cli/archaudit-cli.tgz`,
    ],
    {
      cwd: folder,
      env: { ...process.env, npm_config_cache: path.join(folder, '.npm') },
    },
  );
  bin = path.join(folder, 'node_modules', '.bin', 'archaudit');
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
  fs.rmSync(folder, { recursive: true, force: true });
});

test.serial('the installed package is the bundle alone: no tsx, no dependencies', (t) => {
  const installed = path.join(folder, 'node_modules');
  t.deepEqual(
    fs.readdirSync(installed).filter((n) => !n.startsWith('.')),
    ['archaudit-cli'],
  );
  const source = fs.readFileSync(path.join(installed, 'archaudit-cli', 'archaudit.cjs'), 'utf8');
  t.true(source.startsWith('#!/usr/bin/env node'));
  t.false(/require\(["']tsx/.test(source));
});

test.serial("README's CLI commands run from the installed package", async (t) => {
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    t.is(r.code, 0, `${args.join(' ')}: ${show(r)}`);
    return r;
  };
  t.regex((await ok('--help')).stdout, /Usage: archaudit/);
  t.regex((await ok('scopes')).stdout, /audits:write/);
  t.regex((await ok('whoami')).stdout, /aat_/);
  await ok('contract', 'get', '--output', 'openapi.json');
  t.true(JSON.parse(fs.readFileSync(path.join(folder, 'openapi.json'), 'utf8')).openapi >= '3.1');
  t.regex((await ok('contract', 'check')).stdout, /breaking changes: 0/);
  await ok('contract', 'check', '--against', 'openapi.json');
  await ok('repos', 'add', 'orders', `file://${repo.dir}`, '--default-branch', 'main');
  t.regex((await ok('repos', 'list', '--limit', '20')).stdout, /orders/);
  await ok('repos', 'show', 'orders');
  const run = await ok('audit', 'run', '--repo', 'orders', '--branch', 'main', '--wait', '--json');
  const auditId = JSON.parse(run.stdout).audit.id as string;
  await ok('audit', 'logs', auditId);
  await ok('audit', 'logs', auditId, '--follow');
  await ok(
    'audit',
    'run',
    '--repo',
    'orders',
    '--commit',
    repo.git('rev-parse', 'HEAD'),
    '--deep-review',
  );
  // A folder, packed (.gitignore applied) and uploaded by the bundled CLI.
  fs.mkdirSync(path.join(folder, 'src'));
  for (const [p, content] of Object.entries(CHANGES_V1)) {
    fs.mkdirSync(path.dirname(path.join(folder, 'src', p)), { recursive: true });
    fs.writeFileSync(path.join(folder, 'src', p), content);
  }
  fs.writeFileSync(path.join(folder, 'src', '.gitignore'), 'secrets.env\n');
  fs.writeFileSync(path.join(folder, 'src', 'secrets.env'), 'X=1\n');
  const packed = await ok('audit', 'run', '--path', 'src', '--wait', '--timeout', '900');
  t.regex(packed.stderr + packed.stdout, /packed \d+ files/);
  // The first audit has no baseline: insufficient_evidence, exit 12 by default.
  t.is((await cli('audit', 'gate', auditId)).code, 12);
  await ok(
    'audit',
    'gate',
    auditId,
    '--fail-on',
    'blocked',
    '--format',
    'sarif',
    '--output',
    'gate.sarif',
  );
  t.is(JSON.parse(fs.readFileSync(path.join(folder, 'gate.sarif'), 'utf8')).version, '2.1.0');
  t.regex((await ok('diagram', auditId, '--format', 'mermaid')).stdout, /flowchart|graph/);
  await ok('findings', 'list', '--severity', 'high', '--status', 'open');
  await ok('decisions', 'list', '--status', 'in_review');
  await ok('uncertainty', 'list', '--state', 'open', '--blocking');
  await ok(
    'schedules',
    'preview',
    '--timezone',
    'Europe/Berlin',
    '--cadence',
    'weekly',
    '--weekday',
    '1',
    '--at',
    '02:30',
  );
  await ok(
    'schedules',
    'create',
    '--name',
    'nightly',
    '--repo',
    'orders',
    '--timezone',
    'UTC',
    '--cadence',
    'daily',
    '--at',
    '02:00',
  );
  t.regex((await ok('schedules', 'list')).stdout, /nightly/);
  await ok('api', '--help');
  await ok('api', 'getAuditCost', '--help');
  await ok('api', 'getAuditCost', '--param', `audit_id=${auditId}`);
});

test.serial(
  "the GitHub Actions step (--commit with --branch) gates a pull request's head against main",
  async (t) => {
    repo.git('checkout', '--quiet', '-b', 'feature/reports');
    const head = repo.commit(CHANGES_V2, 'reports service');
    repo.git('checkout', '--quiet', 'main');
    const run = await cli(
      'audit',
      'run',
      '--repo',
      'orders',
      '--commit',
      head,
      '--branch',
      'feature/reports',
      '--wait',
      '--json',
    );
    t.is(run.code, 0, show(run));
    const id = JSON.parse(run.stdout).audit.id as string;
    const gate = await cli('audit', 'gate', id, '--fail-on', 'blocked,insufficient_evidence');
    t.is(gate.code, 11, show(gate));
    t.regex(gate.stdout, /^gate: blocked/m);
  },
);

test.serial(
  'the gate fails loudly: empty, malformed and unknown ids, foreign answers',
  async (t) => {
    for (const id of ['', 'null', 'undefined', '../audits', '12345']) {
      const r = await cli('audit', 'gate', id, '--fail-on', 'blocked');
      t.is(r.code, 2, `${JSON.stringify(id)}: ${show(r)}`);
      t.regex(r.stderr, id === '' ? /audit id is empty/ : /is not a audit id|is not an? audit id/);
    }
    const unknown = await cli(
      'audit',
      'gate',
      '00000000-0000-4000-8000-000000000000',
      '--fail-on',
      'blocked',
    );
    t.is(unknown.code, 1, show(unknown));
    t.is((await cli('decisions', 'show', '')).code, 2);
    // An audit that failed (no such branch) has no gate: exit 1 even when --fail-on leaves
    // insufficient_evidence out.
    const failed = await cli(
      'audit',
      'run',
      '--repo',
      'orders',
      '--branch',
      'no-such-branch',
      '--wait',
      '--json',
    );
    t.is(failed.code, 1, show(failed));
    const failedId = JSON.parse(failed.stdout).audit.id as string;
    const noGate = await cli('audit', 'gate', failedId, '--fail-on', 'blocked');
    t.is(noGate.code, 1, show(noGate));
    t.regex(noGate.stderr, /failed without a change gate/);
    t.is((await cli('audit', 'run', '--repo', 'orders', '--commit', 'abc')).code, 2);
    t.is((await cli('audit', 'run', '--repo', 'orders', '--branch', '')).code, 2);

    // Something that is not the API answers 200 to everything: never a pass.
    const impostor = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ items: [], next_cursor: null, outcome: 'pass' }));
    });
    await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', r));
    try {
      const port = (impostor.address() as { port: number }).port;
      const r = await archaudit(
        { ARCHAUDIT_URL: `http://127.0.0.1:${port}` },
        'audit',
        'gate',
        '00000000-0000-4000-8000-000000000000',
        '--fail-on',
        'blocked',
      );
      t.not(r.code, 0, show(r));
    } finally {
      impostor.close();
    }
  },
);
