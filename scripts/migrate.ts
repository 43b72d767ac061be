/** `npm run migrate`: applies pending migrations to DATABASE_URL (`-- down` rolls all back). */
import { loadConfig } from '../platform/config';
import { createDb } from '../db/connection';
import { migrateLatest, migrateRollbackAll } from '../db/migrate';

async function main(): Promise<void> {
  const url = loadConfig().databaseUrl;
  if (!url) throw new Error('DATABASE_URL is required.');
  const db = createDb(url);
  try {
    const names =
      process.argv[2] === 'down' ? await migrateRollbackAll(db) : await migrateLatest(db);
    process.stdout.write(names.length ? `${names.join('\n')}\n` : 'Nothing to do.\n');
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
