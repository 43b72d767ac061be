/**
 * Audit attachments: an upload kept beside an audit for `retention_days`, downloadable until
 * then. A user's delete or the retention sweep (RetentionWorkflow on the `retention-sweep`
 * schedule) removes it; its row stays with status `deleted` / `expired`, and its bytes go when
 * nothing else holds the same content-addressed blob.
 */
import { Type } from '@sinclair/typebox';
import {
  attachmentsQuery,
  findAttachment,
  insertAttachment,
  lockBlob,
  markAttachmentDeleted,
  releaseBlobs,
  type AttachmentRow,
} from '../../db/attachments';
import { findUpload } from '../../db/uploads';
import { BlobStore } from '../../platform/blob-store';
import { AuditParams } from '../audits/schemas';
import { ApiError, problems } from '../errors';
import { defineOperation, created, ok, operationGroup, route } from '../registry/operation';
import { iso, isoOrNull, serveBlob } from '../shared';
import { presentAttachment } from './present';
import {
  AttachmentCreate,
  AttachmentListQuery,
  AttachmentPage,
  AttachmentParams,
  AttachmentResponse,
} from './schemas';
import { found, listOperation, recordedWrite } from '../registry/parts';
import { loadAudit } from '../registry/loads';

const DEFAULT_RETENTION_DAYS = 90;

function removedProblem(row: AttachmentRow): ApiError {
  return new ApiError({
    status: 410,
    code: 'attachment_removed',
    title: 'Gone',
    detail: `Attachment ${row.id} was ${row.status === 'expired' ? 'removed by retention' : 'deleted'} at ${isoOrNull(row.removed_at)}; its content is no longer kept.`,
    hint: 'Upload the file again and attach it with a longer retention_days if it is still needed.',
    extensions: { attachment_status: row.status },
  });
}

const ATTACHMENTS = operationGroup('Attachments');

export const createAuditAttachment = defineOperation({
  operationId: 'createAuditAttachment',
  ...route.post('/v1/workspaces/{workspace_id}/audits/{audit_id}/attachments'),
  summary: 'Attach an upload to an audit',
  description:
    'Keeps the upload (createUpload) beside the audit until retained_until = now + retention_days (1..365, default 90). filename, content_type, sha256 and size_bytes come from the upload. After retained_until the retention sweep removes it (status `expired`). An upload that only ever served attachments is removed with the last of them (its status becomes `expired`); an upload an audit ran on is kept. Beyond the spec fields the response carries audit_id, retention_days and removed_at.',
  ...ATTACHMENTS.scope('uploads:write'),
  params: AuditParams,
  body: AttachmentCreate,
  errors: [409],
  success: created('The attachment.', AttachmentResponse),
  handler: async ({ db, params, body, principal, requestId, koa }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    const row = await db.transaction(async (trx) => {
      const upload = await findUpload(trx, params.workspace_id, body.upload_id);
      if (!upload) {
        throw problems.validationFailed([
          { in: 'body', path: '/upload_id', message: 'no such upload in this workspace' },
        ]);
      }
      // Under the blob lock: a sweep releasing these bytes either sees this attachment or has
      // already marked the upload expired.
      await lockBlob(trx, upload.sha256);
      const fresh = await findUpload(trx, params.workspace_id, body.upload_id);
      if (fresh!.status !== 'ready') {
        throw problems.conflict(
          'upload_expired',
          `The content of upload ${upload.id} has expired.`,
          'Upload the file again and attach the new upload.',
        );
      }
      const created = await insertAttachment(trx, {
        workspace_id: params.workspace_id,
        audit_id: audit.id,
        upload_id: upload.id,
        uploaded_by: principal.memberId,
        filename: upload.filename,
        content_type: upload.content_type,
        sha256: upload.sha256,
        size_bytes: Number(upload.size_bytes),
        retention_days: body.retention_days ?? DEFAULT_RETENTION_DAYS,
      });
      return recordedWrite(trx, principal, requestId, created, {
        action: 'attachment.created',
        details: {
          audit_id: audit.id,
          upload_id: upload.id,
          filename: created.filename,
          sha256: created.sha256,
          retained_until: iso(created.retained_until),
        },
      });
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/attachments/${row.id}/content`);
    return presentAttachment(row);
  },
});

export const listAuditAttachments = listOperation({
  operationId: 'listAuditAttachments',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/attachments'),
  summary: "List an audit's attachments",
  description:
    'Newest first, every status unless `status` is given: removed attachments stay listed as the record of what was kept and when it went.',
  ...ATTACHMENTS.scope('audits:read'),
  params: AuditParams,
  query: AttachmentListQuery,
  success: ok('A page of attachments.', AttachmentPage),
  rows: async ({ db, params, query }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    return attachmentsQuery(db, params.workspace_id, audit.id, { status: query.status });
  },
  present: presentAttachment,
});

export const getAttachmentContent = defineOperation({
  operationId: 'getAttachmentContent',
  ...route.get('/v1/workspaces/{workspace_id}/attachments/{attachment_id}/content'),
  summary: "Download an attachment's bytes",
  description:
    'The bytes as uploaded, with the upload content type, `Content-Disposition: attachment` naming its filename, `X-Content-SHA256` and `Content-Length`. A deleted or expired attachment answers 410 attachment_removed.',
  ...ATTACHMENTS.scope('audits:read'),
  params: AttachmentParams,
  errors: [410],
  success: {
    status: 200,
    description: 'The attachment bytes.',
    schema: Type.Unsafe<unknown>({ contentMediaType: 'application/octet-stream' }),
    contentType: ['application/octet-stream', 'application/gzip', 'application/zip'],
    headers: {
      'Content-Disposition': {
        description: 'attachment; filename="<the upload filename>" (RFC 6266).',
      },
      'X-Content-SHA256': { description: 'SHA-256 (hex) of the bytes, as recorded at upload.' },
    },
  },
  handler: async ({ db, params, services, koa, log }) => {
    const row = await found(
      findAttachment(db, params.workspace_id, params.attachment_id),
      `Attachment ${params.attachment_id}`,
    );
    if (row.status !== 'available') throw removedProblem(row);
    return serveBlob(koa, services.config.blobDir, row, async () => {
      // Removed between the read and the open (a concurrent delete or sweep)?
      const now = await findAttachment(db, params.workspace_id, params.attachment_id);
      if (now && now.status !== 'available') throw removedProblem(now);
      log.error({ attachment_id: row.id, sha256: row.sha256 }, 'attachment blob is missing');
    });
  },
});

export const deleteAttachment = defineOperation({
  operationId: 'deleteAttachment',
  ...route.delete('/v1/workspaces/{workspace_id}/attachments/{attachment_id}'),
  summary: 'Delete an attachment before its retention ends',
  description:
    'The attachment becomes `deleted` (it stays listed) and its content is removed unless another upload, attachment or audit still holds the same bytes. Deleting a removed attachment answers 410 attachment_removed.',
  ...ATTACHMENTS.scope('uploads:write'),
  params: AttachmentParams,
  errors: [410],
  success: ok('The deleted attachment.', AttachmentResponse),
  handler: async ({ db, params, principal, requestId, services }) => {
    const row = await db.transaction(async (trx) => {
      const deleted = await markAttachmentDeleted(trx, params.workspace_id, params.attachment_id);
      if (!deleted) {
        const existing = await found(
          findAttachment(trx, params.workspace_id, params.attachment_id),
          `Attachment ${params.attachment_id}`,
        );
        throw removedProblem(existing);
      }
      return recordedWrite(trx, principal, requestId, deleted, {
        action: 'attachment.deleted',
        details: { audit_id: deleted.audit_id, filename: deleted.filename, sha256: deleted.sha256 },
      });
    });
    await releaseBlobs(db, new BlobStore(services.config.blobDir), [row.sha256]);
    return presentAttachment(row);
  },
});
