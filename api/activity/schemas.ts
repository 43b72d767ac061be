/** The activity feed and audit events. */
import { Type } from '@sinclair/typebox';
import { DateTime, FreeObject, Nullable, Strict, Uuid } from '../schema-kit';
import { CursorPage } from '../schema-parts';

export const ActivityFeedItem = Strict(
  'ActivityFeedItem',
  {
    id: Uuid(),
    action: Type.String({ description: 'What happened.' }),
    resource_type: Type.String(),
    resource_id: Nullable(Uuid()),
    actor_login: Nullable(Type.String({ description: 'Login of the actor, if any.' })),
    workspace_id: Nullable(Uuid()),
    workspace_name: Nullable(Type.String()),
    details: FreeObject(),
    created_at: DateTime(),
  },
  { description: 'One entry of the activity feed.' },
);

export const AuditEventResponse = Strict(
  'AuditEventResponse',
  {
    id: Uuid(),
    actor_id: Nullable(Uuid()),
    action: Type.String({ description: 'What happened.' }),
    resource_type: Type.String(),
    resource_id: Nullable(Uuid()),
    details: FreeObject(),
    created_at: DateTime(),
  },
  { description: 'One audit-event record.' },
);

// Activity -----------------------------------------------------------------------------------

export const ActivityPage = CursorPage('ActivityPage', ActivityFeedItem);
export const AuditEventPage = CursorPage('AuditEventPage', AuditEventResponse);
