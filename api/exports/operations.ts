/**
 * Audit exports: a format of a completed audit (Structurizr, Backstage, MADR, Mermaid, SVG,
 * SARIF, JUnit) rendered by an ExportWorkflow into a file kept for `retention_days`, then
 * downloaded. The retention sweep expires it; its row stays as the record of what was handed out.
 */
import { Type } from '@sinclair/typebox';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import {
  exportsQuery,
  findExport,
  insertExport,
  markExportFailed,
  type ExportRow,
} from '../../db/exports';
import { findRepository } from '../../db/repositories';
import { exportWorkflowId, WORKFLOW_TYPES } from '../../domain/contract/workflows';
import { EXPORT_FILES, slug } from '../../domain/exports/render';
import type { ExportWorkflow } from '../../workflows/exports';
import { AuditParams } from '../audits/schemas';
import { ApiError, problems } from '../errors';
import { defineOperation, ok, started, operationGroup, route } from '../registry/operation';
import { auditNotCompleted } from '../reports/operations';
import { commitThenStart, isoOrNull, serveBlob } from '../shared';
import { ExportCreate, ExportListQuery, ExportPage, ExportParams, ExportResponse } from './schemas';
import { found, listOperation, recordedWrite } from '../registry/parts';
import { loadAudit } from '../registry/loads';
import { columns, isoColumns } from '../registry/columns';

function presentExport(row: ExportRow): ExportResponse {
  return {
    ...columns(row, ['id', 'workspace_id', 'audit_id']),
    format: row.format as ExportResponse['format'],
    ...columns(row, ['status', 'filename', 'content_type', 'sha256']),
    size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
    retention_days: row.retention_days,
    retained_until: isoOrNull(row.retained_until),
    ...columns(row, ['error_code', 'requested_by', 'workflow_id']),
    ...isoColumns(row, ['created_at', 'completed_at', 'removed_at']),
  };
}

/** Why an export's file cannot be downloaded (yet, or any more). */
function unavailableProblem(row: ExportRow): ApiError {
  if (row.status === 'expired')
    return new ApiError({
      status: 410,
      code: 'export_expired',
      title: 'Gone',
      detail: `Export ${row.id} was removed by retention at ${isoOrNull(row.removed_at)}.`,
      hint: 'Request the export again (exportAudit) with a longer retention_days if needed.',
      extensions: { export_status: row.status },
    });
  if (row.status === 'failed')
    return problems.conflict(
      'export_failed',
      `Export ${row.id} failed (${row.error_code}); it has no file.`,
      'Request the export again (exportAudit).',
      { export_status: row.status, error_code: row.error_code },
    );
  return problems.conflict(
    'export_not_ready',
    `Export ${row.id} is ${row.status}; its file is not rendered yet.`,
    'Poll getExport until its status is available, then download it.',
    { export_status: row.status },
  );
}

const REPORTS = operationGroup('Reports');

export const exportAudit = defineOperation({
  operationId: 'exportAudit',
  ...route.post('/v1/workspaces/{workspace_id}/audits/{audit_id}/exports'),
  summary: 'Export a completed audit in a format another tool reads',
  description:
    "Starts an `ExportWorkflow` (workflow id `export-<id>`) that renders the audit into one file: `structurizr` a Structurizr DSL workspace (the repository as a software system, its services, jobs and stores as containers, external dependencies as software systems, relationships with their technology); `backstage` a Backstage catalog-info.yaml (a System, Components and Resources with `dependsOn`, owners from the CODEOWNERS the audit read); `madr` the repository's decisions as MADR files in a tar.gz; `mermaid` and `svg` the architecture diagram; `sarif` and `junit` the report's files (getAuditReport). An approved report's content is what is exported. Follow it with getExport; download with getExportContent until `retained_until` (retention_days, default EXPORT_RETENTION_DAYS), after which the retention sweep removes the file. An audit that is not completed is 409 audit_not_completed.",
  ...REPORTS.scope('exports:write'),
  params: AuditParams,
  body: ExportCreate,
  idempotent: true,
  errors: [409, 503],
  success: started('The queued export.', ExportResponse),
  handler: async ({ services, db, params, body, principal, requestId, koa, newId }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    if (audit.status !== 'completed') throw auditNotCompleted(audit);
    const repository = audit.repository_id
      ? await findRepository(db, params.workspace_id, audit.repository_id)
      : undefined;
    const file = EXPORT_FILES[body.format];
    const id = newId();
    const row = await commitThenStart(services.log, 'export', {
      commit: () =>
        db.transaction(async (trx) => {
          const created = await insertExport(trx, {
            id,
            workspace_id: audit.workspace_id,
            audit_id: audit.id,
            format: body.format,
            filename: `${slug(repository?.name ?? 'upload', 40)}-audit-${audit.id.slice(0, 8)}-${file.file}`,
            content_type: file.contentType,
            retention_days: body.retention_days ?? services.config.exportRetentionDays,
            requested_by: principal.memberId,
            workflow_id: exportWorkflowId(id),
          });
          return recordedWrite(trx, principal, requestId, created, {
            action: 'export.requested',
            details: {
              audit_id: audit.id,
              format: created.format,
              retention_days: created.retention_days,
            },
          });
        }),
      needsStart: (r) => r.status === 'queued',
      start: async (r) => {
        const client = await services.temporal.client();
        await client.workflow.start<typeof ExportWorkflow>(WORKFLOW_TYPES.export, {
          workflowId: r.workflow_id,
          args: [{ exportId: r.id }],
          taskQueue: services.config.taskQueue,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
      },
      ifStartFails: (r, cause) => markExportFailed(db, r.id, 'workflow_start_failed', cause),
      unavailable:
        'The export was recorded but its workflow could not be started; it is marked failed.',
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/exports/${row.id}`);
    return presentExport(row);
  },
});

export const listExports = listOperation({
  operationId: 'listExports',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/exports'),
  summary: "List an audit's exports",
  description:
    'Newest first, every status: expired and failed exports stay listed as the record of what was requested and handed out.',
  ...REPORTS.scope('reports:read'),
  params: AuditParams,
  query: ExportListQuery,
  success: ok('A page of exports.', ExportPage),
  rows: async ({ db, params }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    return exportsQuery(db, params.workspace_id, audit.id);
  },
  present: presentExport,
});

export const getExport = defineOperation({
  operationId: 'getExport',
  ...route.get('/v1/workspaces/{workspace_id}/exports/{export_id}'),
  summary: 'An export and the state of its file',
  ...REPORTS.scope('reports:read'),
  params: ExportParams,
  success: ok('The export.', ExportResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findExport(db, params.workspace_id, params.export_id),
      `Export ${params.export_id}`,
    );
    return presentExport(row);
  },
});

export const getExportContent = defineOperation({
  operationId: 'getExportContent',
  ...route.get('/v1/workspaces/{workspace_id}/exports/{export_id}/content'),
  summary: "Download an export's file",
  description:
    'The file with its content type (text/plain for Structurizr DSL, application/yaml, application/gzip, text/vnd.mermaid, image/svg+xml, application/sarif+json, application/xml), `Content-Disposition: attachment` naming it, `X-Content-SHA256` and `Content-Length`. Not rendered yet: 409 export_not_ready; failed: 409 export_failed; removed by retention: 410 export_expired.',
  ...REPORTS.scope('reports:read'),
  params: ExportParams,
  errors: [409, 410],
  success: {
    status: 200,
    description: 'The file.',
    schema: Type.Unsafe<unknown>({ contentMediaType: 'application/octet-stream' }),
    contentType: [
      'text/plain',
      'application/yaml',
      'application/gzip',
      'text/vnd.mermaid',
      'image/svg+xml',
      'application/sarif+json',
      'application/xml',
    ],
    headers: {
      'Content-Disposition': { description: 'attachment; filename="<the export filename>".' },
      'X-Content-SHA256': { description: 'SHA-256 (hex) of the file.' },
    },
  },
  handler: async ({ db, params, services, koa, log }) => {
    const row = await found(
      findExport(db, params.workspace_id, params.export_id),
      `Export ${params.export_id}`,
    );
    if (row.status !== 'available' || !row.sha256) throw unavailableProblem(row);
    if (row.format === 'svg')
      koa.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
    return serveBlob(
      koa,
      services.config.blobDir,
      { ...row, sha256: row.sha256, size_bytes: row.size_bytes ?? 0 },
      async () => {
        // Removed between the read and the open (the retention sweep)?
        const now = await findExport(db, params.workspace_id, params.export_id);
        if (now && now.status !== 'available') throw unavailableProblem(now);
        log.error({ export_id: row.id, sha256: row.sha256 }, 'export blob is missing');
      },
    );
  },
});
