/** The two write records: the activity feed (for people) and audit events (for compliance). */
import { activityQuery, auditEventsQuery } from '../../db/activity';
import { keysetPage } from '../../db/paginate';
import { defineOperation, ok, operationGroup, route } from '../registry/operation';
import { PageQuery, WorkspaceParams } from '../schema-kit';
import { iso, pageRequest } from '../shared';
import { ActivityPage, AuditEventPage } from './schemas';

const ACTIVITY = operationGroup('Activity');

export const listActivity = defineOperation({
  operationId: 'listActivity',
  ...route.get('/v1/workspaces/{workspace_id}/activity'),
  summary: 'The workspace activity feed',
  ...ACTIVITY.scope('members:read'),
  params: WorkspaceParams,
  query: PageQuery,
  success: ok('A page of activity items, newest first.', ActivityPage),
  handler: async ({ db, params, query }) => {
    const page = await keysetPage(activityQuery(db, params.workspace_id), pageRequest(query));
    return {
      ...page,
      items: page.items.map((r) => ({
        id: r.id,
        action: r.action,
        resource_type: r.resource_type,
        resource_id: r.resource_id,
        actor_login: r.actor_login,
        workspace_id: r.workspace_id,
        workspace_name: r.workspace_name,
        details: r.details,
        created_at: iso(r.created_at),
      })),
    };
  },
});

export const listAuditEvents = defineOperation({
  operationId: 'listAuditEvents',
  ...route.get('/v1/workspaces/{workspace_id}/audit-events'),
  summary: 'The workspace audit trail',
  ...ACTIVITY.scope('members:read'),
  params: WorkspaceParams,
  query: PageQuery,
  success: ok('A page of audit events, newest first.', AuditEventPage),
  handler: async ({ db, params, query }) => {
    const page = await keysetPage(auditEventsQuery(db, params.workspace_id), pageRequest(query));
    return {
      ...page,
      items: page.items.map((r) => ({
        id: r.id,
        actor_id: r.actor_id,
        action: r.action,
        resource_type: r.resource_type,
        resource_id: r.resource_id,
        details: r.details,
        created_at: iso(r.created_at),
      })),
    };
  },
});
