/** Activity implementations, built from their dependencies (`createActivities(deps)`). */
import { createAuditActivities, type AuditActivityDeps } from './audit';
import { createRetentionActivities } from './retention';
import { createDecisionActivities } from './decision';
import { createScheduleActivities } from './schedule';

export type ActivityDeps = AuditActivityDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    ...createAuditActivities(deps),
    ...createRetentionActivities(deps),
    ...createDecisionActivities(deps),
    ...createScheduleActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
