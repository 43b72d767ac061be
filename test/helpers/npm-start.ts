/**
 * `npm start` as a user runs it in a terminal: in `cwd`, its own process group (Ctrl-C reaches
 * the whole group), until it prints "Press Ctrl-C to stop". Used by the quick-start and README
 * tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface NpmStarted {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
}

export async function npmStart(
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<NpmStarted> {
  let out = '';
  const child = spawn('npm', ['start'], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + timeoutMs;
  while (!/Press Ctrl-C to stop/.test(out)) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${out}`);
    if (Date.now() > deadline) throw new Error(`npm start did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, output: () => out };
}
