/**
 * README's shell examples run as written, in order, as a new user runs them: every fenced `sh` /
 * `bash` block of README.md, one bash session for all (variables carry from block to block),
 * against the stack README's quick start brings up (`npm start`: the compiled API and worker,
 * embedded PostgreSQL, a Temporal dev server, the demo workspace and repository).
 *
 * The session runs in a folder laid out like a fresh checkout (the repository's top-level
 * entries linked, its own `.data`), with `set -euo pipefail`: a command that fails, a variable
 * no example defined, or a pipeline that throws stops it and fails the test naming the block.
 * `curl` reports every answer's status; a 4xx or 5xx fails the test too.
 *
 * Only the documented placeholders are substituted (PLACEHOLDERS below): the ports (free ones
 * instead of 8080, 7233, 9464, 8081), the database URL `postgres://...` (the `Database:` line npm
 * start prints) and the CLI's example server and token. A block whose first line is
 * `# [not run by the README test: <why>]` is skipped; the few there are say why.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { npmStart } from './helpers/npm-start';
import { portOutsideEphemeralRange } from './helpers/processes';

const ROOT = path.resolve(__dirname, '..');
const SKIP = /^# \[not run by the README test: (.+)\]$/;
/** The quick start: the stack the other examples run against, started by the test the same way. */
const QUICK_START = 'npm install && npm start';

interface Block {
  /** 1-based line of the opening fence in README.md. */
  line: number;
  code: string;
  skip: string | null;
}

/** Every ```sh / ```bash block of `markdown`, in order. */
export function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s*$/.test(lines[i]!)) continue;
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const skip = SKIP.exec(body[0] ?? '')?.[1] ?? null;
    blocks.push({ line: start + 1, code: body.join('\n'), skip });
  }
  return blocks;
}

interface Stack {
  child: ChildProcess;
  output: () => string;
  databaseUrl: string;
}

async function startStack(dir: string, env: NodeJS.ProcessEnv): Promise<Stack> {
  const { child, output } = await npmStart(dir, env, 240_000);
  const databaseUrl = /Database:\s+(\S+)/.exec(output())?.[1] ?? '';
  return { child, output, databaseUrl };
}

async function stopGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  try {
    process.kill(-child.pid!, signal);
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }, 60_000);
  await exited;
  clearTimeout(timer);
}

/** A folder that looks like a fresh checkout of this repository: its entries linked, no .data. */
function checkoutLike(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-readme-'));
  for (const entry of fs.readdirSync(ROOT)) {
    if (['.data', '.git', '.test-data'].includes(entry)) continue;
    fs.symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  }
  return dir;
}

/** Reports every answer's status on stderr (`__HTTP__ <status> <method> <url>`). */
const PRELUDE = `set -euo pipefail
curl() { command curl -w '%{stderr}__HTTP__ %{http_code} %{method} %{url_effective}\\n' "$@"; }
trap 'echo "__FAILED__ line $LINENO: $BASH_COMMAND" >&2' ERR
`;

test('every shell example of README runs as written against npm start', async (t) => {
  t.timeout(30 * 60_000);
  const blocks = shellBlocks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
  t.true(blocks.length > 20, 'README has its examples');
  t.is(blocks[0]!.code.trim(), QUICK_START, 'the first example is the quick start');
  const skipped = blocks.filter((b) => b.skip);
  t.true(skipped.length <= 5, `only a few examples are left out: ${skipped.length}`);

  const dir = checkoutLike();
  // Five distinct free ports below the ephemeral range: a port the kernel hands out for listen(0)
  // is also its pick for the next outgoing connection, and these are listened on minutes later
  // (CI once lost the metrics port to a socket of the Temporal dev server in between).
  const free = new Set<number>();
  while (free.size < 5) free.add(await portOutsideEphemeralRange());
  const [api, temporal, ui, metrics, api2] = [...free] as [number, number, number, number, number];
  const ports = { api, temporal, ui, metrics, api2 };
  const globalPrefix = path.join(dir, '.npm-global');
  // The CLI tarball the server hands out (README: npm install -g "$ARCHAUDIT_URL/cli/...").
  execFileSync('npm', ['run', '--silent', 'build:cli'], { cwd: ROOT, stdio: 'ignore' });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(ports.api),
    TEMPORAL_DEV_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    LOG_LEVEL: 'warn',
    // `npm install -g` goes into this folder, whose bin comes first on PATH.
    NPM_CONFIG_PREFIX: globalPrefix,
    PATH: `${path.join(globalPrefix, 'bin')}:${process.env.PATH}`,
  };
  // A fresh user has none of these set: npm start brings up its own services.
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'DATA_DIR', 'CI', 'ARCHAUDIT_TOKEN'])
    delete env[name];
  let stack: Stack | undefined;
  let session: ChildProcess | undefined;
  try {
    stack = await startStack(dir, env);
    t.regex(stack.databaseUrl, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/archaudit$/);
    const origin = `http://127.0.0.1:${ports.api}`;
    /** The documented placeholders, and what stands for them here. */
    const PLACEHOLDERS: Array<[RegExp, string]> = [
      [/http:\/\/127\.0\.0\.1:8080/g, origin],
      [/localhost:8080/g, `127.0.0.1:${ports.api}`],
      [/127\.0\.0\.1:7233/g, `127.0.0.1:${ports.temporal}`],
      [/\b9464\b/g, String(ports.metrics)],
      [/\b8081\b/g, String(ports.api2)],
      [/postgres:\/\/\.\.\./g, stack.databaseUrl],
      [/https:\/\/archaudit\.example\.com/g, origin],
      [/ARCHAUDIT_TOKEN=\.\.\./g, 'ARCHAUDIT_TOKEN=$TOKEN'],
    ];
    let script = PRELUDE;
    for (const [i, b] of blocks.entries()) {
      if (i === 0 || b.skip) continue;
      let code = b.code;
      for (const [from, to] of PLACEHOLDERS) code = code.replace(from, to);
      script += `echo "__BLOCK__ ${b.line}" >&2\n${code}\n`;
    }
    script += 'echo "__DONE__" >&2\n';
    fs.writeFileSync(path.join(dir, 'readme-examples.sh'), script);

    let stderr = '';
    let stdout = '';
    const sessionEnv = { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}` };
    session = spawn('bash', ['readme-examples.sh'], {
      cwd: dir,
      env: sessionEnv,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    session.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    session.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => void stopGroup(session!, 'SIGKILL'), 20 * 60_000);
      session!.once('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    const lastBlock = [...stderr.matchAll(/__BLOCK__ (\d+)/g)].pop()?.[1];
    const context = `README.md block at line ${lastBlock}:\n${stderr.slice(-4000)}\n--- stdout:\n${stdout.slice(-2000)}`;
    t.is(code, 0, `the examples stopped at ${context}`);
    t.true(stderr.includes('__DONE__'), context);
    // Every HTTP answer a user saw, with the block it came from.
    let block = '';
    const failures: string[] = [];
    for (const line of stderr.split('\n')) {
      const b = /^__BLOCK__ (\d+)/.exec(line);
      if (b) block = b[1]!;
      const h = /^__HTTP__ (\d{3}) (\S+) (\S+)/.exec(line);
      if (h && Number(h[1]) >= 400) failures.push(`line ${block}: ${h[1]} ${h[2]} ${h[3]}`);
    }
    t.deepEqual(failures, [], 'no example answers an error');
  } finally {
    if (session) await stopGroup(session, 'SIGTERM');
    if (stack) await stopGroup(stack.child, 'SIGINT');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
