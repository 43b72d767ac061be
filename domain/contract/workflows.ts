/**
 * The names Temporal knows our durable runs by: workflow type names (what the worker registers and
 * every start names) and workflow ids (stored on the resource's row, shown in the Temporal UI and
 * in API responses). One home, because the API, the scheduler, the worker and the database rows
 * must all agree on them.
 */
export const WORKFLOW_TYPES = {
  audit: 'AuditWorkflow',
  decision: 'DecisionWorkflow',
  schedule: 'ScheduleWorkflow',
  retention: 'RetentionWorkflow',
  auditRecovery: 'AuditRecoveryWorkflow',
  assistantRun: 'AssistantRunWorkflow',
  remediation: 'RemediationWorkflow',
  workflowAction: 'WorkflowActionWorkflow',
  export: 'ExportWorkflow',
  integrationPublish: 'IntegrationPublishWorkflow',
  integrationPending: 'IntegrationPendingWorkflow',
  integrationClosed: 'IntegrationClosedWorkflow',
} as const;

/** One audit's workflow. */
export const auditWorkflowId = (auditId: string): string => `audit-${auditId}`;
/** One decision's workflow (it lives from proposal to verification). */
export const decisionWorkflowId = (decisionId: string): string => `decision-${decisionId}`;
/** One remediation's workflow (it lives from proposal to verification). */
export const remediationWorkflowId = (id: string): string => `remediation-${id}`;
/** One workflow action's workflow (it waits for approval or expiry, then executes once). */
export const workflowActionWorkflowId = (id: string): string => `workflow-action-${id}`;
/** One audit schedule's workflow (also its `scheduler_schedule_id`). */
export const scheduleWorkflowId = (scheduleId: string): string => `schedule-${scheduleId}`;
/** One assistant run (one question). */
export const assistantRunWorkflowId = (runId: string): string => `assistant-run-${runId}`;
/** One audit export's rendering. */
export const exportWorkflowId = (exportId: string): string => `export-${exportId}`;
/** What one audit started by a webhook publishes back to its forge (status, comment). */
export const integrationPublishWorkflowId = (auditId: string): string =>
  `integration-publish-${auditId}`;
/** The `pending` status of an audit a webhook started. */
export const integrationPendingWorkflowId = (auditId: string): string =>
  `integration-pending-${auditId}`;

/** The closing note of one pull request, per delivery that closed it (`deliveryKey` a digest). */
export const integrationClosedWorkflowId = (
  integrationId: string,
  number: number,
  deliveryKey: string,
): string => `integration-closed-${integrationId}-${number}-${deliveryKey}`;
/** The Temporal Schedule that starts the retention sweep (and the id of the runs it starts). */
export const RETENTION_SCHEDULE_ID = 'retention-sweep';
/** The Temporal Schedule that starts the audit recovery sweep (and the id of its runs). */
export const AUDIT_RECOVERY_SCHEDULE_ID = 'audit-recovery';
