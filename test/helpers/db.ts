/** Each test file gets its own database, cloned from the template `npm test` migrated. */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { createDb, withDatabase } from '../../db/connection';

export function serverUrl(): string {
  const url = process.env.TEST_PG_SERVER_URL;
  if (!url) throw new Error('Run the tests with `npm test` (it prepares PostgreSQL and Temporal).');
  return url;
}

export interface TestDatabase {
  name: string;
  url: string;
  db: Knex;
  drop(): Promise<void>;
}

/** A fresh database; `fromTemplate: false` gives an empty one (for migration tests). */
export async function createTestDatabase(
  options: { fromTemplate?: boolean } = {},
): Promise<TestDatabase> {
  const name = `${process.env.TEST_DB_PREFIX ?? 'archaudit_t_'}${crypto.randomBytes(6).toString('hex')}`;
  const admin = createDb(withDatabase(serverUrl(), 'postgres'), { max: 1 });
  try {
    const template = options.fromTemplate === false ? 'template0' : process.env.TEST_TEMPLATE_DB;
    await admin.raw(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.destroy();
  }
  const url = withDatabase(serverUrl(), name);
  const db = createDb(url);
  return {
    name,
    url,
    db,
    async drop() {
      await db.destroy();
      const a = createDb(withDatabase(serverUrl(), 'postgres'), { max: 1 });
      try {
        await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.destroy();
      }
    },
  };
}
