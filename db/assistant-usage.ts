/**
 * Usage reports over the run rows (never a separate counter): assistant runs of a month by
 * conversation and day, and agent runs (audits) with assistant runs by day and repository.
 */
import type { Knex } from 'knex';
import type { RunRow } from './assistant';

export interface UsageFigures {
  runs: number;
  cached: number;
  cost_usd: string;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
}

const FIGURES = `count(*)::int AS runs,
  coalesce(sum(r.cost_usd), 0)::text AS cost_usd,
  coalesce(sum(r.input_tokens), 0)::int AS input_tokens,
  coalesce(sum(r.cached_input_tokens), 0)::int AS cached_input_tokens,
  coalesce(sum(r.output_tokens), 0)::int AS output_tokens,
  count(*) FILTER (WHERE r.cache_hit)::int AS cached`;

/** The bounds of a month (`YYYY-MM`) in a time zone. */
async function monthBounds(db: Knex, period: string, timeZone: string) {
  const { rows } = await db.raw(
    `SELECT (?::date::timestamp AT TIME ZONE ?) AS from,
            ((?::date + interval '1 month')::timestamp AT TIME ZONE ?) AS to`,
    [`${period}-01`, timeZone, `${period}-01`, timeZone],
  );
  return rows[0] as { from: Date; to: Date };
}

/** Assistant runs of a month by conversation, by day, and the latest runs. */
export async function assistantUsageOfMonth(
  db: Knex,
  workspaceId: string,
  period: string,
  timeZone: string,
) {
  const { from, to } = await monthBounds(db, period, timeZone);
  const where = (q: Knex.QueryBuilder) =>
    q
      .where('r.workspace_id', workspaceId)
      .where('r.created_at', '>=', from)
      .where('r.created_at', '<', to);
  const conversations = (await where(
    db('assistant_runs as r')
      .join('assistant_conversations as c', 'c.id', 'r.conversation_id')
      .select('r.conversation_id', 'c.title', db.raw(FIGURES))
      .groupBy('r.conversation_id', 'c.title')
      .orderBy('r.conversation_id'),
  )) as Array<UsageFigures & { conversation_id: string; title: string }>;
  const daily = (await where(
    db('assistant_runs as r')
      .select(
        db.raw(`to_char(r.created_at AT TIME ZONE ?, 'YYYY-MM-DD') AS date`, [timeZone]),
        db.raw(FIGURES),
      )
      .groupByRaw('1')
      .orderByRaw('1'),
  )) as Array<UsageFigures & { date: string }>;
  const recent = (await where(db<RunRow>('assistant_runs as r').select('r.*'))
    .orderBy([
      { column: 'r.created_at', order: 'desc' },
      { column: 'r.id', order: 'desc' },
    ])
    .limit(20)) as RunRow[];
  return { conversations, daily, recent };
}

/** Audit (agent runs) and assistant figures of a month, by day and repository. */
export async function usageOfMonth(
  db: Knex,
  workspaceId: string,
  period: string,
  timeZone: string,
) {
  const { from, to } = await monthBounds(db, period, timeZone);
  const group = (q: Knex.QueryBuilder) =>
    q
      .select(
        db.raw(`to_char(r.created_at AT TIME ZONE ?, 'YYYY-MM-DD') AS date`, [timeZone]),
        db.raw(FIGURES),
      )
      .where('r.workspace_id', workspaceId)
      .where('r.created_at', '>=', from)
      .where('r.created_at', '<', to)
      .groupByRaw('1, 2')
      .orderByRaw('1, 2');
  type Row = UsageFigures & { date: string; repository_id: string | null };
  const audit = (await group(
    db('agent_runs as r').join('audits as a', 'a.id', 'r.audit_id').select('a.repository_id'),
  )) as Row[];
  const assistant = (await group(db('assistant_runs as r').select('r.repository_id'))) as Row[];
  const ids = [...new Set([...audit, ...assistant].map((r) => r.repository_id))].filter(
    (id): id is string => id !== null,
  );
  const names = new Map<string, string>(
    (await db('repositories').whereIn('id', ids).select('id', 'name')).map(
      (r: { id: string; name: string }) => [r.id, r.name],
    ),
  );
  return { from, to, audit, assistant, names };
}
