/**
 * README's GitHub Actions and GitLab CI recipes, run as those systems run them: the YAML block
 * read from README itself, `${{ }}` expressions evaluated as GitHub would, the script in
 * `bash -e` with the variables each system sets (GITHUB_*, CI_*), in a clone of a real git
 * repository with `main` and a feature branch, `npm install -g` of the CLI from the server into an
 * empty prefix, end to end against the real stack. Only the API origin differs from README's.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { CHANGES_V1, CHANGES_V2 } from './fixtures/changes-repo';

const ROOT = path.resolve(__dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-ci-'));
let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let base: string;
let head: string;

/** The first ```yaml block after `marker` in README. */
function recipe(marker: string): unknown {
  const at = README.indexOf(marker);
  if (at < 0) throw new Error(`README has no ${marker}`);
  const m = /```yaml\n([\s\S]*?)```/.exec(README.slice(at));
  return parse(m![1]!);
}

interface Run {
  code: number | null;
  out: string;
}

/** Runs a CI script as the runner would: `bash -e`, in the job's folder, with its variables. */
function runScript(script: string, env: Record<string, string>, cwd: string): Promise<Run> {
  const prefix = path.join(tmp, `npm-${Math.random().toString(36).slice(2)}`);
  const child = spawn('bash', ['--noprofile', '--norc', '-e', '-c', script], {
    cwd,
    env: {
      PATH: `${prefix}/bin:${path.dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: cwd,
      npm_config_prefix: prefix,
      npm_config_cache: path.join(tmp, '.npm'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

/** A checkout of the repository at `sha`, as the job's working folder. */
function checkout(name: string, sha: string): string {
  const dir = path.join(tmp, name);
  execFileSync('git', ['clone', '--quiet', repo.dir, dir]);
  execFileSync('git', ['checkout', '--quiet', sha], { cwd: dir });
  return dir;
}

test.before(async () => {
  execFileSync('npm', ['run', '--silent', 'build:cli'], { cwd: ROOT, stdio: 'ignore' });
  h = await startAuditHarness();
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(CHANGES_V1);
  base = repo.git('rev-parse', 'HEAD');
  repo.git('checkout', '--quiet', '-b', 'feature/reports');
  head = repo.commit(CHANGES_V2, 'reports service, payments API, legacy-db retired');
  repo.git('checkout', '--quiet', 'main');
  const created = await call(
    h.app.url,
    'POST',
    `/v1/workspaces/${tenant.workspaceId}/repositories`,
    {
      token: tenant.token,
      body: { name: 'orders', url: `file://${repo.dir}` },
    },
  );
  if (created.status !== 201) throw new Error(created.text);
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test.serial(
  'the GitHub Actions recipe blocks a pull request, then passes the push to main',
  async (t) => {
    const steps = recipe('**GitHub Actions**') as Array<{
      env: Record<string, string>;
      run?: string;
    }>;
    const step = steps[0]!;
    t.truthy(step.run);
    /** GitHub's `${{ }}` expressions, for the contexts the recipe uses. */
    const evaluate = (value: string, ctx: { prHead: string | null; sha: string }) =>
      value.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_m, expr: string) => {
        if (expr === 'secrets.ARCHAUDIT_TOKEN') return tenant.token;
        if (expr === 'github.event.pull_request.head.sha || github.sha')
          return ctx.prHead ?? ctx.sha;
        throw new Error(`an expression the test does not evaluate: ${expr}`);
      });
    const envOf = (ctx: { prHead: string | null; sha: string }, github: Record<string, string>) => {
      const out: Record<string, string> = { CI: 'true', GITHUB_ACTIONS: 'true', ...github };
      for (const [k, v] of Object.entries(step.env)) out[k] = evaluate(String(v), ctx);
      out.ARCHAUDIT_URL = h.app.url;
      return out;
    };

    // pull_request: GITHUB_SHA is the merge commit GitHub makes; the recipe audits the head.
    const pr = checkout('gh-pr', head);
    const outputs = path.join(pr, 'github-output');
    const run = await runScript(
      step.run!,
      envOf(
        { prHead: head, sha: '0'.repeat(40) },
        {
          GITHUB_EVENT_NAME: 'pull_request',
          GITHUB_REF: 'refs/pull/7/merge',
          GITHUB_REF_NAME: '7/merge',
          GITHUB_HEAD_REF: 'feature/reports',
          GITHUB_BASE_REF: 'main',
          GITHUB_SHA: '0'.repeat(40),
          GITHUB_WORKSPACE: pr,
          GITHUB_OUTPUT: outputs,
        },
      ),
      pr,
    );
    t.is(run.code, 11, run.out); // blocked: the reports service newly uses orders-db
    const sarif = JSON.parse(fs.readFileSync(path.join(pr, 'gate.sarif'), 'utf8'));
    t.is(sarif.version, '2.1.0');
    t.true(JSON.stringify(sarif).includes('service:reports'));

    // push to main: GITHUB_HEAD_REF is empty, the branch is GITHUB_REF_NAME.
    const push = checkout('gh-push', base);
    const again = await runScript(
      step.run!,
      envOf(
        { prHead: null, sha: base },
        {
          GITHUB_EVENT_NAME: 'push',
          GITHUB_REF: 'refs/heads/main',
          GITHUB_REF_NAME: 'main',
          GITHUB_HEAD_REF: '',
          GITHUB_BASE_REF: '',
          GITHUB_SHA: base,
          GITHUB_WORKSPACE: push,
          GITHUB_OUTPUT: path.join(push, 'github-output'),
        },
      ),
      push,
    );
    t.is(again.code, 0, again.out);
  },
);

test.serial(
  'the GitLab CI recipe blocks a merge request and writes the JUnit report',
  async (t) => {
    const jobs = recipe('**GitLab CI**') as Record<
      string,
      { variables: Record<string, string>; script: string[]; artifacts: unknown }
    >;
    const job = jobs['architecture-gate']!;
    const dir = checkout('gl-mr', head);
    const run = await runScript(
      job.script.join('\n'),
      {
        ...job.variables,
        ARCHAUDIT_URL: h.app.url,
        ARCHAUDIT_TOKEN: tenant.token,
        CI: 'true',
        GITLAB_CI: 'true',
        CI_PIPELINE_SOURCE: 'merge_request_event',
        CI_COMMIT_SHA: head,
        CI_COMMIT_REF_NAME: 'feature/reports',
        CI_DEFAULT_BRANCH: 'main',
        CI_MERGE_REQUEST_IID: '3',
        CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature/reports',
        CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main',
        CI_PROJECT_DIR: dir,
      },
      dir,
    );
    t.is(run.code, 11, run.out);
    const junit = fs.readFileSync(path.join(dir, 'gate.xml'), 'utf8');
    t.regex(junit, /<testsuites?[\s>]/);
    t.regex(junit, /<failure/);
  },
);
