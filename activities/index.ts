/** Activity implementations, built from their dependencies (`createActivities(deps)`). */
import { createAuditActivities, type AuditActivityDeps } from './audits';
import { createAdmissionActivities } from './audits/admission';
import { createRecoveryActivities } from './audits/recovery';
import { createRetentionActivities } from './retention';
import { createDecisionActivities } from './decisions';
import { createScheduleActivities } from './schedules';
import { createAssistantActivities } from './assistant';
import { createRemediationActivities } from './remediations';
import { createWorkflowActionActivities } from './workflow-actions';
import { createExportActivities } from './exports';
import { createIntegrationActivities } from './integrations';

export type ActivityDeps = AuditActivityDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    ...createAuditActivities(deps),
    ...createAdmissionActivities(deps),
    ...createRetentionActivities(deps),
    ...createRecoveryActivities(deps),
    ...createDecisionActivities(deps),
    ...createScheduleActivities(deps),
    ...createAssistantActivities(deps),
    ...createRemediationActivities(deps),
    ...createWorkflowActionActivities(deps),
    ...createExportActivities(deps),
    ...createIntegrationActivities(deps),
  };
}
