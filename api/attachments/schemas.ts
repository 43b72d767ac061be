/** Attachments. The specification does not declare the no-unknown-properties rule for them. */
import { Type } from '@sinclair/typebox';
import { ATTACHMENT_STATUSES } from '../../db/attachments';
import { DateTime, LiteralUnion, Nullable, Open, Uuid, pageFields } from '../schema-kit';
import { CursorPage, ResourceParams } from '../schema-parts';

export const AttachmentCreate = Open(
  'AttachmentCreate',
  {
    upload_id: Uuid({ description: 'Upload to attach.' }),
    retention_days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 365,
        default: 90,
        description: 'How many days the attachment is kept.',
      }),
    ),
  },
  { description: 'Request to create an attachment from an upload.' },
);

export const AttachmentResponse = Open(
  'AttachmentResponse',
  {
    id: Uuid(),
    upload_id: Uuid(),
    uploaded_by: Uuid(),
    filename: Type.String(),
    content_type: Type.String(),
    sha256: Type.String({ description: 'SHA-256 of the content.' }),
    status: Type.String(),
    size_bytes: Type.Integer(),
    retained_until: DateTime({ description: 'End of the retention period.' }),
    created_at: DateTime(),
    // Beyond the spec's fields (its schema is open): documented so clients can rely on them.
    audit_id: Type.Optional(Uuid({ description: 'The audit the attachment belongs to.' })),
    retention_days: Type.Optional(
      Type.Integer({ description: 'The retention asked for at creation (1..365).' }),
    ),
    removed_at: Type.Optional(
      Nullable(
        DateTime({ description: 'When the content was deleted or expired; null while available.' }),
      ),
    ),
  },
  {
    description:
      'An attachment. status: available (content downloadable), deleted (removed by a user), expired (removed by the retention sweep).',
  },
);

export const AttachmentParams = ResourceParams('attachment_id', 'The attachment.');

export const AttachmentListQuery = Type.Object(
  {
    status: Type.Optional(
      LiteralUnion(ATTACHMENT_STATUSES, {
        description:
          'Only attachments in this status (default: every status): available (bytes downloadable), deleted (removed by a user), expired (removed by the retention sweep).',
      }),
    ),
    ...pageFields(),
  },
  { additionalProperties: false },
);

export const AttachmentPage = CursorPage('AttachmentPage', AttachmentResponse);
