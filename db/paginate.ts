/** Keyset pagination over (created_at, id), newest first. Never OFFSET. */
import type { Knex } from 'knex';
import { encodeCursor, type CursorKey } from '../domain/pagination';

export interface PageRequest {
  limit: number;
  after: CursorKey | null;
}

export interface Page<T> {
  items: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export type KeysetRow = { created_at: Date; id: string };

declare const rowType: unique symbol;

/**
 * A list a store hands out for keyset paging: `query` selects `created_at` and `id` of `table`,
 * whose (created_at, id) orders and bounds the pages. Stores build it with `keyset`, so a caller
 * pages a list without naming its table or columns.
 */
export interface Keyset<Row extends KeysetRow> {
  readonly query: Knex.QueryBuilder;
  readonly table: string;
  /** Type only (never set): the rows `query` returns. */
  readonly [rowType]?: Row;
}

export function keyset<Row extends KeysetRow>(
  query: Knex.QueryBuilder,
  table: string,
): Keyset<Row> {
  return { query, table };
}

/** Runs the keyset's query for one page. The caller maps rows to API objects afterwards. */
export async function keysetPage<Row extends KeysetRow>(
  { query, table }: Keyset<Row>,
  page: PageRequest,
): Promise<Page<Row>> {
  if (page.after) {
    query.whereRaw(`(${table}.created_at, ${table}.id) < (?::timestamptz, ?::uuid)`, [
      page.after.createdAt,
      page.after.id,
    ]);
  }
  const rows = (await query
    .orderBy([
      { column: `${table}.created_at`, order: 'desc' },
      { column: `${table}.id`, order: 'desc' },
    ])
    .limit(page.limit + 1)) as Row[];
  const has_more = rows.length > page.limit;
  const items = has_more ? rows.slice(0, page.limit) : rows;
  const last = items[items.length - 1];
  return {
    items,
    has_more,
    next_cursor:
      has_more && last
        ? encodeCursor({ createdAt: last.created_at.toISOString(), id: last.id })
        : null,
  };
}
