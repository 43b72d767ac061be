/**
 * Every workflow the worker runs. Deterministic code only: no I/O, clock or randomness except
 * through Temporal's APIs (lint enforces the import ban). Activities are imported as types.
 */
export { AuditWorkflow } from './audits';
export { RetentionWorkflow } from './retention';
export { DecisionWorkflow } from './decisions';
export { ScheduleWorkflow } from './schedules';
export { AuditRecoveryWorkflow } from './recovery';
export { AssistantRunWorkflow } from './assistant';
export { RemediationWorkflow } from './remediations';
export { WorkflowActionWorkflow } from './workflow-actions';
export { ExportWorkflow } from './exports';
export {
  IntegrationClosedWorkflow,
  IntegrationPendingWorkflow,
  IntegrationPublishWorkflow,
} from './integrations';
