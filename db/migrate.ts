/**
 * Migrations are timestamped TypeScript files in db/migrations (compiled to .js of the same name
 * in dist/app), each with up and down. They are
 * loaded through an explicit migration source so the same code runs under tsx, in tests and in
 * the worker, without relying on knex's file-extension guessing.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';

const DIR = path.join(__dirname, 'migrations');

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

class FolderSource implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    return fs
      .readdirSync(DIR)
      .filter((f) => /^\d{14}_[a-z0-9_]+\.(ts|js)$/.test(f))
      .sort();
  }
  getMigrationName(file: string): string {
    return file.replace(/\.(ts|js)$/, '');
  }
  async getMigration(file: string): Promise<Migration> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(path.join(DIR, file)) as Migration;
  }
}

const options = (): Knex.MigratorConfig => ({
  migrationSource: new FolderSource(),
  tableName: 'knex_migrations',
});

/** Applies every pending migration; returns the names applied. */
export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(options())) as [number, string[]];
  return applied;
}

/** Rolls back every applied migration (used by the migration test). */
export async function migrateRollbackAll(db: Knex): Promise<string[]> {
  const [, rolled] = (await db.migrate.rollback(options(), true)) as [number, string[]];
  return rolled;
}
