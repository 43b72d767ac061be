/**
 * Processes a test can kill: a Temporal worker (test/fixtures/worker-process.ts) serving the
 * harness's database, task queue, blob and work folders, for tests that kill a worker mid-flight
 * and start another; and the API process, for tests that kill it mid-request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { AuditHarness } from './audit-harness';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Runs `file` (TypeScript, through tsx) with `env` and resolves with what `ready` finds in its
 * standard output once it finds something.
 */
function spawnTs<T>(
  file: string,
  env: NodeJS.ProcessEnv,
  ready: (out: string) => T | undefined,
): Promise<{ child: ChildProcess; found: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, file)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const found = ready(out);
      if (found !== undefined) resolve({ child, found });
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`${file} exited ${code}: ${out}`)));
  });
}

/** Starts the worker and resolves once it says `worker ready`; `env` adds settings. */
export async function spawnWorker(
  h: AuditHarness,
  env: NodeJS.ProcessEnv = {},
): Promise<ChildProcess> {
  const config = h.app.services.config;
  const { child } = await spawnTs(
    'test/fixtures/worker-process.ts',
    {
      DATABASE_URL: h.app.database.url,
      TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: config.taskQueue,
      BLOB_DIR: config.blobDir,
      WORK_DIR: config.workDir,
      LOCAL_REPOSITORY_WORKSPACES: config.localRepositoryWorkspaces.join(','),
      ...env,
    },
    (out) => (out.includes('worker ready') ? true : undefined),
  );
  return child;
}

/**
 * Starts the API process itself (`api/main.ts`, configured from `env` like `npm run api`) on a
 * free port; resolves with the process and its URL once it listens.
 */
export async function spawnApi(
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; url: string }> {
  const { child, found } = await spawnTs(
    'api/main.ts',
    { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', MIGRATE_ON_START: 'false', ...env },
    (out) => /"url":"(http[^"]+)"[^\n]*"msg":"api listening"/.exec(out)?.[1],
  );
  return { child, url: found };
}

/** Sends `signal` and waits for the exit (SIGKILL after 15 s). */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
