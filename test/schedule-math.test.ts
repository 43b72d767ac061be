/**
 * Schedule calendar maths, table-driven: each cadence, DST jumps in zones of both hemispheres,
 * month ends and leap years, biweekly rhythm across a year boundary, and the rule checks.
 */
import test from 'ava';
import {
  checkRule,
  nextOccurrences,
  occurrencesBetween,
  resolveWallTime,
  type RuleInput,
} from '../domain/schedules/rules';

const rule = (input: RuleInput) => {
  const { rule: r, problems } = checkRule(input);
  if (!r) throw new Error(JSON.stringify(problems));
  return r;
};

interface Case {
  title: string;
  input: RuleInput;
  after: string;
  runs: string[];
}

const CASES: Case[] = [
  {
    title: 'daily in UTC, the same day when the time is still ahead',
    input: { timezone: 'UTC', cadence: 'daily', local_hour: 9, local_minute: 15 },
    after: '2026-11-22T09:14:59.000Z',
    runs: ['2026-11-22T09:15:00.000Z', '2026-11-23T09:15:00.000Z', '2026-11-24T09:15:00.000Z'],
  },
  {
    title: 'strictly after: an occurrence at the instant itself is not listed',
    input: { timezone: 'UTC', cadence: 'daily', local_hour: 9, local_minute: 15 },
    after: '2026-11-22T09:15:00.000Z',
    runs: ['2026-11-23T09:15:00.000Z', '2026-11-24T09:15:00.000Z'],
  },
  {
    title: 'weekly, weekday 0 is Sunday (2026-11-22 is a Sunday), Berlin winter time',
    input: {
      timezone: 'Europe/Berlin',
      cadence: 'weekly',
      weekday: 0,
      local_hour: 9,
      local_minute: 0,
    },
    after: '2026-11-22T04:00:00.000Z',
    runs: ['2026-11-22T08:00:00.000Z', '2026-11-29T08:00:00.000Z', '2026-12-06T08:00:00.000Z'],
  },
  {
    title: 'weekly on Saturday (6)',
    input: { timezone: 'UTC', cadence: 'weekly', weekday: 6, local_hour: 23, local_minute: 59 },
    after: '2026-11-22T00:00:00.000Z',
    runs: ['2026-11-28T23:59:00.000Z', '2026-12-05T23:59:00.000Z'],
  },
  {
    title: 'America/New_York spring forward: 02:30 runs when the clock jumps (03:00 EDT)',
    input: { timezone: 'America/New_York', cadence: 'daily', local_hour: 2, local_minute: 30 },
    after: '2026-03-07T12:00:00.000Z',
    runs: ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'],
  },
  {
    title: 'America/New_York fall back: 01:30 runs once, the first time (EDT)',
    input: { timezone: 'America/New_York', cadence: 'daily', local_hour: 1, local_minute: 30 },
    after: '2026-10-31T12:00:00.000Z',
    runs: ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'],
  },
  {
    title: 'Europe/Berlin spring forward: 02:30 runs at 03:00 CEST',
    input: { timezone: 'Europe/Berlin', cadence: 'daily', local_hour: 2, local_minute: 30 },
    after: '2026-03-28T12:00:00.000Z',
    runs: ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'],
  },
  {
    title: 'Europe/Berlin fall back: 02:30 runs the first time (CEST)',
    input: { timezone: 'Europe/Berlin', cadence: 'daily', local_hour: 2, local_minute: 30 },
    after: '2026-10-24T12:00:00.000Z',
    runs: ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'],
  },
  {
    title: 'Australia/Sydney spring forward (October): 02:15 runs at 03:00 AEDT',
    input: { timezone: 'Australia/Sydney', cadence: 'daily', local_hour: 2, local_minute: 15 },
    after: '2026-10-03T06:00:00.000Z',
    runs: ['2026-10-03T16:00:00.000Z', '2026-10-04T15:15:00.000Z'],
  },
  {
    title: 'Australia/Sydney fall back (April): 02:30 runs the first time (AEDT)',
    input: { timezone: 'Australia/Sydney', cadence: 'daily', local_hour: 2, local_minute: 30 },
    after: '2026-04-04T06:00:00.000Z',
    runs: ['2026-04-04T15:30:00.000Z', '2026-04-05T16:30:00.000Z'],
  },
  {
    title: 'weekly across a DST jump keeps the local time',
    input: {
      timezone: 'America/New_York',
      cadence: 'weekly',
      weekday: 1,
      local_hour: 9,
      local_minute: 0,
    },
    after: '2026-10-27T00:00:00.000Z',
    runs: ['2026-11-02T14:00:00.000Z', '2026-11-09T14:00:00.000Z'],
  },
  {
    title: 'monthly on the 31st: last day of shorter months, 28 February in a common year',
    input: {
      timezone: 'UTC',
      cadence: 'monthly',
      day_of_month: 31,
      local_hour: 6,
      local_minute: 0,
    },
    after: '2027-01-01T00:00:00.000Z',
    runs: [
      '2027-01-31T06:00:00.000Z',
      '2027-02-28T06:00:00.000Z',
      '2027-03-31T06:00:00.000Z',
      '2027-04-30T06:00:00.000Z',
    ],
  },
  {
    title: 'monthly on the 30th in a leap year: 29 February',
    input: {
      timezone: 'UTC',
      cadence: 'monthly',
      day_of_month: 30,
      local_hour: 6,
      local_minute: 0,
    },
    after: '2028-01-30T07:00:00.000Z',
    runs: ['2028-02-29T06:00:00.000Z', '2028-03-30T06:00:00.000Z'],
  },
  {
    title: 'monthly on the 29th: 28 February 2100 (a century, not a leap year)',
    input: {
      timezone: 'UTC',
      cadence: 'monthly',
      day_of_month: 29,
      local_hour: 0,
      local_minute: 0,
    },
    after: '2100-02-01T00:00:00.000Z',
    runs: ['2100-02-28T00:00:00.000Z', '2100-03-29T00:00:00.000Z'],
  },
  {
    title: 'monthly on the 1st in Sydney: the UTC instant is the previous day',
    input: {
      timezone: 'Australia/Sydney',
      cadence: 'monthly',
      day_of_month: 1,
      local_hour: 8,
      local_minute: 0,
    },
    after: '2026-11-22T00:00:00.000Z',
    runs: ['2026-11-30T21:00:00.000Z', '2026-12-31T21:00:00.000Z'],
  },
  {
    title:
      'biweekly: first matching weekday on or after the anchor, then every 14 days, across the new year',
    input: {
      timezone: 'UTC',
      cadence: 'biweekly',
      weekday: 1,
      anchor_date: '2026-12-20',
      local_hour: 9,
      local_minute: 0,
    },
    after: '2026-12-01T00:00:00.000Z',
    runs: [
      '2026-12-21T09:00:00.000Z',
      '2027-01-04T09:00:00.000Z',
      '2027-01-18T09:00:00.000Z',
      '2027-02-01T09:00:00.000Z',
    ],
  },
  {
    title: 'biweekly parity holds across the next year boundary, a year after the anchor',
    input: {
      timezone: 'Europe/Berlin',
      cadence: 'biweekly',
      weekday: 5,
      anchor_date: '2026-01-02',
      local_hour: 18,
      local_minute: 30,
    },
    after: '2026-12-20T00:00:00.000Z',
    runs: ['2027-01-01T17:30:00.000Z', '2027-01-15T17:30:00.000Z', '2027-01-29T17:30:00.000Z'],
  },
  {
    title: 'biweekly when the anchor itself is the weekday',
    input: {
      timezone: 'UTC',
      cadence: 'biweekly',
      weekday: 0,
      anchor_date: '2026-11-22',
      local_hour: 12,
      local_minute: 0,
    },
    after: '2026-11-01T00:00:00.000Z',
    runs: ['2026-11-22T12:00:00.000Z', '2026-12-06T12:00:00.000Z'],
  },
  {
    title: 'an anchor date in the future holds back a daily schedule',
    input: {
      timezone: 'UTC',
      cadence: 'daily',
      anchor_date: '2027-01-01',
      local_hour: 0,
      local_minute: 30,
    },
    after: '2026-11-22T00:00:00.000Z',
    runs: ['2027-01-01T00:30:00.000Z', '2027-01-02T00:30:00.000Z'],
  },
];

for (const c of CASES) {
  test(c.title, (t) => {
    const got = nextOccurrences(rule(c.input), new Date(c.after), c.runs.length);
    t.deepEqual(
      got.map((d) => d.toISOString()),
      c.runs,
    );
  });
}

test('biweekly without an anchor counts from the given default anchor date', (t) => {
  const r = rule({
    timezone: 'UTC',
    cadence: 'biweekly',
    weekday: 3,
    local_hour: 8,
    local_minute: 0,
  });
  const runs = nextOccurrences(r, new Date('2026-12-01T00:00:00Z'), 2, '2026-11-20');
  // First Wednesday on or after 2026-11-20 is 11-25; 12-09 is 14 days on (12-02 is not a run).
  t.deepEqual(
    runs.map((d) => d.toISOString()),
    ['2026-12-09T08:00:00.000Z', '2026-12-23T08:00:00.000Z'],
  );
});

test('resolveWallTime finds the jump instant and the first of two repeated instants', (t) => {
  t.is(
    resolveWallTime({ year: 2026, month: 3, day: 8 }, 2, 59, 'America/New_York').toISOString(),
    '2026-03-08T07:00:00.000Z',
  );
  t.is(
    resolveWallTime({ year: 2026, month: 11, day: 1 }, 1, 0, 'America/New_York').toISOString(),
    '2026-11-01T05:00:00.000Z',
  );
  // Lord Howe Island moves by 30 minutes: 02:10 is skipped, the clock jumps from 02:00 to 02:30.
  t.is(
    resolveWallTime({ year: 2026, month: 10, day: 4 }, 2, 10, 'Australia/Lord_Howe').toISOString(),
    '2026-10-03T15:30:00.000Z',
  );
});

test('occurrencesBetween lists (from, to] and keeps only the newest past the limit', (t) => {
  const r = rule({ timezone: 'UTC', cadence: 'daily', local_hour: 12, local_minute: 0 });
  const all = occurrencesBetween(
    r,
    new Date('2026-11-01T12:00:00Z'),
    new Date('2026-11-05T12:00:00Z'),
    '2026-11-01',
  );
  t.deepEqual(
    all.map((d) => d.toISOString()),
    [
      '2026-11-02T12:00:00.000Z',
      '2026-11-03T12:00:00.000Z',
      '2026-11-04T12:00:00.000Z',
      '2026-11-05T12:00:00.000Z',
    ],
  );
  const capped = occurrencesBetween(
    r,
    new Date('2026-01-01T00:00:00Z'),
    new Date('2026-11-05T13:00:00Z'),
    '2026-01-01',
    3,
  );
  t.deepEqual(
    capped.map((d) => d.toISOString()),
    ['2026-11-03T12:00:00.000Z', '2026-11-04T12:00:00.000Z', '2026-11-05T12:00:00.000Z'],
  );
});

test('rule checks: unknown zone, missing and contradictory fields, each named', (t) => {
  const problems = (input: Partial<RuleInput>) =>
    checkRule({ timezone: 'UTC', cadence: 'daily', local_hour: 0, local_minute: 0, ...input })
      .problems.map((p) => p.path)
      .sort();
  t.deepEqual(problems({}), []);
  t.deepEqual(problems({ timezone: 'Mars/Olympus_Mons' }), ['/timezone']);
  t.deepEqual(problems({ timezone: '+03:00' }), ['/timezone']);
  t.deepEqual(problems({ cadence: 'weekly' }), ['/weekday']);
  t.deepEqual(problems({ cadence: 'biweekly', weekday: null }), ['/weekday']);
  t.deepEqual(problems({ cadence: 'monthly' }), ['/day_of_month']);
  t.deepEqual(problems({ cadence: 'monthly', day_of_month: 5, weekday: 1 }), ['/weekday']);
  t.deepEqual(problems({ cadence: 'weekly', weekday: 1, day_of_month: 5 }), ['/day_of_month']);
  t.deepEqual(problems({ weekday: 2, day_of_month: 3 }), ['/day_of_month', '/weekday']);
  t.deepEqual(problems({ anchor_date: '2026-02-30' }), ['/anchor_date']);
  t.is(
    checkRule({ timezone: 'europe/berlin', cadence: 'daily', local_hour: 0, local_minute: 0 }).rule
      ?.timezone,
    'Europe/Berlin',
  );
});

test('anchors far in the past keep the biweekly parity; anchors after 2999 are refused', (t) => {
  const anchorMs = (() => {
    const d = new Date(0);
    d.setUTCFullYear(1, 0, 3); // 0001-01-03, a Wednesday (proleptic Gregorian)
    return d.getTime();
  })();
  t.is(new Date(anchorMs).getUTCDay(), 3);
  const r = rule({
    timezone: 'UTC',
    cadence: 'biweekly',
    weekday: 3,
    anchor_date: '0001-01-03',
    local_hour: 0,
    local_minute: 0,
  });
  const runs = nextOccurrences(r, new Date('2026-11-22T00:00:00Z'), 3);
  t.is(runs.length, 3);
  for (const run of runs) {
    t.is(run.getUTCDay(), 3);
    t.is(((run.getTime() - anchorMs) / 86_400_000) % 14, 0, run.toISOString());
  }
  t.deepEqual(
    checkRule({
      timezone: 'UTC',
      cadence: 'daily',
      anchor_date: '3000-01-01',
      local_hour: 0,
      local_minute: 0,
    }).problems.map((p) => p.path),
    ['/anchor_date'],
  );
  t.is(
    checkRule({
      timezone: 'UTC',
      cadence: 'daily',
      anchor_date: '2999-12-31',
      local_hour: 0,
      local_minute: 0,
    }).problems.length,
    0,
  );
});
