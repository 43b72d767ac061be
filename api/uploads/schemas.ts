/** Source archive uploads. */
import { Type } from '@sinclair/typebox';
import { DateTime, Strict, Uuid } from '../schema-kit';
import { WorkspaceRecord } from '../schema-parts';

export const UploadParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    upload_id: Uuid({ description: 'The upload.' }),
  },
  { additionalProperties: false },
);

export const UploadQuery = Type.Object(
  {
    filename: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: '^[^/\\\\\\x00-\\x1f]+$',
        description: 'Name to record for the archive.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const UploadResponse = Strict('UploadResponse', {
  ...WorkspaceRecord,
  uploaded_by: Uuid(),
  filename: Type.String(),
  content_type: Type.String(),
  format: Type.Union([Type.Literal('tar.gz'), Type.Literal('zip')]),
  sha256: Type.String({ description: 'SHA-256 of the archive bytes.' }),
  size_bytes: Type.Integer({ minimum: 0 }),
  file_count: Type.Integer({ minimum: 0, description: 'Files and symlinks in the archive.' }),
  unpacked_bytes: Type.Integer({ minimum: 0 }),
  status: Type.Union([Type.Literal('ready'), Type.Literal('expired')], {
    description:
      'ready: checked and usable by audits and attachments. expired: the upload only served attachments and its bytes went with the last of them (retention or deletion).',
  }),
  created_at: DateTime(),
});
