/**
 * Which attempt of a step is current. Temporal starts attempt N+1 once attempt N missed its
 * heartbeat, but attempt N's process may only have been paused (SIGSTOP, a long GC, a frozen VM)
 * and resume later: it must then stop without writing anything for the audit. The stage row
 * holds the highest attempt any step of the stage has claimed (db/audits.ts claimStageAttempt);
 * an attempt below it is stale. The database may not know yet (attempt N+1 may sit in a poll of
 * the same paused process), so an attempt that was itself paused longer than its heartbeat
 * timeout counts as stale too: the server gave up on it, whatever the database says.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Knex } from 'knex';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { claimStageAttempt, currentStageAttempt, lockStageAttempt } from '../../db/audits';
import type { Logger } from '../../platform/logger';

/** The error a stale attempt ends with: retryable, so a mistaken verdict costs one retry. */
const ATTEMPT_SUPERSEDED = 'attempt_superseded';

interface AttemptGuard {
  /** Puts this attempt on the stage row; throws when a later attempt already started. */
  claim(): Promise<void>;
  /** Throws when a later attempt started since: call before every write for the audit. */
  check(): Promise<void>;
  /** Runs `work` in a transaction holding the stage row, once checked current. */
  whileCurrent<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
}

/**
 * Pauses of this process (SIGSTOP, a frozen VM, a blocked event loop), seen as gaps between the
 * ticks of one process-wide clock: the last hundred, which is plenty for the attempts running.
 */
const pauses: Array<{ from: number; to: number }> = [];
let lastTick = Date.now();
let clock: NodeJS.Timeout | undefined;

function tick(): void {
  const now = Date.now();
  if (now - lastTick > 1500) {
    pauses.push({ from: lastTick, to: now });
    if (pauses.length > 100) pauses.shift();
  }
  lastTick = now;
}

function watchClock(): void {
  if (clock) return;
  lastTick = Date.now();
  clock = setInterval(tick, 500);
  clock.unref();
}

/** Whether the process stood still for longer than `ms` at some time after `since`. */
function pausedSince(since: number, ms: number): boolean {
  tick();
  return pauses.some((p) => p.to > since && p.to - Math.max(p.from, since) > ms);
}

export function attemptGuard(
  db: Knex,
  log: Logger,
  who: { auditId: string; stage: string; attempt: number; heartbeatTimeoutSeconds: number },
): AttemptGuard {
  const timeoutMs = who.heartbeatTimeoutSeconds * 1000;
  // Below the heartbeat timeout, so a blocked claim ends before the next attempt times out too.
  const idleLimitMs = Math.max(1000, Math.floor(timeoutMs / 2));
  const since = Date.now();
  watchClock();
  const stale = (current: number): never => {
    log.warn(
      { audit_id: who.auditId, stage: who.stage, attempt: who.attempt, current },
      'attempt superseded by a later one: stopping without writing',
    );
    throw ApplicationFailure.create({
      type: ATTEMPT_SUPERSEDED,
      message: `Attempt ${who.attempt} of stage ${who.stage} was superseded by attempt ${current}.`,
      nonRetryable: false,
    });
  };
  const verify = (current: number) => {
    if (current > who.attempt) stale(current);
    if (pausedSince(since, timeoutMs)) stale(who.attempt + 1);
  };
  return {
    async claim() {
      verify(await claimStageAttempt(db, who.auditId, who.stage, who.attempt));
    },
    async check() {
      verify(await currentStageAttempt(db, who.auditId, who.stage));
    },
    async whileCurrent(work) {
      return db.transaction(async (trx) => {
        // A process frozen inside this transaction would hold the stage row (and the audit's)
        // and block the next attempt's claim: the server ends such a session first.
        await trx.raw(`SET LOCAL idle_in_transaction_session_timeout = ${idleLimitMs}`);
        verify(await lockStageAttempt(trx, who.auditId, who.stage));
        return work(trx);
      });
    },
  };
}

/**
 * A scratch folder of its own for one attempt in one process, `<workDir>/<audit>/<attempt>-
 * <pid>-<random>`: two attempts of one audit (a stale one resuming, or two workers) never share
 * or delete each other's files. Only its owner removes it (`remove`, which also removes the
 * audit's folder once empty).
 */
export async function attemptFolder(
  workDir: string,
  auditId: string,
  attempt: number,
): Promise<{ dir: string; remove(): Promise<void> }> {
  const parent = path.join(workDir, auditId);
  const dir = path.join(
    parent,
    `${attempt}-${process.pid}-${crypto.randomBytes(4).toString('hex')}`,
  );
  await fs.promises.mkdir(parent, { recursive: true });
  await fs.promises.mkdir(dir);
  return {
    dir,
    async remove() {
      await fs.promises.rm(dir, { recursive: true, force: true });
      // Another attempt's folder may still be there (ENOTEMPTY): then it is its owner's to remove.
      await fs.promises.rmdir(parent).catch(() => undefined);
    },
  };
}
