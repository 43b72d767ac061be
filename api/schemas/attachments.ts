/** Our schemas around audit attachments (AttachmentCreate/AttachmentResponse live in spec/). */
import { Type, type Static } from '@sinclair/typebox';
import { CursorPage, Uuid, pageFields } from '../schema-kit';
import { AttachmentResponse, LiteralUnion } from '../schemas';
import { ATTACHMENT_STATUSES } from '../../db/attachments';

export const AttachmentParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    attachment_id: Uuid({ description: 'The attachment.' }),
  },
  { additionalProperties: false },
);

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
export type AttachmentListQuery = Static<typeof AttachmentListQuery>;

export const AttachmentPage = CursorPage('AttachmentPage', AttachmentResponse);
