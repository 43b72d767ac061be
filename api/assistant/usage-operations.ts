/**
 * Assistant limits (read and replace) and usage: the assistant's own report against its limits,
 * and the workspace's model cost of audits and assistant together, by day and repository. Every
 * figure is a sum over run rows (agent_runs, assistant_runs), never a separate counter.
 */
import {
  knownTimeZone,
  limitsOfWorkspace,
  replaceLimits,
  usageCounts,
  type StoredLimits,
} from '../../db/assistant';
import { assistantUsageOfMonth, usageOfMonth, type UsageFigures } from '../../db/assistant-usage';
import { limitsProblems, type AssistantLimits } from '../../domain/assistant/limits';
import { addUsd, formatMicros, parseMicros } from '../../domain/audits/pricing';
import { problems } from '../errors';
import { defineOperation, type Principal, ok, operationGroup, route } from '../registry/operation';
import { WorkspaceParams } from '../schema-kit';
import { iso, isoOrNull, recordPrincipalWrite } from '../shared';
import { versionMismatch } from '../registry/parts';
import { usd } from './present';
import {
  AssistantLimitsResponse,
  AssistantLimitsUpdate,
  AssistantUsageResponse,
  UsageQuery,
  UsageResponse,
} from './schemas';

/** The caller's member id; null for the demo's anonymous reader (it asks nothing). */
const memberOf = (p: Principal): string | null => (p.anonymous ? null : p.memberId);

function presentLimits(workspaceId: string, stored: StoredLimits) {
  return {
    workspace_id: workspaceId,
    ...stored.limits,
    monthly_limit_usd: usd(stored.limits.monthly_limit_usd),
    version: stored.version,
    is_default: stored.version === 0,
    updated_by: stored.updated_by,
    updated_at: isoOrNull(stored.updated_at),
  };
}

const ASSISTANT = operationGroup('Assistant');

export const getAssistantLimits = defineOperation({
  operationId: 'getAssistantLimits',
  ...route.get('/v1/workspaces/{workspace_id}/assistant/limits'),
  summary: "The workspace's assistant limits",
  description:
    'Until set, the built-in defaults apply (version 0): 50 questions per member and 500 per workspace a day, 2 active questions per member and 10 per workspace, 50 USD a month, 1024 output tokens per question, days and months in UTC. Readable with policies:read or usage:read.',
  ...ASSISTANT.token('policies:read or usage:read'),
  params: WorkspaceParams,
  success: ok('The limits.', AssistantLimitsResponse),
  handler: async ({ db, params, principal }) => {
    if (!principal.scopes.has('policies:read') && !principal.scopes.has('usage:read'))
      throw problems.insufficientScope(
        ['policies:read'],
        'Reading the assistant limits requires policies:read or usage:read.',
      );
    return presentLimits(params.workspace_id, await limitsOfWorkspace(db, params.workspace_id));
  },
});

export const updateAssistantLimits = defineOperation({
  operationId: 'updateAssistantLimits',
  ...route.put('/v1/workspaces/{workspace_id}/assistant/limits'),
  summary: "Replace the workspace's assistant limits",
  description:
    '`expected_version` must be the current version (0 on the defaults), else 409 version_mismatch with current_version. Takes effect for the next question; questions already admitted keep running. A limit of 0 questions or 0 USD turns the assistant off.',
  ...ASSISTANT.scope('policies:write'),
  params: WorkspaceParams,
  body: AssistantLimitsUpdate,
  errors: [409],
  success: ok('The new limits.', AssistantLimitsResponse),
  handler: async ({ db, params, body, principal, requestId }) => {
    const { expected_version, ...fields } = body;
    const limits: AssistantLimits = fields;
    const wrong = limitsProblems(limits);
    if (!wrong.length && !(await knownTimeZone(db, limits.time_zone)))
      wrong.push({ pointer: '/time_zone', message: 'is not a time zone the database knows' });
    if (wrong.length)
      throw problems.validationFailed(
        wrong.map((w) => ({ in: 'body', path: w.pointer, message: w.message })),
      );
    limits.monthly_limit_usd = formatMicros(parseMicros(limits.monthly_limit_usd));
    const stored = await db.transaction(async (trx) => {
      const result = await replaceLimits(
        trx,
        params.workspace_id,
        expected_version,
        limits,
        principal.memberId,
      );
      if (!result) {
        const current = await limitsOfWorkspace(trx, params.workspace_id);
        throw versionMismatch(
          'assistant limits',
          current.version,
          expected_version,
          'getAssistantLimits',
        );
      }
      await recordPrincipalWrite(trx, principal, requestId, {
        action: 'assistant_limits.updated',
        resourceType: 'assistant_limits',
        resourceId: params.workspace_id,
        details: {
          before: { version: result.before.version, ...result.before.limits },
          after: { version: result.after.version, ...result.after.limits },
        },
      });
      return result.after;
    });
    return presentLimits(params.workspace_id, stored);
  },
});

export const getAssistantUsage = defineOperation({
  operationId: 'getAssistantUsage',
  ...route.get('/v1/workspaces/{workspace_id}/assistant/usage'),
  summary: "The assistant's usage against the workspace's limits",
  description:
    "`period` is the current month (YYYY-MM) in the limits' time zone; today's counts are the calling member's and the workspace's. `monthly_cost_usd` is what this month's runs cost; `remaining_usd` is the limit less that cost and less what active runs hold back (what the next question can use). `conversations`, `daily` and `recent_runs` (the latest 20) cover the month.",
  ...ASSISTANT.scope('usage:read'),
  params: WorkspaceParams,
  success: ok('The usage.', AssistantUsageResponse),
  handler: async ({ db, params, principal }) => {
    const { limits } = await limitsOfWorkspace(db, params.workspace_id);
    const counts = await usageCounts(
      db,
      params.workspace_id,
      memberOf(principal),
      limits.time_zone,
    );
    const month = await assistantUsageOfMonth(
      db,
      params.workspace_id,
      counts.period,
      limits.time_zone,
    );
    const limit = parseMicros(limits.monthly_limit_usd);
    const committed = parseMicros(counts.monthly_committed_usd);
    const cached = month.daily.reduce((n, d) => n + d.cached, 0);
    const total = month.daily.reduce((n, d) => n + d.runs, 0);
    return {
      period: counts.period,
      questions_today_user: counts.questions_today_user,
      questions_today_workspace: counts.questions_today_workspace,
      user_daily_limit: limits.user_daily_limit,
      workspace_daily_limit: limits.workspace_daily_limit,
      active_user_runs: counts.active_user_runs,
      active_workspace_runs: counts.active_workspace_runs,
      max_output_tokens: limits.max_output_tokens,
      monthly_cost_usd: usd(counts.monthly_cost_usd),
      monthly_limit_usd: usd(limits.monthly_limit_usd),
      remaining_usd: formatMicros(limit > committed ? limit - committed : 0n),
      cached_questions: cached,
      uncached_questions: total - cached,
      conversations: month.conversations.map((c) => ({
        conversation_id: c.conversation_id,
        title: c.title,
        questions: c.runs,
        cached_questions: c.cached,
        cost_usd: usd(c.cost_usd),
        input_tokens: c.input_tokens,
        cached_input_tokens: c.cached_input_tokens,
        output_tokens: c.output_tokens,
      })),
      daily: month.daily.map((d) => ({
        date: d.date,
        questions: d.runs,
        cached_questions: d.cached,
        cost_usd: usd(d.cost_usd),
      })),
      recent_runs: month.recent.map((r) => ({
        run_id: r.id,
        conversation_id: r.conversation_id,
        created_at: iso(r.created_at),
        cache_hit: r.cache_hit,
        cost_usd: usd(r.cost_usd),
        input_tokens: r.input_tokens,
        cached_input_tokens: r.cached_input_tokens,
        output_tokens: r.output_tokens,
      })),
    };
  },
});

type Figures = Omit<UsageFigures, 'cached'>;
const zero = (): Figures => ({
  runs: 0,
  cost_usd: '0.000000',
  input_tokens: 0,
  cached_input_tokens: 0,
  output_tokens: 0,
});
function add(into: Figures, row: UsageFigures): void {
  into.runs += row.runs;
  into.cost_usd = addUsd(into.cost_usd, usd(row.cost_usd));
  into.input_tokens += row.input_tokens;
  into.cached_input_tokens += row.cached_input_tokens;
  into.output_tokens += row.output_tokens;
}

export const getUsage = defineOperation({
  operationId: 'getUsage',
  ...route.get('/v1/workspaces/{workspace_id}/usage'),
  summary: 'Model cost and tokens of audits and the assistant, by day and repository',
  description:
    "Sums over the month's agent runs (every attempt of every audit) and assistant runs, counted by the day they started in the workspace's assistant time zone (UTC by default). `period` is YYYY-MM, default the current month.",
  ...ASSISTANT.scope('usage:read'),
  params: WorkspaceParams,
  query: UsageQuery,
  success: ok('The usage.', UsageResponse),
  handler: async ({ db, params, query, principal }) => {
    const { limits } = await limitsOfWorkspace(db, params.workspace_id);
    const zone = limits.time_zone;
    const period =
      query.period ??
      (await usageCounts(db, params.workspace_id, memberOf(principal), zone)).period;
    const u = await usageOfMonth(db, params.workspace_id, period, zone);
    const totals = { audit: zero(), assistant: zero() };
    const days = new Map<string, { date: string; audit: Figures; assistant: Figures }>();
    const repos = new Map<
      string,
      { repository_id: string | null; name: string | null; audit: Figures; assistant: Figures }
    >();
    for (const [side, rows] of [
      ['audit', u.audit],
      ['assistant', u.assistant],
    ] as const) {
      for (const row of rows) {
        add(totals[side], row);
        const day = days.get(row.date) ?? { date: row.date, audit: zero(), assistant: zero() };
        add(day[side], row);
        days.set(row.date, day);
        const repoKey = row.repository_id ?? '';
        const repo = repos.get(repoKey) ?? {
          repository_id: row.repository_id,
          name: row.repository_id ? (u.names.get(row.repository_id) ?? null) : null,
          audit: zero(),
          assistant: zero(),
        };
        add(repo[side], row);
        repos.set(repoKey, repo);
      }
    }
    return {
      period,
      time_zone: zone,
      from: iso(u.from),
      to: iso(u.to),
      ...totals,
      total_cost_usd: addUsd(totals.audit.cost_usd, totals.assistant.cost_usd),
      days: [...days.values()].sort((a, b) => (a.date < b.date ? -1 : 1)),
      repositories: [...repos.values()].sort((a, b) =>
        (a.repository_id ?? '') < (b.repository_id ?? '') ? -1 : 1,
      ),
    };
  },
});
