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

/**
 * Runs `query` (which must select `created_at` and `id` of `table`) for one page. The caller
 * maps rows to API objects afterwards.
 */
export async function keysetPage<Row extends { created_at: Date; id: string }>(
  query: Knex.QueryBuilder,
  table: string,
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
