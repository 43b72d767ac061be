/**
 * Running the git commands of source acquisition.
 *
 * Why a launcher: on Linux, Node starts a child process by forking the whole parent first, and
 * fork copies the parent's page tables. A worker holds ~500 MB (V8 heaps of the activities and of
 * the workflow thread, the Temporal core), so each `spawn` stopped its main thread for 5-19 ms:
 * the largest single cost on the worker's main thread with 20 audits running
 * (docs/benchmarks.md), and a pause for every heartbeat and workflow task waiting behind it. So
 * the commands of source acquisition (init, remote, fetch, rev-parse, ls-tree) are started by a
 * small helper process of this module (process-launcher-child.ts, forked once, ~60 MB), whose
 * forks are cheap; their output comes back over IPC. `cat-file --batch`, which we feed and read
 * as a stream, is spawned here with spawnDetached.
 *
 * Either way a command runs in a process group of its own (detached: a new session, no
 * controlling terminal) so that a deadline kills everything it started, and every group still
 * alive when its owning process exits is killed.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { processLauncherOn } from '../../../platform/config';

export interface RunRequest {
  command: string;
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Absolute deadline (epoch ms); the process group is killed when it passes. */
  deadline?: number;
  /** Tail of stdout / stderr kept, in bytes. */
  stdoutLimit: number;
  stderrLimit: number;
  /**
   * Keep all of stdout, as bytes (`stdoutBytes`), up to this many; past it the command is killed
   * and `overflow` is set. Without it only the tail is kept, as text.
   */
  wholeStdoutLimit?: number;
  /** Written to the command's stdin, which is then closed (none: no stdin). */
  stdin?: string;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  /** All of stdout, when the request set wholeStdoutLimit. */
  stdoutBytes?: Uint8Array;
  overflow?: boolean;
  stderr: string;
  timedOut: boolean;
}

// ---------------------------------------------------------------------------------------------
// Process groups
// ---------------------------------------------------------------------------------------------

/** Process groups of running commands, killed if this process exits before they do. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pid of liveGroups) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** Kills the process group of `child` (git and the ssh / remote helper / upload-pack it started). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * Spawns `command` with an argument array (no shell) as the leader of a new process group in a
 * new session without a controlling terminal (nothing it starts can open /dev/tty to prompt).
 */
export function spawnDetached(
  command: string,
  argv: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; stdin: boolean },
): ChildProcess {
  installExitHook();
  const child = spawn(command, argv, {
    cwd: options.cwd,
    env: options.env,
    stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    detached: true,
    windowsHide: true,
  });
  if (child.pid !== undefined) {
    const pid = child.pid;
    liveGroups.add(pid);
    child.once('exit', () => liveGroups.delete(pid));
  }
  return child;
}

/** Keeps the last `limit` bytes written to it. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private length = 0;
  constructor(private readonly limit: number) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
    while (this.length - (this.chunks[0]?.length ?? 0) >= this.limit && this.chunks.length > 1) {
      this.length -= this.chunks.shift()!.length;
    }
  }
  toString(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString('utf8');
  }
}

/** Runs one command to completion in this process, capturing the tails of its output. */
export function runHere(req: RunRequest): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    if (req.deadline !== undefined && Date.now() >= req.deadline) {
      resolve({ code: null, stdout: '', stderr: '', timedOut: true });
      return;
    }
    const child = spawnDetached(req.command, req.argv, {
      cwd: req.cwd,
      env: req.env,
      stdin: req.stdin !== undefined,
    });
    if (req.stdin !== undefined) {
      // A command exiting early makes the write fail (EPIPE); its exit code reports it.
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(req.stdin);
    }
    const stdout = new TailBuffer(req.stdoutLimit);
    const stderr = new TailBuffer(req.stderrLimit);
    const whole: Buffer[] = [];
    let wholeLength = 0;
    let overflow = false;
    child.stdout!.on('data', (c: Buffer) => {
      if (req.wholeStdoutLimit === undefined) return stdout.push(c);
      if (overflow) return;
      wholeLength += c.length;
      if (wholeLength > req.wholeStdoutLimit) {
        overflow = true;
        whole.length = 0;
        killGroup(child);
      } else whole.push(c);
    });
    child.stderr!.on('data', (c: Buffer) => stderr.push(c));

    let timedOut = false;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let forceClose: NodeJS.Timeout | undefined;
    const finish = (code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(forceClose);
      resolve({
        code,
        stdout: req.wholeStdoutLimit === undefined ? stdout.toString() : '',
        ...(req.wholeStdoutLimit === undefined
          ? {}
          : { stdoutBytes: Buffer.concat(whole), overflow }),
        stderr: stderr.toString(),
        timedOut,
      });
    };
    if (req.deadline !== undefined) {
      timer = setTimeout(
        () => {
          timedOut = true;
          killGroup(child);
        },
        Math.max(0, req.deadline - Date.now()),
      );
    }
    child.once('error', (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      killGroup(child);
      reject(err);
    });
    child.once('exit', (code) => {
      // 'close' waits for the pipes, which a stray grandchild could hold open: after a kill,
      // give up on them after a moment.
      if (timedOut) {
        forceClose = setTimeout(() => {
          child.stdout!.destroy();
          child.stderr!.destroy();
          finish(code);
        }, 2000);
      }
    });
    child.once('close', (code) => finish(code));
  });
}

// ---------------------------------------------------------------------------------------------
// The launcher process
// ---------------------------------------------------------------------------------------------

type Reply = { id: number; result: RunResult } | { id: number; error: string };

class Launcher {
  private child: ChildProcess | null = null;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(r: RunResult): void; reject(e: Error): void }
  >();

  run(req: RunRequest): Promise<RunResult> {
    const child = this.child ?? this.start();
    const id = this.nextId++;
    return new Promise<RunResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.hold(true);
      child.send({ id, req }, (err) => {
        if (err) this.settle(id, { id, error: `the process launcher is gone: ${err.message}` });
      });
    });
  }

  private start(): ChildProcess {
    // The child is what this module is: compiled JavaScript (dist/app), or TypeScript in
    // development and tests, loaded with tsx's require hook.
    const ext = path.extname(__filename);
    const child = fork(path.join(__dirname, `process-launcher-child${ext}`), [], {
      execArgv: ext === '.ts' ? ['--require', require.resolve('tsx/cjs')] : [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (reply: Reply) => this.settle(reply.id, reply));
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      for (const id of [...this.pending.keys()])
        this.settle(id, { id, error: `the process launcher exited (${signal ?? code})` });
    });
    this.child = child;
    this.hold(false);
    return child;
  }

  private settle(id: number, reply: Reply): void {
    const waiting = this.pending.get(id);
    if (!waiting) return;
    this.pending.delete(id);
    if ('result' in reply) waiting.resolve(reply.result);
    else waiting.reject(new Error(reply.error));
    if (this.pending.size === 0) this.hold(false);
  }

  /** The launcher keeps this process alive only while a command runs. */
  private hold(on: boolean): void {
    const child = this.child;
    if (!child) return;
    if (on) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  }
}

const launcher = new Launcher();

/**
 * Runs one command to completion through the launcher process (PROCESS_LAUNCHER=off: in this
 * process). Rejects only when the command cannot be started or the launcher died.
 */
export function runCommand(req: RunRequest): Promise<RunResult> {
  if (!processLauncherOn()) return runHere(req);
  return launcher.run(req);
}
