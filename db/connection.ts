/** Knex connection factory. Timestamps come back as Date objects; bigint counts as numbers. */
import knex, { type Knex } from 'knex';
import pg from 'pg';

// COUNT(*) is bigint (int8); our counts fit comfortably in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createDb(
  connectionString: string,
  pool: { min?: number; max?: number } = {},
): Knex {
  return knex({
    client: 'pg',
    connection: { connectionString, application_name: 'archaudit' },
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
  });
}

/** A database URL for another database on the same server (used to create/drop databases). */
export function withDatabase(connectionString: string, database: string): string {
  const url = new URL(connectionString);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Resolves when the database answers a trivial query; rejects otherwise. */
export async function pingDatabase(db: Knex): Promise<void> {
  await db.raw('select 1');
}
