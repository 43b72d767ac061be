/** Migrations run up, down and up again on an empty database, leaving the same schema. */
import test from 'ava';
import type { Knex } from 'knex';
import { migrateLatest, migrateRollbackAll } from '../db/migrate';
import { createTestDatabase } from './helpers/db';

async function schemaOf(db: Knex): Promise<string[]> {
  const res = await db.raw<{ rows: Array<{ t: string; c: string; ty: string; n: string }> }>(`
    SELECT table_name AS t, column_name AS c, data_type AS ty, is_nullable AS n
    FROM information_schema.columns WHERE table_schema = 'public' AND table_name NOT LIKE 'knex_%'
    ORDER BY table_name, column_name`);
  const idx = await db.raw<{ rows: Array<{ indexdef: string }> }>(
    "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_%' ORDER BY indexname",
  );
  return [
    ...res.rows.map((r) => `${r.t}.${r.c} ${r.ty} ${r.n}`),
    ...idx.rows.map((r) => r.indexdef),
  ];
}

test('up, down, up again', async (t) => {
  const database = await createTestDatabase({ fromTemplate: false });
  try {
    const { db } = database;
    const applied = await migrateLatest(db);
    t.true(applied.length >= 1);
    const first = await schemaOf(db);
    t.true(first.some((c) => c.startsWith('api_tokens.secret_sha256')));
    t.false(
      first.some((c) => /api_tokens\.(token|secret) /.test(c)),
      'no plaintext secret column',
    );

    const rolled = await migrateRollbackAll(db);
    t.deepEqual([...rolled].sort(), [...applied].sort());
    t.deepEqual(await schemaOf(db), [], 'down removes every table');

    t.deepEqual(await migrateLatest(db), applied);
    t.deepEqual(await schemaOf(db), first);
    t.deepEqual(await migrateLatest(db), [], 'nothing left to apply');
  } finally {
    await database.drop();
  }
});
