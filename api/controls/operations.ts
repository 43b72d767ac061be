/** The control catalog, an audit's assessments, and findings (tracked across audits). */
import { CONTROL_CATALOG_VERSION } from '../../analysis/controls';
import {
  assessmentsQuery,
  auditFindingsQuery,
  controlsQuery,
  findFinding,
  findingsQuery,
  findSourcedFinding,
  isObservedByLatestAudit,
  updateFindingStatus,
} from '../../db/controls';
import { AuditParams } from '../audits/schemas';
import { problems } from '../errors';
import { defineOperation, ok, operationGroup, route } from '../registry/operation';
import { PageQuery, WorkspaceParams } from '../schema-kit';
import { recordPrincipalWrite } from '../shared';
import { presentAssessment, presentControl, presentFinding } from './present';
import {
  AssessmentPage,
  ControlPage,
  FindingListQuery,
  FindingPage,
  FindingParams,
  FindingResponse,
  FindingUpdate,
} from './schemas';
import { found, listOperation } from '../registry/parts';
import { loadAudit } from '../registry/loads';

const CONTROLS = operationGroup('Controls');
const FINDINGS = operationGroup('Findings');

export const listControls = listOperation({
  operationId: 'listControls',
  ...route.get('/v1/workspaces/{workspace_id}/controls'),
  summary: 'The built-in control catalog',
  description: `The controls of the current catalog version (${CONTROL_CATALOG_VERSION}) that every audit assesses.`,
  ...CONTROLS.scope('policies:read'),
  params: WorkspaceParams,
  query: PageQuery,
  success: ok('A page of controls.', ControlPage),
  rows: async ({ db }) => {
    // The catalog rows are written when the API starts (startApi) and by every audit.
    return controlsQuery(db, CONTROL_CATALOG_VERSION);
  },
  present: presentControl,
});

export const listAuditAssessments = listOperation({
  operationId: 'listAuditAssessments',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/assessments'),
  summary: "An audit's control assessments",
  description:
    'One assessment per catalog control, in control key order; empty until the audit has passed its controls stage.',
  ...CONTROLS.scope('policies:read'),
  params: AuditParams,
  query: PageQuery,
  success: ok('A page of assessments.', AssessmentPage),
  rows: async ({ db, params }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    return assessmentsQuery(db, audit.id);
  },
  present: presentAssessment,
});

export const listAuditFindings = listOperation({
  operationId: 'listAuditFindings',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/findings'),
  summary: 'The findings an audit observed',
  description: 'Each finding as it stands now (status, last sighting), newest first.',
  ...FINDINGS.scope('findings:read'),
  params: AuditParams,
  query: PageQuery,
  success: ok('A page of findings.', FindingPage),
  rows: async ({ db, params }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    return auditFindingsQuery(db, audit.id);
  },
  present: presentFinding,
});

export const listFindings = listOperation({
  operationId: 'listFindings',
  ...route.get('/v1/workspaces/{workspace_id}/findings'),
  summary: "The workspace's findings",
  description:
    "Newest first; filter by status, severity, repository, source or control. Each finding says where it comes from (`source`, `source_label`): a repository, or one upload audit that named no repository (its findings are its own, not duplicates of a repository's).",
  ...FINDINGS.scope('findings:read'),
  params: WorkspaceParams,
  query: FindingListQuery,
  success: ok('A page of findings.', FindingPage),
  // The query's filters are the store's, by name (limit and cursor are the page's).
  rows: ({ db, params, query }) => findingsQuery(db, params.workspace_id, query),
  present: presentFinding,
});

export const getFinding = defineOperation({
  operationId: 'getFinding',
  ...route.get('/v1/workspaces/{workspace_id}/findings/{finding_id}'),
  summary: 'Get a finding',
  ...FINDINGS.scope('findings:read'),
  params: FindingParams,
  success: ok('The finding.', FindingResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findSourcedFinding(db, params.workspace_id, params.finding_id),
      `Finding ${params.finding_id}`,
    );
    return presentFinding(row);
  },
});

export const updateFinding = defineOperation({
  operationId: 'updateFinding',
  ...route.patch('/v1/workspaces/{workspace_id}/findings/{finding_id}'),
  summary: "Change a finding's status",
  description:
    'Triage: accepted_risk and false_positive are kept by later audits that still observe the finding; open reopens it. resolved is answered 409 invalid_transition while the latest completed audit of the repository still observes the finding (fix the code and audit again).',
  ...FINDINGS.scope('findings:write'),
  params: FindingParams,
  body: FindingUpdate,
  errors: [409],
  success: ok('The changed finding.', FindingResponse),
  handler: async ({ db, params, body, principal, requestId }) => {
    const row = await db.transaction(async (trx) => {
      const before = await found(
        findFinding(trx, params.workspace_id, params.finding_id, true),
        `Finding ${params.finding_id}`,
      );
      if (
        body.status === 'resolved' &&
        before.status !== 'resolved' &&
        (await isObservedByLatestAudit(trx, before))
      )
        throw problems.conflict(
          'invalid_transition',
          `Finding ${before.id} is still observed by the latest completed audit of its repository.`,
          'Fix the cause and run an audit: a finding it no longer observes is resolved. To keep it without fixing, use accepted_risk or false_positive.',
          { current_status: before.status, requested: body.status },
        );
      const after = await updateFindingStatus(trx, before, body.status, body.note);
      await recordPrincipalWrite(trx, principal, requestId, {
        action: 'finding.updated',
        resourceType: 'finding',
        resourceId: before.id,
        details: {
          control_key: before.control_key,
          title: before.title,
          fingerprint: before.fingerprint,
          changes: {
            status: { from: before.status, to: body.status },
            note: { from: before.note, to: body.note },
          },
        },
      });
      return (await findSourcedFinding(trx, params.workspace_id, after.id))!;
    });
    return presentFinding(row);
  },
});
