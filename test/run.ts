/**
 * `npm test`: prepares the services the tests need, runs ava, cleans up.
 * - PostgreSQL: TEST_DATABASE_URL when set (its server is used to create one database per test
 *   file from a migrated template), else an embedded PostgreSQL in a temporary folder.
 * - Temporal: TEMPORAL_ADDRESS when set, else a headless in-memory Temporal CLI dev server.
 * Arguments after `npm test --` go to ava (e.g. a file to run).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, withDatabase } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { MissingToolError, startLocalServices } from '../platform/dev-services';
import { ensureConsoleBuilt } from '../scripts/build-console';

const ROOT = path.resolve(__dirname, '..');

async function main(): Promise<number> {
  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse())
      await fn().catch((err: unknown) => console.error('cleanup:', err));
    cleanups.length = 0;
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  process.once('SIGTERM', () => void cleanup().then(() => process.exit(143)));

  try {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-test-'));
    cleanups.push(async () => fs.rmSync(tmp, { recursive: true, force: true }));

    const services = await startLocalServices({
      tmpDir: tmp,
      database: 'postgres',
      databaseUrl: process.env.TEST_DATABASE_URL,
      temporalAddress: process.env.TEMPORAL_ADDRESS,
      toolsDir: path.join(ROOT, '.tools'),
      say: (l) => console.log(l),
    });
    cleanups.push(() => services.stop());
    const serverUrl = services.databaseUrl;
    const temporalAddress = services.temporalAddress;

    // One migrated template; each test file clones it (CREATE DATABASE ... TEMPLATE).
    // Names carry this run's pid, so runs sharing one server (TEST_DATABASE_URL) never drop each
    // other's databases.
    const template = `archaudit_tpl_${process.pid}`;
    const databasePrefix = `archaudit_r${process.pid}_`;
    const admin = createDb(withDatabase(serverUrl, 'postgres'), { max: 1 });
    await admin.raw(`DROP DATABASE IF EXISTS ${template}`);
    await admin.raw(`CREATE DATABASE ${template}`);
    cleanups.push(async () => {
      const remaining = await admin.raw<{ rows: { datname: string }[] }>(
        'SELECT datname FROM pg_database WHERE starts_with(datname, ?)',
        [databasePrefix],
      );
      for (const { datname } of remaining.rows)
        await admin.raw(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      await admin.raw(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
      await admin.destroy();
    });
    const tpl = createDb(withDatabase(serverUrl, template), { max: 1 });
    await migrateLatest(tpl);
    await tpl.destroy();

    // The web console the browser tests open (rebuilt only when its sources changed).
    await ensureConsoleBuilt({ say: (l) => console.log(l) });

    const ava = path.join(ROOT, 'node_modules', 'ava', 'entrypoints', 'cli.mjs');
    const code = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, [ava, ...process.argv.slice(2)], {
        cwd: ROOT,
        stdio: 'inherit',
        env: {
          ...process.env,
          TEST_PG_SERVER_URL: serverUrl,
          TEST_TEMPLATE_DB: template,
          TEST_DB_PREFIX: databasePrefix,
          TEMPORAL_ADDRESS: temporalAddress,
        },
      });
      child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0)));
    });
    return code;
  } catch (err) {
    console.error(err instanceof MissingToolError ? err.message : err);
    return 1;
  } finally {
    await cleanup();
  }
}

void main().then((code) => process.exit(code));
