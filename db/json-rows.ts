/**
 * Inserting many rows as one JSON parameter. PostgreSQL expands the array into rows of the
 * table's own type (`jsonb_populate_recordset`), so the worker's main thread serialises one
 * string (JSON.stringify, native code) instead of knex binding, and the driver encoding, each
 * value of each row: for a 10,000-service audit's findings that binding held the main thread
 * 120-170 ms per statement, the longest pauses left in `bench:fairness` (issue 24).
 *
 * Every row has the same keys, the columns written; a JSON array or object goes to a jsonb
 * column as it is, a Date as its ISO text. Text PostgreSQL cannot store (NUL, an unpaired
 * surrogate) is replaced by U+FFFD, as the driver does for a lone surrogate in a parameter.
 */
import type { Knex } from 'knex';
import { storableJsonText } from '../domain/text';

/** Rows per statement: bounds one statement's text and the main thread's time on it. */
export const JSON_ROWS_PER_STATEMENT = 1000;

/**
 * Inserts `rows` into `table` (one statement per JSON_ROWS_PER_STATEMENT rows); `tail` is what
 * follows the SELECT (`ON CONFLICT ... DO NOTHING`, `RETURNING ...`). Returns the RETURNING rows.
 */
export async function insertJsonRows<R = never>(
  db: Knex,
  table: string,
  rows: readonly object[],
  tail = '',
): Promise<R[]> {
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0]!)
    .map((c) => `"${c}"`)
    .join(', ');
  const out: R[] = [];
  for (let i = 0; i < rows.length; i += JSON_ROWS_PER_STATEMENT) {
    const json = storableJsonText(JSON.stringify(rows.slice(i, i + JSON_ROWS_PER_STATEMENT)));
    const result = await db.raw<{ rows: R[] }>(
      `INSERT INTO ?? (${columns}) SELECT ${columns}
         FROM jsonb_populate_recordset(NULL::??, CAST(? AS jsonb)) ${tail}`,
      [table, table, json],
    );
    out.push(...result.rows);
  }
  return out;
}
