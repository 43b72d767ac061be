/**
 * An audit's report (JSON, Markdown, printable HTML, SARIF, JUnit) and its approval. A report is
 * built from the audit's current rows until a member other than the one who started the audit
 * approves it; from then on the approved content is stored and served unchanged.
 */
import { Type } from '@sinclair/typebox';
import type { Knex } from 'knex';
import type { AuditRow } from '../../db/audits';
import { currentReport, insertReportApproval, type ReportApprovalRow } from '../../db/reports';
import { approvalRecord, checkApproval } from '../../domain/approvals/model';
import {
  REPORT_CONTENT_TYPES,
  REPORT_FORMATS,
  renderReport,
  type RenderContext,
} from '../../domain/reports/render';
import { AuditParams } from '../audits/schemas';
import { problems, type ApiError } from '../errors';
import {
  approvalAccess,
  approvalActor,
  approvalProblem,
  approvalRules,
} from '../registry/approvals';
import { defineOperation, created, operationGroup, route } from '../registry/operation';
import { iso, recordPrincipalWrite } from '../shared';
import { AuditReportResponse, ReportApprovalCreate, ReportApprovalResponse } from './schemas';
import { found, formatQuery } from '../registry/parts';
import { loadAudit } from '../registry/loads';
import { columns } from '../registry/columns';

function presentApproval(row: ReportApprovalRow): ReportApprovalResponse {
  return {
    ...columns(row, ['id', 'audit_id', 'report_version', 'content_sha256', 'actor_id']),
    ...columns(row, ['actor_role', 'authorization_scope', 'policy_version', 'rationale']),
    created_at: iso(row.created_at),
  };
}

/** 409 audit_not_completed: only a completed audit has a report (and exports). */
export function auditNotCompleted(audit: AuditRow): ApiError {
  return problems.conflict(
    'audit_not_completed',
    `Audit ${audit.id} is ${audit.status}; only a completed audit has a report.`,
    audit.status === 'queued' || audit.status === 'running'
      ? 'Wait until the audit completes (getAudit), then ask again.'
      : 'Run the audit again (retryAudit) and use the new audit.',
    { audit_status: audit.status },
  );
}

async function completedAudit(db: Knex, workspaceId: string, auditId: string) {
  const audit = await loadAudit(db, workspaceId, auditId);
  if (audit.status !== 'completed') throw auditNotCompleted(audit);
  const report = await found(currentReport(db, audit), `The report of audit ${audit.id}`);
  return { audit, report };
}

const REPORTS = operationGroup('Reports');

export const getAuditReport = defineOperation({
  operationId: 'getAuditReport',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/report'),
  summary: "An audit's report: JSON, Markdown, printable HTML, SARIF or JUnit",
  description:
    'What was audited, the architecture found, every control assessment, the findings with their locations, the uncertainty cases and the change gate. `format=json` (default) answers AuditReportResponse; `markdown` a Markdown document; `html` one self-contained printable HTML page with the architecture diagram inline as SVG; `sarif` a SARIF 2.1.0 log of the findings (one result per finding not resolved, `partialFingerprints` from the finding fingerprint, a set-aside finding suppressed); `junit` JUnit XML with one test case per control. Until it is approved the report is built from the rows of its audit: the findings as this audit observed them (severity, title, detail, evidence, locations), so a later audit that moves or resolves a finding changes no earlier report; a person setting a finding aside (or reopening it) does change the draft, and its content_sha256. Once approved, the approved content is served unchanged. A queued, running, failed or cancelled audit is 409 audit_not_completed.',
  ...REPORTS.scope('reports:read'),
  params: AuditParams,
  query: formatQuery(REPORT_FORMATS, 'json, markdown, html, sarif or junit.'),
  errors: [409],
  success: {
    status: 200,
    description: 'The report.',
    schema: AuditReportResponse,
    headers: {
      'X-Content-SHA256': {
        description: "SHA-256 of the report's canonical JSON content (the version's identity).",
      },
    },
    alternates: {
      [REPORT_CONTENT_TYPES.markdown]: Type.String({ description: 'Markdown.' }),
      [REPORT_CONTENT_TYPES.html]: Type.String({ description: 'A self-contained HTML page.' }),
      [REPORT_CONTENT_TYPES.sarif]: Type.Object(
        { version: Type.Literal('2.1.0'), runs: Type.Array(Type.Unknown()) },
        { description: 'A SARIF 2.1.0 log.' },
      ),
      [REPORT_CONTENT_TYPES.junit]: Type.String({ description: 'JUnit XML.' }),
    },
  },
  handler: async ({ db, params, query, koa }) => {
    const { report } = await completedAudit(db, params.workspace_id, params.audit_id);
    const format = query.format ?? 'json';
    koa.set('X-Content-SHA256', report.content_sha256);
    if (format === 'json')
      return {
        audit_id: report.content.audit_id,
        report_version: report.content.report_version,
        status: report.approval ? ('approved' as const) : ('draft' as const),
        content_sha256: report.content_sha256,
        approval: report.approval ? presentApproval(report.approval) : null,
        content: report.content,
      };
    const ctx: RenderContext = {
      content_sha256: report.content_sha256,
      approval: report.approval
        ? {
            actor_login: report.approverLogin ?? report.approval.actor_id,
            actor_role: report.approval.actor_role,
            rationale: report.approval.rationale,
            created_at: iso(report.approval.created_at),
          }
        : null,
    };
    koa.type = REPORT_CONTENT_TYPES[format];
    if (format === 'html') {
      // Everything is inline and escaped; still, a page from the API origin runs nothing.
      koa.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
      koa.set('X-Content-Type-Options', 'nosniff');
    }
    return renderReport(format, report.content, ctx) as never;
  },
});

export const approveAuditReport = defineOperation({
  operationId: 'approveAuditReport',
  ...route.post('/v1/workspaces/{workspace_id}/audits/{audit_id}/report/approval'),
  summary: "Approve the current version of an audit's report",
  description: `Signs off the report as it is now: its content and content_sha256 are stored with the approver's role, the scope and the rationale, and from then on getAuditReport serves exactly that content (the approved version is immutable; a later audit of the repository has a report of its own). ${approvalRules('report')} Only a completed audit's report can be approved (409 audit_not_completed); with \`content_sha256\`, a report that changed since it was read is 409 report_changed.`,
  ...REPORTS.access(approvalAccess('report')),
  params: AuditParams,
  body: ReportApprovalCreate,
  errors: [409],
  success: created('The approval.', ReportApprovalResponse),
  handler: async ({ db, params, body, principal, requestId, koa }) => {
    const row = await db.transaction(async (trx) => {
      const { audit, report } = await completedAudit(trx, params.workspace_id, params.audit_id);
      const refused = checkApproval(
        {
          phase: report.approval ? 'decided' : 'awaiting',
          status: report.approval ? 'approved' : 'draft',
          authorId: audit.created_by,
        },
        { outcome: 'approved', actorId: principal.memberId },
      );
      if (refused) throw approvalProblem('report', refused);
      if (body.content_sha256 && body.content_sha256 !== report.content_sha256)
        throw problems.conflict(
          'report_changed',
          `The report is now at content_sha256 ${report.content_sha256}, not ${body.content_sha256}.`,
          'Read the report again (getAuditReport) and approve what it says now.',
          { content_sha256: report.content_sha256 },
        );
      const record = approvalRecord(
        'report',
        await approvalActor(trx, principal, requestId),
        'approved',
        body.rationale,
      );
      const inserted = await insertReportApproval(trx, {
        workspace_id: audit.workspace_id,
        audit_id: audit.id,
        report_version: report.content.report_version,
        content_sha256: report.content_sha256,
        content: report.content,
        actor_id: record.actor_id,
        actor_role: record.actor_role,
        authorization_scope: record.authorization_scope,
        policy_version: record.policy_version,
        rationale: record.rationale,
      });
      // A concurrent request approved it between the read and the insert.
      if (!inserted)
        throw approvalProblem('report', { code: 'already_decided', current: 'approved' });
      await recordPrincipalWrite(trx, principal, requestId, {
        action: 'report.approved',
        resourceType: 'audit_report',
        resourceId: audit.id,
        details: {
          approval_id: inserted.id,
          report_version: inserted.report_version,
          content_sha256: inserted.content_sha256,
          actor_role: inserted.actor_role,
          rationale: inserted.rationale,
        },
      });
      return inserted;
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/audits/${row.audit_id}/report`);
    return presentApproval(row);
  },
});
