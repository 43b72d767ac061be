/**
 * The worker as production runs it (`worker/main.ts` in a process of its own), for the benchmarks
 * that measure it end to end (bench:soak, bench:fairness), and its memory as /proc reports it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

/** Resident memory of a process, in MiB. */
export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/**
 * Starts the worker with `env` over this process's environment (LOG_LEVEL info: its 'worker
 * running' line says it is ready) and `nodeArgs` for node (e.g. --cpu-prof); resolves once it runs. `stop` sends SIGTERM and waits for it.
 */
export async function startWorkerProcess(
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<{ child: ChildProcess; stop: () => Promise<void> }> {
  const args = [...nodeArgs, '--import', 'tsx', path.join(ROOT, 'worker/main.ts')];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('worker running')) resolve();
      if (out.length > 100_000) out = out.slice(-1000);
    });
    child.once('exit', (code) => reject(new Error(`worker exited ${code}`)));
  });
  return {
    child,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
