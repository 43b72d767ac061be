/** Our schemas around audits and uploads (the spec's own audit schemas live in spec/). */
import { Type } from '@sinclair/typebox';
import { DateTime, Strict, Uuid, pageFields } from '../schema-kit';
import { AUDIT_STATUSES, LiteralUnion } from '../schemas';

export const AuditParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    audit_id: Uuid({ description: 'The audit.' }),
  },
  { additionalProperties: false },
);

export const UploadParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    upload_id: Uuid({ description: 'The upload.' }),
  },
  { additionalProperties: false },
);

export const AuditListQuery = Type.Object(
  {
    repository_id: Type.Optional(Uuid({ description: 'Only audits of this repository.' })),
    status: Type.Optional(
      LiteralUnion(AUDIT_STATUSES, { description: 'Only audits in this status.' }),
    ),
    ...pageFields(),
  },
  { additionalProperties: false },
);

export const AuditLogQuery = Type.Object(
  {
    level: Type.Optional(
      Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('error')], {
        description: 'Minimum level: `warning` returns warnings and errors.',
      }),
    ),
    since: Type.Optional(
      DateTime({
        description: 'Only lines strictly after this instant (to follow a running audit).',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 5000,
        default: 1000,
        description: 'At most this many lines, oldest first.',
      }),
    ),
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
  id: Uuid(),
  workspace_id: Uuid(),
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
