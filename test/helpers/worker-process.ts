/**
 * A Temporal worker in a process of its own (test/fixtures/worker-process.ts), for tests that
 * kill a worker mid-flight and start another: it serves the harness's database, task queue,
 * blob and work folders.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { AuditHarness } from './audit-harness';

const ROOT = path.resolve(__dirname, '..', '..');

/** Starts the worker and resolves once it says `worker ready`; `env` adds settings. */
export function spawnWorker(h: AuditHarness, env: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
  const config = h.app.services.config;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'test/fixtures/worker-process.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: h.app.database.url,
        TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
        TEMPORAL_TASK_QUEUE: config.taskQueue,
        BLOB_DIR: config.blobDir,
        WORK_DIR: config.workDir,
        LOCAL_REPOSITORY_WORKSPACES: config.localRepositoryWorkspaces.join(','),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('worker ready')) resolve(child);
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${out}`)));
  });
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
