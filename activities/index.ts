/** Activity implementations, built from their dependencies (`createActivities(deps)`). */
import { createAuditActivities, type AuditActivityDeps } from './audit';
import { createRetentionActivities } from './retention';

export type ActivityDeps = AuditActivityDeps;

export function createActivities(deps: ActivityDeps) {
  return { ...createAuditActivities(deps), ...createRetentionActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
