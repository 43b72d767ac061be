/**
 * The operation registry: every operation of the API, in the catalogue order of API.md. Routing, scope checks,
 * validation, the OpenAPI document (and later the CLI and MCP tools) all read this list.
 */
import type { AnyOperation } from './registry/operation';
import * as meta from './resources/meta';
import * as workspaces from './resources/workspaces';
import * as tokens from './resources/tokens';
import * as repositories from './resources/repositories';
import * as activity from './resources/activity';
import * as audits from './resources/audits';
import * as uploads from './resources/uploads';
import * as architecture from './resources/architecture';
import * as architectureGraph from './resources/architecture-graph';
import * as diagram from './resources/architecture-diagram';
import * as profiles from './resources/profiles';
import * as attachments from './resources/attachments';
import * as controls from './resources/controls';
import * as uncertainty from './resources/uncertainty';
import * as decisions from './resources/decisions';
import * as schedules from './resources/schedules';

export const OPERATIONS: readonly AnyOperation[] = [
  meta.getContract,
  meta.listScopes,
  meta.getHealth,
  meta.getCurrentToken,
  workspaces.listWorkspaces,
  workspaces.getWorkspace,
  workspaces.listMembers,
  tokens.listApiTokens,
  tokens.createApiToken,
  tokens.getApiToken,
  tokens.revokeApiToken,
  repositories.listRepositories,
  repositories.createRepository,
  repositories.getRepository,
  repositories.updateRepository,
  repositories.deleteRepository,
  architecture.getRepositoryArchitecture,
  architecture.listArchitectureSnapshots,
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
  architectureGraph.getAuditArchitectureBundle,
  diagram.getAuditArchitectureDiagram,
  controls.listAuditAssessments,
  controls.listAuditFindings,
  controls.listFindings,
  controls.getFinding,
  controls.updateFinding,
  decisions.listDecisions,
  decisions.proposeDecision,
  decisions.getDecision,
  decisions.transitionDecision,
  decisions.getDecisionBrief,
  uncertainty.listUncertaintyCases,
  uncertainty.getUncertaintyCase,
  uncertainty.updateUncertaintyCase,
  controls.listControls,
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
  activity.listActivity,
  activity.listAuditEvents,
];
