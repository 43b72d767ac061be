/**
 * The operation registry: every operation of the API, in catalogue order. Routing, scope checks,
 * validation, the OpenAPI document (and later the CLI and MCP tools) all read this list.
 */
import type { AnyOperation } from './registry/operation';
import * as meta from './meta/operations';
import * as workspaces from './workspaces/operations';
import * as tokens from './tokens/operations';
import * as repositories from './repositories/operations';
import * as activity from './activity/operations';
import * as audits from './audits/operations';
import * as uploads from './uploads/operations';
import * as architecture from './architecture/operations';
import * as architectureGraph from './architecture/graph-operations';
import * as evidence from './architecture/evidence-operations';
import * as entityHistory from './architecture/history-operations';
import * as diagram from './architecture/diagram-operations';
import * as profiles from './profiles/operations';
import * as attachments from './attachments/operations';
import * as controls from './controls/operations';
import * as uncertainty from './uncertainty/operations';
import * as decisions from './decisions/operations';
import * as schedules from './schedules/operations';
import * as changes from './changes/operations';
import * as comparisons from './comparisons/operations';
import * as changeSets from './changes/change-set-operations';
import * as exceptions from './controls/exception-operations';
import * as assistant from './assistant/operations';
import * as assistantUsage from './assistant/usage-operations';
import * as remediations from './remediations/operations';
import * as workflowActions from './workflow-actions/operations';
import * as reports from './reports/operations';
import * as exportsOps from './exports/operations';
import * as ingestion from './ingestion/operations';
import * as oauthGrants from './oauth/operations';
import * as integrations from './integrations/operations';
import * as webhooks from './integrations/webhooks';
import * as caller from './sessions/operations';

export const OPERATIONS: readonly AnyOperation[] = [
  meta.getContract,
  meta.listScopes,
  meta.getHealth,
  meta.getCurrentToken,
  caller.getCurrentCaller,
  workspaces.listWorkspaces,
  workspaces.getWorkspace,
  workspaces.listMembers,
  tokens.listApiTokens,
  tokens.createApiToken,
  tokens.getApiToken,
  tokens.revokeApiToken,
  oauthGrants.listOAuthGrants,
  oauthGrants.revokeOAuthGrant,
  repositories.listRepositories,
  repositories.createRepository,
  repositories.getRepository,
  repositories.updateRepository,
  repositories.deleteRepository,
  integrations.getRepositoryIntegration,
  integrations.putRepositoryIntegration,
  integrations.deleteRepositoryIntegration,
  integrations.listIntegrationDeliveries,
  webhooks.receiveGithubWebhook,
  webhooks.receiveGitlabWebhook,
  architecture.getRepositoryArchitecture,
  architecture.listArchitectureSnapshots,
  entityHistory.getEntityHistory,
  changes.getArchitectureChanges,
  changeSets.listChangeSets,
  changeSets.createChangeSet,
  changeSets.getChangeSet,
  changeSets.reconcileChangeSet,
  ingestion.ingestEvidence,
  ingestion.listIngestions,
  ingestion.getIngestion,
  architectureGraph.getArchitectureDependencies,
  uploads.createUpload,
  uploads.getUpload,
  attachments.createAuditAttachment,
  attachments.listAuditAttachments,
  attachments.getAttachmentContent,
  attachments.deleteAttachment,
  audits.createAudit,
  audits.listAudits,
  audits.getAudit,
  audits.cancelAudit,
  audits.retryAudit,
  audits.getAuditLogs,
  audits.getAuditCost,
  audits.getAuditAgentTimeline,
  architecture.getAuditArchitecture,
  evidence.getAuditEvidence,
  architectureGraph.getAuditArchitectureBundle,
  diagram.getAuditArchitectureDiagram,
  changes.getAuditGate,
  reports.getAuditReport,
  reports.approveAuditReport,
  exportsOps.exportAudit,
  exportsOps.listExports,
  exportsOps.getExport,
  exportsOps.getExportContent,
  comparisons.createAuditComparison,
  comparisons.listAuditComparisons,
  comparisons.getAuditComparison,
  controls.listAuditAssessments,
  controls.listAuditFindings,
  controls.listFindings,
  controls.getFinding,
  controls.updateFinding,
  remediations.listRemediations,
  remediations.createRemediation,
  remediations.getRemediation,
  remediations.approveRemediation,
  remediations.rejectRemediation,
  remediations.transitionRemediation,
  decisions.listDecisions,
  decisions.proposeDecision,
  decisions.getDecision,
  decisions.transitionDecision,
  decisions.approveDecision,
  decisions.rejectDecision,
  decisions.getDecisionBrief,
  uncertainty.listUncertaintyCases,
  uncertainty.getUncertaintyCase,
  uncertainty.updateUncertaintyCase,
  controls.listControls,
  changes.getGatePolicy,
  changes.updateGatePolicy,
  changes.resetGatePolicy,
  exceptions.createControlException,
  exceptions.listControlExceptions,
  exceptions.getControlException,
  exceptions.revokeControlException,
  profiles.listAuditProfiles,
  profiles.createAuditProfile,
  profiles.getAuditProfile,
  profiles.updateAuditProfile,
  profiles.deleteAuditProfile,
  // Preview before the {schedule_id} routes, so `preview` is never taken for an id.
  schedules.listAuditSchedules,
  schedules.createAuditSchedule,
  schedules.previewAuditSchedule,
  schedules.getAuditSchedule,
  schedules.updateAuditSchedule,
  schedules.deleteAuditSchedule,
  schedules.pauseAuditSchedule,
  schedules.resumeAuditSchedule,
  schedules.triggerAuditSchedule,
  workflowActions.listWorkflowActions,
  workflowActions.requestWorkflowAction,
  workflowActions.getWorkflowAction,
  workflowActions.approveWorkflowAction,
  workflowActions.rejectWorkflowAction,
  assistant.listAssistantConversations,
  assistant.createAssistantConversation,
  assistant.listAssistantMessages,
  assistant.askAssistant,
  assistant.getAssistantRun,
  assistant.cancelAssistantRun,
  assistantUsage.getAssistantLimits,
  assistantUsage.updateAssistantLimits,
  assistantUsage.getAssistantUsage,
  assistantUsage.getUsage,
  activity.listActivity,
  activity.listAuditEvents,
];
