/**
 * Riding out a database outage inside an activity. A step that fails because PostgreSQL is
 * unreachable (restart, failover) does not spend its retries at 1/2/4 s: it waits in place,
 * heartbeating, until the database answers again; the caller then runs its work again, in the
 * same attempt (activities/audits/steps.ts, outageAware: an outage spends no attempt). Past `boundSeconds` since the outage was noticed it fails for good with the type
 * `dependency_unavailable`, which becomes the audit's error_code.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { isDatabaseUnavailable } from '../db/errors';
import { pingDatabase } from '../db/connection';
import type { Logger } from '../platform/logger';

/** How often a waiting step asks the database again. */
const PROBE_MS = 1000;

/**
 * If `err` says the database is unreachable, waits until it answers (then returns: the caller
 * runs its work again) or throws the non-retryable `dependency_unavailable` once
 * the bound has passed. Any other error returns at once.
 */
export async function rideOutDatabaseOutage(
  err: unknown,
  deps: { db: Knex; log: Logger; boundSeconds: number },
): Promise<void> {
  if (!isDatabaseUnavailable(err)) return;
  const ctx = Context.current();
  // From when this step met the outage: a step that ran for long before it is not failed at once.
  const since = Date.now();
  const what = {
    dependency: 'database',
    activity: ctx.info.activityType,
    attempt: ctx.info.attempt,
  };
  deps.log.warn(
    { ...what, err: (err as Error).message },
    'database unavailable; the step waits for it',
  );
  for (;;) {
    const waited = Math.round((Date.now() - since) / 1000);
    if (waited > deps.boundSeconds) {
      deps.log.error(
        { ...what, seconds: waited },
        'database unavailable for longer than DEPENDENCY_OUTAGE_BOUND_SECONDS; the step fails',
      );
      throw ApplicationFailure.nonRetryable(
        `The database was unreachable for ${waited} s (bound ${deps.boundSeconds} s): ${(err as Error).message}`,
        'dependency_unavailable',
      );
    }
    ctx.heartbeat({ waitingFor: 'database' });
    await ctx.sleep(PROBE_MS);
    try {
      await pingDatabase(deps.db);
      deps.log.info(what, 'database answers again; the step is retried');
      return;
    } catch {
      // still down
    }
  }
}
