/**
 * What the stores of versioned records share: a read in a workspace, a read by id (optionally
 * under a row lock, for an activity that applies a move), an update that bumps `version` and
 * `updated_at`, and the rows of several subjects grouped by subject.
 */
import type { Knex } from 'knex';

/** A row of `table` in a workspace; undefined when there is none (another workspace's too). */
export function findInWorkspace<Row extends object>(
  db: Knex,
  table: string,
  workspaceId: string,
  id: string,
): Promise<Row | undefined> {
  return db(table).where({ workspace_id: workspaceId, id }).first() as Promise<Row | undefined>;
}

/** A row of `table` by id, locked FOR UPDATE when `lock`; a missing row is a bug (throws). */
export async function getById<Row extends object>(
  db: Knex,
  table: string,
  id: string,
  lock = false,
): Promise<Row> {
  const q = db(table).where({ id }).first();
  if (lock) q.forUpdate();
  const row = await q;
  if (!row) throw new Error(`${table} row ${id} not found`);
  return row as Row;
}

/** Updates a row of `table` (values already encoded) and bumps its version. */
export async function updateVersioned<Row extends object>(
  db: Knex,
  table: string,
  id: string,
  values: Record<string, unknown>,
): Promise<Row> {
  const [row] = await db(table)
    .where({ id })
    .update({
      ...values,
      version: db.raw('version + 1'),
      updated_at: db.raw("date_trunc('milliseconds', now())"),
    })
    .returning('*');
  return row as Row;
}

/** The rows of `table` whose `column` is one of `ids`, grouped by it, oldest first. */
export async function rowsBySubject<Row extends object>(
  db: Knex,
  table: string,
  column: keyof Row & string,
  ids: readonly string[],
): Promise<Map<string, Row[]>> {
  const out = new Map<string, Row[]>();
  if (ids.length === 0) return out;
  const rows = (await db(table)
    .whereIn(column, [...ids])
    .orderBy([{ column: 'created_at' }, { column: 'id' }])) as Row[];
  for (const row of rows) {
    const key = row[column] as string;
    out.set(key, [...(out.get(key) ?? []), row]);
  }
  return out;
}

/** A (partial) row for Knex, its jsonb `columns` serialized. */
export function encodeJson<Row extends object>(
  values: Partial<Row>,
  columns: ReadonlyArray<keyof Row>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...values };
  for (const key of columns)
    if (key in values)
      out[key as string] = values[key] === null ? null : JSON.stringify(values[key]);
  return out;
}
