/**
 * The process launcher that starts the short git commands (activities/source/process-launcher.ts):
 * results equal running the command here, deadlines kill the command's whole process group, the
 * launcher never keeps its parent alive, and it goes away with its parent, killing what still
 * runs.
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import test from 'ava';
import { runCommand, runHere, type RunRequest } from '../activities/audits/source/process-launcher';
import { processesMentioning } from './helpers/processes';

const root = path.join(__dirname, '..');

function request(command: string, argv: string[], extra: Partial<RunRequest> = {}): RunRequest {
  return {
    command,
    argv,
    cwd: root,
    env: { PATH: process.env.PATH },
    stdoutLimit: 64 * 1024,
    stderrLimit: 4096,
    ...extra,
  };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < ms;) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

test('a command run by the launcher answers what it answers when run here', async (t) => {
  const req = request('git', ['rev-parse', '--is-inside-work-tree']);
  const [launched, here] = await Promise.all([runCommand(req), runHere(req)]);
  t.deepEqual(launched, here);
  t.like(launched, { code: 0, timedOut: false });

  const failing = request('git', ['rev-parse', '--verify', '--quiet', 'no-such-ref^{commit}']);
  t.deepEqual(await runCommand(failing), await runHere(failing));
  t.like(await runCommand(failing), { code: 1, stdout: '' });

  // Many at once come back to their own callers.
  const words = Array.from({ length: 20 }, (_, i) => `word-${i}`);
  const echoed = await Promise.all(words.map((w) => runCommand(request('echo', [w]))));
  t.deepEqual(
    echoed.map((r) => r.stdout.trim()),
    words,
  );
});

test('only the tail of the output is kept', async (t) => {
  const r = await runCommand(request('seq', ['1', '100000'], { stdoutLimit: 32 }));
  t.true(r.stdout.length <= 32, r.stdout);
  t.true(r.stdout.endsWith('99999\n100000\n'));
});

test('all of stdout comes back as bytes when asked, within its bound', async (t) => {
  const whole = await runCommand(
    request('printf', ['a\\0b\\377\\0'], { stdoutLimit: 0, wholeStdoutLimit: 1024 }),
  );
  t.like(whole, { code: 0, overflow: false, stdout: '' });
  t.deepEqual([...Buffer.from(whole.stdoutBytes!)], [0x61, 0, 0x62, 0xff, 0]);
  const big = await runCommand(
    request('seq', ['1', '100000'], { stdoutLimit: 0, wholeStdoutLimit: 10 * 1024 * 1024 }),
  );
  t.is(Buffer.from(big.stdoutBytes!).toString().split('\n').length, 100001);
  const over = await runCommand(
    request('seq', ['1', '100000'], { stdoutLimit: 0, wholeStdoutLimit: 1000 }),
  );
  t.true(over.overflow);
  t.is(over.stdoutBytes!.length, 0);
});

test('a deadline kills the whole process group of the command', async (t) => {
  const marker = `${(Math.random() * 1000 + 100).toFixed(3)}`;
  const started = Date.now();
  // A shell that starts a grandchild: both are in the command's group.
  const r = await runCommand(
    request('sh', ['-c', `sleep ${marker} & sleep ${marker}; wait`], {
      deadline: Date.now() + 500,
    }),
  );
  t.true(r.timedOut);
  t.true(Date.now() - started < 4000, `took ${Date.now() - started} ms`);
  t.true(await until(() => processesMentioning(`sleep ${marker}`).length === 0, 3000));
});

test('a command that cannot start is an error, and the launcher keeps serving', async (t) => {
  await t.throwsAsync(runCommand(request(`no-such-program-${crypto.randomUUID()}`, [])), {
    message: /ENOENT/,
  });
  t.like(await runCommand(request('true', [])), { code: 0 });
});

test('the launcher neither keeps its parent alive nor outlives it, and kills what still runs', async (t) => {
  const script = (body: string) =>
    spawn(process.execPath, ['--import', 'tsx', '-e', body], { cwd: root, stdio: 'ignore' });
  const load = `const { runCommand } = require('./activities/audits/source/process-launcher');`;

  // A parent that runs one command and has nothing else to do exits at once.
  const quick = script(
    `${load} runCommand({ command: 'true', argv: [], cwd: '.', env: process.env, stdoutLimit: 10, stderrLimit: 10 }).then((r) => { if (r.code !== 0) process.exit(3); });`,
  );
  const quickExit = await new Promise<number | null>((resolve) => quick.once('exit', resolve));
  t.is(quickExit, 0);

  // A parent killed while its command runs: the launcher and the command go too.
  const marker = `${(Math.random() * 1000 + 2000).toFixed(3)}`;
  const parent = script(
    `${load} runCommand({ command: 'sleep', argv: ['${marker}'], cwd: '.', env: process.env, stdoutLimit: 10, stderrLimit: 10 }); setInterval(() => {}, 1000);`,
  );
  t.true(
    await until(() => processesMentioning(`sleep ${marker}`).length === 1, 10_000),
    'the command started',
  );
  const launchers = processesMentioning('process-launcher-child')
    .map((line) => parseInt(line, 10))
    .filter(
      (pid) =>
        execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' }).trim() ===
        String(parent.pid),
    );
  t.is(launchers.length, 1, 'the launcher is a child of the parent');
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  parent.kill('SIGKILL');
  t.true(
    await until(() => processesMentioning(`sleep ${marker}`).length === 0, 5000),
    'the command was killed',
  );
  t.true(await until(() => !alive(launchers[0]!), 5000), 'the launcher exited');
});
