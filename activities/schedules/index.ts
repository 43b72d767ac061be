/**
 * The ScheduleWorkflow's I/O: plan a tick (which occurrences are due, which were missed, when to
 * wake next), dispatch one occurrence exactly once, and record what happened on the schedule.
 * The calendar comes from domain/schedules/rules.ts, the same function the preview endpoint uses.
 */
import { scheduleDispatchLag } from '../../platform/metrics';
import type { Knex } from 'knex';
import { recordWrite, writtenBy } from '../../db/activity';
import { createAuditRecord, failQueuedAudit } from '../../db/audits';
import { findRepository } from '../../db/repositories';
import {
  advanceDispatchCursor,
  findScheduleRun,
  insertScheduleRun,
  ruleOf,
  scheduleById,
  updateSchedule,
  type ScheduleRow,
} from '../../db/schedules';
import { memberById } from '../../db/workspaces';
import { auditWorkflowId } from '../../domain/contract/workflows';
import { localDate, nextOccurrences, occurrencesBetween } from '../../domain/schedules/rules';
import type { AuditStart } from '../../domain/workflow-starts';
import { admissionOn, type Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';

export interface ScheduleActivityDeps {
  db: Knex;
  log: Logger;
  config: Config;
}

export type RunKind = 'on_time' | 'catch_up';

export interface DueRun {
  /** The occurrence (ISO instant) the audit runs for: the key of its at-most-once dispatch. */
  occurrence: string;
  kind: RunKind;
  reason: string;
}

export type TickPlan =
  | { kind: 'deleted' }
  | {
      kind: 'paused' | 'active';
      state: ScheduleRow['state'];
      timezone: string;
      repositoryId: string;
      nextRunAt: string;
      runs: DueRun[];
      missed: number;
      /** Occurrences up to here are handled once the runs are dispatched. */
      cursorTo: string;
    };

export type DispatchResult =
  | { outcome: 'dispatched'; audit: AuditStart; existing: boolean }
  | { outcome: 'skipped'; reason: 'deleted' | 'paused' }
  | { outcome: 'failed'; errorCode: string; state: ScheduleRow['state'] };

/** The date biweekly counts from when the schedule has no anchor: its creation date. */
const defaultAnchor = (row: ScheduleRow) => localDate(row.created_at, row.timezone);

export function createScheduleActivities(deps: ScheduleActivityDeps) {
  const { db, log, config } = deps;
  const graceMs = config.scheduleMissedGraceSeconds * 1000;

  async function ownerLogin(trx: Knex, row: ScheduleRow): Promise<string | null> {
    return (await memberById(trx, row.owner_id))?.login ?? null;
  }

  async function failDispatch(
    trx: Knex,
    row: ScheduleRow,
    errorCode: string,
  ): Promise<DispatchResult> {
    const failures = row.consecutive_failures + 1;
    const state =
      row.state === 'paused'
        ? 'paused'
        : failures >= config.scheduleMaxFailures
          ? 'error'
          : row.state;
    await updateSchedule(
      trx,
      row.id,
      { last_error_code: errorCode, consecutive_failures: failures, state },
      { bumpVersion: state !== row.state },
    );
    await recordWrite(trx, {
      workspaceId: row.workspace_id,
      ...writtenBy(null),
      action: 'schedule.dispatch_failed',
      resourceType: 'audit_schedule',
      resourceId: row.id,
      details: { error_code: errorCode, consecutive_failures: failures, state },
    });
    log.warn({ schedule_id: row.id, error_code: errorCode, failures }, 'schedule dispatch failed');
    return { outcome: 'failed', errorCode, state };
  }

  return {
    /**
     * What to do now: occurrences in (cursor, now] that are on time (within the grace) run;
     * older ones are missed: `skip` runs none of them, `run_once` runs one catch-up (for the
     * latest) unless an on-time run is due anyway. Writes next_run_at; no other side effect, so
     * a retried attempt plans the same.
     */
    async planScheduleTick(scheduleId: string): Promise<TickPlan> {
      return db.transaction(async (trx) => {
        const row = await scheduleById(trx, scheduleId, { forUpdate: true });
        if (!row || row.deleted_at) return { kind: 'deleted' as const };
        const now = new Date();
        const rule = ruleOf(row);
        const next = nextOccurrences(rule, now, 1, defaultAnchor(row))[0]!;
        if (next.getTime() !== row.next_run_at.getTime())
          await updateSchedule(trx, row.id, { next_run_at: next }, { bumpVersion: false });
        const base = {
          state: row.state,
          timezone: row.timezone,
          repositoryId: row.repository_id,
          nextRunAt: next.toISOString(),
          cursorTo: now.toISOString(),
        };
        if (row.state === 'paused')
          return { ...base, kind: 'paused' as const, runs: [], missed: 0 };
        const due = occurrencesBetween(rule, row.dispatch_cursor_at, now, defaultAnchor(row));
        const onTime = due.filter((at) => now.getTime() - at.getTime() <= graceMs);
        const missed = due.filter((at) => now.getTime() - at.getTime() > graceMs);
        const runs: DueRun[] = onTime.map((at) => ({
          occurrence: at.toISOString(),
          kind: 'on_time',
          reason: `scheduled run for ${at.toISOString()}`,
        }));
        const latestMissed = missed[missed.length - 1];
        if (latestMissed && row.missed_run_policy === 'run_once' && runs.length === 0) {
          runs.push({
            occurrence: latestMissed.toISOString(),
            kind: 'catch_up',
            reason: `catch-up run (missed_run_policy run_once) for ${missed.length} missed occurrence(s), the latest ${latestMissed.toISOString()}`,
          });
        }
        return { ...base, kind: 'active' as const, runs, missed: missed.length };
      });
    },

    /**
     * Creates the audit of one occurrence, at most once: the (schedule, occurrence) row is the
     * key, so a retried attempt or a replay finds the audit made the first time. Failures that
     * retrying cannot fix (the repository is gone) are recorded on the schedule and returned.
     */
    async dispatchScheduledRun(
      scheduleId: string,
      occurrence: string,
      kind: RunKind,
      reason: string,
    ): Promise<DispatchResult> {
      return db.transaction(async (trx) => {
        const row = await scheduleById(trx, scheduleId, { forUpdate: true });
        if (!row || row.deleted_at)
          return { outcome: 'skipped' as const, reason: 'deleted' as const };
        const at = new Date(occurrence);
        const start = (auditId: string, workflowId: string): AuditStart => ({
          auditId,
          workflowId,
          workspaceId: row.workspace_id,
          repositoryId: row.repository_id,
          heartbeatTimeoutSeconds: config.agentHeartbeatTimeoutSeconds,
          maxAttempts: config.agentMaxAttempts,
          admission: admissionOn(config),
        });
        const existing = await findScheduleRun(trx, row.id, at);
        if (existing) {
          return {
            outcome: 'dispatched' as const,
            audit: start(existing.audit_id, auditWorkflowId(existing.audit_id)),
            existing: true,
          };
        }
        if (row.state === 'paused')
          return { outcome: 'skipped' as const, reason: 'paused' as const };
        if (!(await findRepository(trx, row.workspace_id, row.repository_id)))
          return failDispatch(trx, row, 'repository_deleted');
        const audit = await createAuditRecord(
          trx,
          {
            workspace_id: row.workspace_id,
            repository_id: row.repository_id,
            upload_id: null,
            created_by: row.owner_id,
            audit_type: 'repository',
            branch_ref: row.branch_ref,
            commit_sha: null,
            deep_review: false,
            source_scope: {},
            origin: 'schedule',
            origin_ref: row.id,
            trigger_reason: reason,
            profile_snapshot: null,
          },
          {
            actorId: row.owner_id,
            actorLogin: await ownerLogin(trx, row),
            tokenId: null,
            requestId: null,
          },
        );
        await insertScheduleRun(trx, {
          schedule_id: row.id,
          occurrence_at: at,
          audit_id: audit.id,
          kind,
        });
        await updateSchedule(
          trx,
          row.id,
          {
            last_dispatched_at: new Date(),
            last_run_at: at,
            last_error_code: null,
            consecutive_failures: 0,
            state: 'active',
          },
          { bumpVersion: row.state !== 'active' },
        );
        log.info(
          { schedule_id: row.id, audit_id: audit.id, occurrence, kind },
          'schedule dispatched an audit',
        );
        scheduleDispatchLag.observe(Math.max(0, (Date.now() - at.getTime()) / 1000));
        return {
          outcome: 'dispatched' as const,
          audit: start(audit.id, audit.workflow_id!),
          existing: false,
        };
      });
    },

    /** An audit whose workflow could not be started ends failed (as createAudit does). */
    async failUnstartedAudit(
      auditId: string,
      cause = 'the child workflow start failed',
    ): Promise<void> {
      await failQueuedAudit(db, auditId, cause);
    },

    /** Records a dispatch that failed in a way the activity itself could not record. */
    async recordScheduleFailure(scheduleId: string, errorCode: string): Promise<void> {
      await db.transaction(async (trx) => {
        const row = await scheduleById(trx, scheduleId, { forUpdate: true });
        if (row && !row.deleted_at) await failDispatch(trx, row, errorCode);
      });
    },

    /**
     * Moves the cursor past the occurrences just handled (never backwards: an update or resume
     * may have moved it further) and records missed occurrences as an event.
     */
    async completeScheduleTick(
      scheduleId: string,
      cursorTo: string,
      missed: number,
      caughtUp: boolean,
    ): Promise<void> {
      await db.transaction(async (trx) => {
        const row = await advanceDispatchCursor(trx, scheduleId, new Date(cursorTo));
        if (!row || missed === 0) return;
        await recordWrite(trx, {
          workspaceId: row.workspace_id,
          ...writtenBy(null),
          action: 'schedule.runs_missed',
          resourceType: 'audit_schedule',
          resourceId: scheduleId,
          details: { missed, missed_run_policy: row.missed_run_policy, caught_up: caughtUp },
        });
      });
    },
  };
}

export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
