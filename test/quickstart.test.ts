/**
 * README's quick start, run as a new user would: `npm start` in a temporary data folder (embedded
 * PostgreSQL and its own Temporal dev server), read the printed token, call listWorkspaces with
 * it, press Ctrl-C, and check that no process is left behind. A second start reuses the data.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { portOutsideEphemeralRange } from './helpers/processes';
import { Browser, hiddenField } from './helpers/oauth-flow';
import { npmStart } from './helpers/npm-start';

const ROOT = path.resolve(__dirname, '..');

interface Started {
  child: ChildProcess;
  output: () => string;
  token: string;
  curl: string;
}

async function startIn(dataDir: string, ports: Record<string, number>): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(ports.api),
    TEMPORAL_DEV_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    LOG_LEVEL: 'warn',
  };
  // A fresh user has neither of these set: npm start must bring up its own services.
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  const { child, output } = await npmStart(ROOT, env, 150_000);
  const out = output();
  const token = /Demo token:\s+(aat_\S+)/.exec(out)?.[1] ?? '';
  const curl = /^\s*(curl .*)$/m.exec(out)?.[1] ?? '';
  return { child, output, token, curl };
}

/** Sends Ctrl-C to the group; true when npm ended by exit 0 or by the SIGINT itself (as in a terminal). */
async function ctrlC(child: ChildProcess): Promise<boolean> {
  const exited = new Promise<boolean>((resolve) =>
    child.once('exit', (code, signal) => resolve(code === 0 || signal === 'SIGINT')),
  );
  process.kill(-child.pid!, 'SIGINT');
  return Promise.race([
    exited,
    new Promise<boolean>((_, reject) =>
      setTimeout(() => reject(new Error('npm start did not stop in 60 s')), 60_000),
    ),
  ]);
}

function cleanPostgresShutdowns(dataDir: string): number {
  const log = fs.readFileSync(path.join(dataDir, 'postgres.log'), 'utf8');
  return log.split('database system is shut down').length - 1;
}

function processesUsing(dataDir: string): string[] {
  const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return ps.split('\n').filter((line) => line.includes(dataDir) && !line.includes('ps -eo'));
}

async function waitForNoProcesses(dataDir: string): Promise<string[]> {
  for (let i = 0; i < 50; i++) {
    const left = processesUsing(dataDir);
    if (left.length === 0) return [];
    await new Promise((r) => setTimeout(r, 200));
  }
  return processesUsing(dataDir);
}

/**
 * npm start's demo: readable without a token (read-only), its repository (under DATA_DIR, the one
 * folder there a local source may be in) audited to completion, the rest of DATA_DIR refused.
 */
async function demoChecks(t: ExecutionContext, api: string, token: string, dataDir: string) {
  const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const page = (await (await fetch(`${api}/v1/workspaces`, { headers: auth })).json()) as {
    items: Array<{ id: string }>;
  };
  const ws = `${api}/v1/workspaces/${page.items[0]!.id}`;
  const anonymous = await fetch(`${ws}/repositories`);
  t.is(anonymous.status, 200, 'the demo workspace is readable without a token');
  const repos = (await anonymous.json()) as { items: Array<{ id: string; url: string }> };
  t.is(repos.items[0]!.url, `file://${path.join(dataDir, 'demo-repo')}`);
  const anonymousWrite = await fetch(`${ws}/repositories`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'x', url: 'https://git.example.com/x.git' }),
  });
  t.is(anonymousWrite.status, 401, 'but not writable');

  const protectedPath = await fetch(`${ws}/repositories`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'pg', url: `file://${path.join(dataDir, 'postgres')}` }),
  });
  t.is(protectedPath.status, 400);
  t.is(((await protectedPath.json()) as { code: string }).code, 'repository_path_protected');

  const started = await fetch(`${ws}/audits`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ repository_id: repos.items[0]!.id }),
  });
  t.is(started.status, 202);
  const { id } = (await started.json()) as { id: string };
  let status = 'queued';
  for (let i = 0; i < 600 && ['queued', 'running'].includes(status); i++) {
    await new Promise((r) => setTimeout(r, 250));
    status = ((await (await fetch(`${ws}/audits/${id}`)).json()) as { status: string }).status;
  }
  t.is(status, 'completed', 'the demo repository is audited');
}

test('npm start, the printed token, listWorkspaces, Ctrl-C, nothing left running; data reused', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-quickstart-'));
  const ports = {
    api: await portOutsideEphemeralRange(),
    temporal: await portOutsideEphemeralRange(),
    ui: await portOutsideEphemeralRange(),
  };
  try {
    const first = await startIn(dataDir, ports);
    t.regex(first.token, /^aat_[a-z0-9]{12}_/);
    t.is(fs.readFileSync(path.join(dataDir, 'demo-token'), 'utf8').trim(), first.token);
    t.regex(first.output(), new RegExp(`API:\\s+http://127\\.0\\.0\\.1:${ports.api}/v1`));
    t.regex(first.output(), new RegExp(`Temporal UI:\\s+http://localhost:${ports.ui}`));

    const res = await fetch(`http://127.0.0.1:${ports.api}/v1/workspaces`, {
      headers: { Authorization: `Bearer ${first.token}` },
    });
    t.is(res.status, 200);
    const page = (await res.json()) as { items: Array<{ slug: string }> };
    t.deepEqual(
      page.items.map((w) => w.slug),
      ['demo'],
    );

    // The printed curl line works as printed.
    t.true(first.curl.startsWith('curl '));
    const curlOut = execFileSync(
      'bash',
      ['-c', `${first.curl} -s -o /dev/null -w '%{http_code}'`],
      { encoding: 'utf8' },
    );
    t.is(curlOut, '200');

    // The Temporal UI answers on its port.
    const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
    t.is(ui.status, 200);

    const token = await fetch(`http://127.0.0.1:${ports.api}/v1/token`, {
      headers: { Authorization: `Bearer ${first.token}` },
    });
    t.is(
      ((await token.json()) as { scopes: string[] }).scopes.length,
      25,
      'the demo token holds all 25 scopes',
    );

    await demoChecks(t, `http://127.0.0.1:${ports.api}`, first.token, dataDir);

    // The printed demo password signs the demo member in (the MCP consent flow's first step).
    const password = /Sign-in:\s+login demo, password (\S+)/.exec(first.output())?.[1] ?? '';
    t.is(fs.readFileSync(path.join(dataDir, 'demo-password'), 'utf8').trim(), password);
    const browser = new Browser();
    const form = await browser.request(`http://127.0.0.1:${ports.api}/session/sign-in`);
    const signedIn = await browser.request(`http://127.0.0.1:${ports.api}/session/sign-in`, {
      form: {
        csrf: hiddenField(form.text, 'csrf'),
        return_to: '/session',
        login: 'demo',
        password,
      },
    });
    t.is(signedIn.status, 303);

    t.true(await ctrlC(first.child));
    t.deepEqual(await waitForNoProcesses(dataDir), [], 'no process left behind');
    t.is(cleanPostgresShutdowns(dataDir), 1, 'PostgreSQL shut down cleanly');

    // A second start reuses the data: same workspace, same token.
    const second = await startIn(dataDir, ports);
    t.is(second.token, first.token);
    const again = await fetch(`http://127.0.0.1:${ports.api}/v1/workspaces`, {
      headers: { Authorization: `Bearer ${second.token}` },
    });
    t.is(again.status, 200);
    t.is(((await again.json()) as { items: unknown[] }).items.length, 1);
    t.true(await ctrlC(second.child));
    t.deepEqual(await waitForNoProcesses(dataDir), []);
    t.is(cleanPostgresShutdowns(dataDir), 2);
  } finally {
    for (const line of processesUsing(dataDir)) {
      const pid = Number(line.trim().split(/\s+/)[0]);
      if (pid) process.kill(pid, 'SIGKILL');
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
