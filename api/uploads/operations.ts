/**
 * Source archive uploads (tar.gz or zip as the raw request body). The archive is streamed into
 * the blob store with its SHA-256, then checked entry by entry with the same safe reader the
 * audit uses: a traversal, an outside link or a bomb is refused here with its code, before any
 * audit runs.
 */
import fs from 'node:fs';
import { lockBlob } from '../../db/attachments';
import { findUpload, insertUpload } from '../../db/uploads';
import { SourceError } from '../../domain/audits/source-error';
import { detectArchiveFormat, scanArchive } from '../../platform/archive';
import { BlobStore, BlobTooLargeError } from '../../platform/blob-store';
import { ApiError, problems } from '../errors';
import { created, defineOperation, ok, operationGroup, route } from '../registry/operation';
import { WorkspaceParams } from '../schema-kit';
import { presentUpload } from './present';
import { UploadParams, UploadQuery, UploadResponse } from './schemas';
import { found, recordedWrite } from '../registry/parts';

const ARCHIVE_TYPES = [
  'application/gzip',
  'application/x-gzip',
  'application/zip',
  'application/octet-stream',
];

async function readHead(file: string): Promise<Buffer> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const buffer = Buffer.alloc(8);
    const { bytesRead } = await handle.read(buffer, 0, 8, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * 415 for a body whose bytes are no archive (RFC 9110 allows 415 on inspecting the content): the
 * Content-Type was accepted, so the detail says what is wrong with the bytes.
 */
function notAnArchive(size: number): ApiError {
  return new ApiError({
    status: 415,
    code: 'unsupported_media_type',
    title: 'Unsupported media type',
    detail:
      size === 0
        ? 'The request body is empty: it should be the archive itself.'
        : 'The request body is neither a gzip-compressed tar nor a zip archive (its first bytes are no gzip or zip signature).',
    hint: 'Send the bytes of a .tar.gz or .zip file as the body (for example curl --data-binary @source.tar.gz).',
  });
}

const UPLOADS = operationGroup('Uploads');

export const createUpload = defineOperation({
  operationId: 'createUpload',
  ...route.post('/v1/workspaces/{workspace_id}/uploads'),
  summary: 'Upload a source archive (tar.gz or zip)',
  description:
    'The body is the archive itself. It is refused (400 with the code) when an entry has an absolute path (archive_absolute_path), a `..` segment (archive_path_traversal), a link out of the root (archive_link_outside_root), or the archive exceeds the file count, unpacked size or compression ratio limits (archive_too_many_files, archive_too_large, archive_ratio_exceeded), or cannot be read (archive_corrupt). UPLOAD_LIMIT_BYTES bounds the body (413).',
  ...UPLOADS.scope('uploads:write'),
  params: WorkspaceParams,
  query: UploadQuery,
  rawBody: {
    contentTypes: ARCHIVE_TYPES,
    description: 'The archive bytes: a gzip-compressed tar or a zip.',
    limitBytes: (config) => config.uploadLimitBytes,
  },
  success: created('The stored, checked upload.', UploadResponse),
  handler: async ({ services, db, params, query, principal, requestId, koa }) => {
    const blobs = new BlobStore(services.config.blobDir);
    // Checked while staged: a refused body never touches a stored blob.
    let staged: { temp: string; sha256: string; size: number };
    try {
      staged = await blobs.stageStream(koa.req, services.config.uploadLimitBytes);
    } catch (err) {
      if (err instanceof BlobTooLargeError) throw problems.payloadTooLarge(err.limit);
      throw err;
    }
    let summary;
    let format;
    try {
      format = detectArchiveFormat(await readHead(staged.temp));
      if (!format) throw notAnArchive(staged.size);
      summary = await scanArchive(staged.temp, format);
    } catch (err) {
      await blobs.discardStaged(staged);
      if (err instanceof SourceError) {
        throw new ApiError({
          status: 400,
          code: err.code,
          title: 'Archive refused',
          detail: err.message,
          hint: 'Repack the archive with relative paths inside one root, no links out of it, within the limits.',
          extensions: err.details,
        });
      }
      throw err;
    }
    const stored = { sha256: staged.sha256, size: staged.size };
    const row = await db.transaction(async (trx) => {
      // Under the blob lock: a retention sweep releasing the same bytes cannot remove the blob
      // between this commit and the new upload row that holds it.
      await lockBlob(trx, stored.sha256);
      await blobs.commitStaged(staged);
      const upload = await insertUpload(trx, {
        workspace_id: params.workspace_id,
        uploaded_by: principal.memberId,
        filename: query.filename ?? (format === 'zip' ? 'upload.zip' : 'upload.tar.gz'),
        content_type: koa.get('Content-Type').split(';')[0]!.trim(),
        format,
        sha256: stored.sha256,
        size_bytes: stored.size,
        file_count: summary.files + summary.symlinks,
        unpacked_bytes: summary.bytes,
        status: 'ready',
      });
      return recordedWrite(trx, principal, requestId, upload, {
        action: 'upload.created',
        details: {
          filename: upload.filename,
          sha256: upload.sha256,
          size_bytes: stored.size,
          format,
        },
      });
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/uploads/${row.id}`);
    return presentUpload(row);
  },
});

export const getUpload = defineOperation({
  operationId: 'getUpload',
  ...route.get('/v1/workspaces/{workspace_id}/uploads/{upload_id}'),
  summary: 'Get an upload',
  ...UPLOADS.scope('uploads:write'),
  params: UploadParams,
  success: ok('The upload.', UploadResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findUpload(db, params.workspace_id, params.upload_id),
      `Upload ${params.upload_id}`,
    );
    return presentUpload(row);
  },
});
