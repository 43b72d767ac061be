/**
 * Assistant limits (pure): the built-in defaults, checks of a new setting, and admission of one
 * question against the workspace's counts (taken under the workspace's admission lock, see
 * db/assistant.ts). Money is exact: decimal strings through domain/audits/pricing.
 */
import { costUsd, formatMicros, parseMicros, type ModelPrice } from '../audits/pricing';

export interface AssistantLimits {
  user_daily_limit: number;
  workspace_daily_limit: number;
  /** USD, 6 decimals. */
  monthly_limit_usd: string;
  max_output_tokens: number;
  max_active_user_runs: number;
  max_active_workspace_runs: number;
  /** IANA zone of the day and month boundaries. */
  time_zone: string;
}

export const DEFAULT_ASSISTANT_LIMITS: AssistantLimits = {
  user_daily_limit: 50,
  workspace_daily_limit: 500,
  monthly_limit_usd: '50.000000',
  max_output_tokens: 1024,
  max_active_user_runs: 2,
  max_active_workspace_runs: 10,
  time_zone: 'UTC',
};

/** Bounds of each setting (also the request schema's). */
export const LIMIT_BOUNDS = {
  daily: { minimum: 0, maximum: 1_000_000 },
  max_output_tokens: { minimum: 1, maximum: 32_000 },
  active: { minimum: 0, maximum: 1000 },
  monthly_limit_usd_max: '1000000',
} as const;

/**
 * The input tokens one run may send the model at most (all its tool rounds together): the
 * prompt bound times the rounds. With max_output_tokens it bounds what a run can cost.
 */
export const MAX_RUN_INPUT_TOKENS = 48_000;

/** Problems of a limits setting beyond its schema (JSON Pointer, message). */
export function limitsProblems(l: AssistantLimits): Array<{ pointer: string; message: string }> {
  const out: Array<{ pointer: string; message: string }> = [];
  if (!validTimeZone(l.time_zone))
    out.push({ pointer: '/time_zone', message: 'is not an IANA time zone (e.g. Europe/Berlin)' });
  try {
    if (parseMicros(l.monthly_limit_usd) > parseMicros(LIMIT_BOUNDS.monthly_limit_usd_max))
      out.push({
        pointer: '/monthly_limit_usd',
        message: `must be at most ${LIMIT_BOUNDS.monthly_limit_usd_max}`,
      });
  } catch {
    out.push({
      pointer: '/monthly_limit_usd',
      message: 'must be a non-negative decimal with at most 6 fractional digits',
    });
  }
  return out;
}

export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * What admission sets aside from the monthly budget for one run: the most it can cost
 * (MAX_RUN_INPUT_TOKENS in, max_output_tokens out at the model's price). Zero without a model
 * or without a price for it.
 */
export function reservationUsd(price: ModelPrice | undefined, maxOutputTokens: number): string {
  if (!price) return '0.000000';
  return costUsd(
    { inputTokens: MAX_RUN_INPUT_TOKENS, cachedInputTokens: 0, outputTokens: maxOutputTokens },
    price,
  );
}

/** The workspace's counts at admission time. */
export interface AdmissionCounts {
  questions_today_user: number;
  questions_today_workspace: number;
  active_user_runs: number;
  active_workspace_runs: number;
  /** Cost of this month's finished runs plus what active runs hold (USD). */
  monthly_committed_usd: string;
  seconds_to_next_day: number;
  seconds_to_next_month: number;
}

export interface Refusal {
  code: string;
  detail: string;
  hint: string;
  /** Seconds after which asking again can succeed; absent when waiting does not help soon. */
  retryAfter?: number;
  extensions: Record<string, unknown>;
}

/** Seconds an active-run refusal suggests waiting: a run takes seconds to a minute. */
const ACTIVE_RETRY_SECONDS = 10;

/** Null when the question may be asked; else the first limit it hits. */
export function admission(
  limits: AssistantLimits,
  counts: AdmissionCounts,
  reservation: string,
): Refusal | null {
  const zone = limits.time_zone;
  if (counts.questions_today_user >= limits.user_daily_limit)
    return {
      code: 'assistant_user_daily_limit',
      detail: `You asked ${counts.questions_today_user} of your ${limits.user_daily_limit} questions today (${zone}).`,
      hint: 'Ask again tomorrow, or ask a workspace admin to raise user_daily_limit.',
      retryAfter: Math.max(1, counts.seconds_to_next_day),
      extensions: { limit: limits.user_daily_limit, used: counts.questions_today_user },
    };
  if (counts.questions_today_workspace >= limits.workspace_daily_limit)
    return {
      code: 'assistant_workspace_daily_limit',
      detail: `The workspace asked ${counts.questions_today_workspace} of its ${limits.workspace_daily_limit} questions today (${zone}).`,
      hint: 'Ask again tomorrow, or ask a workspace admin to raise workspace_daily_limit.',
      retryAfter: Math.max(1, counts.seconds_to_next_day),
      extensions: {
        limit: limits.workspace_daily_limit,
        used: counts.questions_today_workspace,
      },
    };
  if (counts.active_user_runs >= limits.max_active_user_runs)
    return {
      code: 'assistant_user_active_runs',
      detail: `You have ${counts.active_user_runs} questions being answered (at most ${limits.max_active_user_runs}).`,
      hint: 'Wait for an answer (getAssistantRun) or cancel a run, then ask again.',
      retryAfter: ACTIVE_RETRY_SECONDS,
      extensions: { limit: limits.max_active_user_runs, active: counts.active_user_runs },
    };
  if (counts.active_workspace_runs >= limits.max_active_workspace_runs)
    return {
      code: 'assistant_workspace_active_runs',
      detail: `The workspace has ${counts.active_workspace_runs} questions being answered (at most ${limits.max_active_workspace_runs}).`,
      hint: 'Wait for answers to finish, then ask again.',
      retryAfter: ACTIVE_RETRY_SECONDS,
      extensions: {
        limit: limits.max_active_workspace_runs,
        active: counts.active_workspace_runs,
      },
    };
  const limit = parseMicros(limits.monthly_limit_usd);
  const committed = parseMicros(counts.monthly_committed_usd);
  const remaining = limit > committed ? limit - committed : 0n;
  const need = parseMicros(reservation);
  if (remaining === 0n || need > remaining)
    return {
      code: 'assistant_monthly_budget_exhausted',
      detail: `This month's assistant budget has ${formatMicros(remaining)} USD of ${limits.monthly_limit_usd} USD left; a question may cost up to ${reservation} USD.`,
      hint: 'Wait for running questions to finish (they release what they did not spend), for next month, or ask a workspace admin to raise monthly_limit_usd.',
      // Running questions release their unspent reservation; a full budget waits for the month.
      retryAfter:
        counts.active_workspace_runs > 0 ? ACTIVE_RETRY_SECONDS : counts.seconds_to_next_month,
      extensions: {
        remaining_usd: formatMicros(remaining),
        monthly_limit_usd: limits.monthly_limit_usd,
        required_usd: reservation,
      },
    };
  return null;
}
