/**
 * Schedule calendar maths: the occurrences of a schedule definition, as UTC instants. One pure
 * function serves both the preview endpoint and the ScheduleWorkflow's dispatch (through an
 * activity), so what a preview lists is what runs.
 *
 * Rules (documented in the OpenAPI descriptions):
 * - weekday 0 = Sunday .. 6 = Saturday.
 * - An occurrence at local wall time w runs at the first instant whose local wall time is at or
 *   after w: a time skipped by a daylight-saving jump runs when the clock jumps (02:30 on a
 *   spring-forward night runs at 03:00), a repeated time runs once, the first time.
 * - monthly on a day the month lacks (29..31) runs on the month's last day.
 * - biweekly: the first matching weekday on or after the anchor date, then every 14 days.
 * - No occurrence falls on a local date before the anchor date (any cadence).
 */
import { DateTime, IANAZone } from 'luxon';

export const CADENCES = ['daily', 'weekly', 'biweekly', 'monthly'] as const;
export type Cadence = (typeof CADENCES)[number];

/** Run times are RFC 3339 instants, so they stop at year 9999; anchors stay well before. */
export const LATEST_ANCHOR = '2999-12-31';
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

export interface ScheduleRule {
  /** A canonical IANA zone name (see canonicalZone). */
  timezone: string;
  cadence: Cadence;
  localHour: number;
  localMinute: number;
  /** 0 = Sunday .. 6 = Saturday; weekly and biweekly only. */
  weekday: number | null;
  /** 1..31; monthly only. */
  dayOfMonth: number | null;
  /** `YYYY-MM-DD` in the schedule's zone, or null. */
  anchorDate: string | null;
}

/** The fields of a request as the API receives them (all optional beyond the schema). */
export interface RuleInput {
  timezone: string;
  cadence: Cadence;
  local_hour: number;
  local_minute: number;
  weekday?: number | null;
  day_of_month?: number | null;
  anchor_date?: string | null;
}

export interface RuleProblem {
  /** JSON Pointer of the field. */
  path: string;
  message: string;
}

/** The canonical spelling of an IANA zone (`europe/berlin` -> `Europe/Berlin`), or null. */
export function canonicalZone(zone: string): string | null {
  // Offsets like "+03:00" are not IANA zones even where Intl accepts them.
  if (!/^[A-Za-z]/.test(zone) || !IANAZone.isValidZone(zone)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/**
 * Checks what the schema cannot: a known zone, the fields each cadence needs and no field that
 * contradicts it. Returns every problem (empty: valid) and, when valid, the rule.
 */
export function checkRule(input: RuleInput): {
  problems: RuleProblem[];
  rule: ScheduleRule | null;
} {
  const problems: RuleProblem[] = [];
  const zone = canonicalZone(input.timezone);
  if (!zone)
    problems.push({
      path: '/timezone',
      message: 'is not a known IANA time zone (e.g. Europe/Berlin)',
    });
  const weekday = input.weekday ?? null;
  const dayOfMonth = input.day_of_month ?? null;
  const needsWeekday = input.cadence === 'weekly' || input.cadence === 'biweekly';
  if (needsWeekday && weekday === null)
    problems.push({ path: '/weekday', message: `is required for ${input.cadence} cadence` });
  if (!needsWeekday && weekday !== null)
    problems.push({
      path: '/weekday',
      message: `applies to weekly and biweekly cadences only, not ${input.cadence}`,
    });
  if (input.cadence === 'monthly' && dayOfMonth === null)
    problems.push({ path: '/day_of_month', message: 'is required for monthly cadence' });
  if (input.cadence !== 'monthly' && dayOfMonth !== null)
    problems.push({
      path: '/day_of_month',
      message: `applies to monthly cadence only, not ${input.cadence}`,
    });
  const anchor = input.anchor_date ?? null;
  if (anchor !== null && !DateTime.fromISO(anchor, { zone: 'UTC' }).isValid)
    problems.push({ path: '/anchor_date', message: 'is not a calendar date' });
  else if (anchor !== null && anchor > LATEST_ANCHOR)
    problems.push({ path: '/anchor_date', message: `must be ${LATEST_ANCHOR} or earlier` });
  if (problems.length) return { problems, rule: null };
  return {
    problems,
    rule: {
      timezone: zone!,
      cadence: input.cadence,
      localHour: input.local_hour,
      localMinute: input.local_minute,
      weekday,
      dayOfMonth,
      anchorDate: anchor,
    },
  };
}

/** The local calendar date of an instant in a zone, `YYYY-MM-DD`. */
export function localDate(instant: Date, zone: string): string {
  return DateTime.fromJSDate(instant, { zone }).toISODate()!;
}

interface Ymd {
  year: number;
  month: number;
  day: number;
}

/** UTC milliseconds of a calendar date and time (Date.UTC maps years 0..99 to 1900..1999). */
function utcMs(date: Ymd, hour = 0, minute = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(date.year, date.month - 1, date.day);
  d.setUTCHours(hour, minute, 0, 0);
  return d.getTime();
}

const offsetAt = (ms: number, zone: string): number =>
  DateTime.fromMillis(ms, { zone }).offset * 60_000;

/**
 * The first instant whose local wall time in `zone` is at or after the given wall time on the
 * given date: the wall time itself (its first occurrence when it repeats), or the instant the
 * clock jumps over it when it is skipped.
 */
export function resolveWallTime(date: Ymd, hour: number, minute: number, zone: string): Date {
  const wall = utcMs(date, hour, minute);
  const day = 86_400_000;
  // Every offset in force around that day (a zone changes offset at most once in a few days).
  const offsets = [...new Set([-2, -1, 0, 1, 2].map((d) => offsetAt(wall + d * day, zone)))];
  const valid = offsets
    .map((off) => wall - off)
    .filter((ms) => offsetAt(ms, zone) === wall - ms)
    .sort((a, b) => a - b);
  if (valid.length > 0) return new Date(valid[0]!);
  // Skipped: between "wall read with the later offset" (still before the jump) and "wall read
  // with the earlier offset" (already after it) lies the jump; find its exact instant.
  let lo = wall - Math.max(...offsets);
  let hi = wall - Math.min(...offsets);
  const before = offsetAt(lo, zone);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid, zone) === before) lo = mid;
    else hi = mid;
  }
  return new Date(hi);
}

const toYmd = (d: DateTime): Ymd => ({ year: d.year, month: d.month, day: d.day });
const dayNumber = (d: Ymd): number => Math.round(utcMs(d) / 86_400_000);

/** Local dates (in order, from `from` on) on which the rule has an occurrence. */
function* candidateDates(rule: ScheduleRule, from: DateTime, anchor: DateTime): Generator<Ymd> {
  let day = from < anchor ? anchor : from;
  switch (rule.cadence) {
    case 'daily':
      for (;;) {
        yield toYmd(day);
        day = day.plus({ days: 1 });
      }
    case 'weekly': {
      // luxon: 1 = Monday .. 7 = Sunday; ours: 0 = Sunday .. 6 = Saturday.
      const shift = (rule.weekday! - (day.weekday % 7) + 7) % 7;
      day = day.plus({ days: shift });
      for (;;) {
        yield toYmd(day);
        day = day.plus({ days: 7 });
      }
    }
    case 'biweekly': {
      const first = anchor.plus({ days: (rule.weekday! - (anchor.weekday % 7) + 7) % 7 });
      // Whole calendar days (a DST day has 23 or 25 hours, so count dates, not hours).
      const elapsed = Math.max(0, dayNumber(toYmd(day)) - dayNumber(toYmd(first)));
      day = first.plus({ days: Math.floor(elapsed / 14) * 14 });
      for (;;) {
        yield toYmd(day);
        day = day.plus({ days: 14 });
      }
    }
    case 'monthly': {
      let month = day.startOf('month');
      for (;;) {
        const dom = Math.min(rule.dayOfMonth!, month.daysInMonth!);
        const date = month.set({ day: dom });
        if (date >= day) yield toYmd(date);
        month = month.plus({ months: 1 });
      }
    }
  }
}

/**
 * The next `count` occurrences of `rule` strictly after `after`, as UTC instants. Without an
 * anchor date, biweekly counts from `defaultAnchor` (a schedule's creation date, or for a preview
 * today), in the schedule's zone.
 */
export function nextOccurrences(
  rule: ScheduleRule,
  after: Date,
  count: number,
  defaultAnchor: string = localDate(after, rule.timezone),
): Date[] {
  const zone = rule.timezone;
  const anchor = DateTime.fromISO(rule.anchorDate ?? defaultAnchor, { zone }).startOf('day');
  // A day early: a DST jump can move the first occurrence onto the previous local date's instant.
  const from = DateTime.fromJSDate(after, { zone }).startOf('day').minus({ days: 1 });
  const out: Date[] = [];
  for (const date of candidateDates(rule, from, anchor)) {
    const at = resolveWallTime(date, rule.localHour, rule.localMinute, zone);
    if (!(at.getTime() <= LAST_INSTANT)) break;
    if (at.getTime() > after.getTime()) out.push(at);
    if (out.length >= count) break;
  }
  return out;
}

/**
 * Occurrences in the interval (from, to], oldest first, at most `limit` of them (the newest are
 * kept when there are more: only the latest missed run can matter for a catch-up).
 */
export function occurrencesBetween(
  rule: ScheduleRule,
  from: Date,
  to: Date,
  defaultAnchor: string,
  limit = 1000,
): Date[] {
  const out: Date[] = [];
  let cursor = from;
  for (;;) {
    const batch = nextOccurrences(rule, cursor, 50, defaultAnchor);
    if (batch.length === 0) return out;
    for (const at of batch) {
      if (at.getTime() > to.getTime()) return out;
      out.push(at);
      if (out.length > limit) out.shift();
    }
    cursor = batch[batch.length - 1]!;
  }
}
