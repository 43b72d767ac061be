/**
 * Rows inserted as one JSON parameter (db/json-rows.ts; issue 24, fair sharing): what is stored
 * is what the rows say, column types and all, in statements of JSON_ROWS_PER_STATEMENT rows;
 * text PostgreSQL refuses (NUL, a lone surrogate, as a hostile repository's file names give)
 * is stored as U+FFFD instead of failing the write.
 */
import test from 'ava';
import crypto from 'node:crypto';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { insertJsonRows, JSON_ROWS_PER_STATEMENT } from '../db/json-rows';
import { storableJsonText } from '../domain/text';

let tdb: TestDatabase;
test.before(async () => {
  tdb = await createTestDatabase();
  await tdb.db.raw(`CREATE TABLE json_rows_probe (
    id uuid PRIMARY KEY, title text NOT NULL, note text, tags jsonb NOT NULL,
    seen_at timestamptz NOT NULL, confidence numeric(3,2) NOT NULL, hits integer NOT NULL DEFAULT 7,
    open boolean NOT NULL)`);
});
test.after.always(async () => tdb?.drop());

test.serial('rows of every column type are stored as given, over several statements', async (t) => {
  const at = new Date('2026-11-27T09:00:00.123Z');
  const count = JSON_ROWS_PER_STATEMENT * 2 + 17;
  const rows = Array.from({ length: count }, (_, i) => ({
    id: crypto.randomUUID(),
    title: `finding ${i} "quoted" \\ back\nslash ✓ 𝄞`,
    note: i % 2 ? null : 'n',
    tags: [{ path: `src/${i}.ts`, line: i }],
    seen_at: at,
    confidence: 0.85,
    open: i % 3 === 0,
  }));
  const returned = await insertJsonRows<{ id: string }>(
    tdb.db,
    'json_rows_probe',
    rows,
    'RETURNING id',
  );
  t.is(returned.length, count);
  const stored = await tdb.db('json_rows_probe').orderBy('title').select('*');
  t.is(stored.length, count);
  const byId = new Map(stored.map((r) => [r.id as string, r]));
  for (const i of [0, 1, JSON_ROWS_PER_STATEMENT, count - 1]) {
    const row = byId.get(rows[i]!.id)!;
    t.is(row.title, rows[i]!.title);
    t.is(row.note, rows[i]!.note);
    t.deepEqual(row.tags, rows[i]!.tags);
    t.is((row.seen_at as Date).toISOString(), at.toISOString());
    t.is(Number(row.confidence), 0.85);
    t.is(row.open, rows[i]!.open);
    t.is(row.hits, 7, 'a column the rows do not name keeps its default');
  }
});

test.serial(
  'a conflict clause applies: existing rows are left alone and not returned',
  async (t) => {
    const id = crypto.randomUUID();
    const row = (title: string) => ({
      id,
      title,
      tags: [],
      seen_at: new Date(),
      confidence: 1,
      open: true,
    });
    const first = await insertJsonRows<{ id: string }>(
      tdb.db,
      'json_rows_probe',
      [row('first')],
      'ON CONFLICT (id) DO NOTHING RETURNING id',
    );
    const second = await insertJsonRows<{ id: string }>(
      tdb.db,
      'json_rows_probe',
      [row('second')],
      'ON CONFLICT (id) DO NOTHING RETURNING id',
    );
    t.deepEqual(first, [{ id }]);
    t.deepEqual(second, []);
    t.is((await tdb.db('json_rows_probe').where({ id }).first()).title, 'first');
  },
);

test.serial(
  'NUL and lone surrogates are stored as U+FFFD; pairs and escaped backslashes are kept',
  async (t) => {
    const id = crypto.randomUUID();
    const hostile = 'a\u0000b\ud800c\udfffd 𝄞 \\u0000 \\\\ud800';
    await insertJsonRows(tdb.db, 'json_rows_probe', [
      { id, title: hostile, tags: [hostile], seen_at: new Date(), confidence: 0, open: false },
    ]);
    const stored = await tdb.db('json_rows_probe').where({ id }).first();
    const expected = 'a\ufffdb\ufffdc\ufffdd 𝄞 \\u0000 \\\\ud800';
    t.is(stored.title, expected);
    t.deepEqual(stored.tags, [expected]);
    t.is(storableJsonText(JSON.stringify('x')), '"x"');
  },
);

test.serial('no rows: no statement', async (t) => {
  t.deepEqual(await insertJsonRows(tdb.db, 'no_such_table', []), []);
});
