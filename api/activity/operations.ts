/** The two write records: the activity feed (for people) and audit events (for compliance). */
import { activityQuery, auditEventsQuery } from '../../db/activity';
import { listOperation } from '../registry/parts';
import { ok, operationGroup, route } from '../registry/operation';
import { PageQuery, WorkspaceParams } from '../schema-kit';
import { iso } from '../shared';
import { ActivityPage, AuditEventPage } from './schemas';

const ACTIVITY = operationGroup('Activity');

export const listActivity = listOperation({
  operationId: 'listActivity',
  ...route.get('/v1/workspaces/{workspace_id}/activity'),
  summary: 'The workspace activity feed',
  ...ACTIVITY.scope('members:read'),
  params: WorkspaceParams,
  query: PageQuery,
  success: ok('A page of activity items, newest first.', ActivityPage),
  rows: ({ db, params }) => activityQuery(db, params.workspace_id),
  present: (r) => ({
    id: r.id,
    action: r.action,
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    actor_login: r.actor_login,
    workspace_id: r.workspace_id,
    workspace_name: r.workspace_name,
    details: r.details,
    created_at: iso(r.created_at),
  }),
});

export const listAuditEvents = listOperation({
  operationId: 'listAuditEvents',
  ...route.get('/v1/workspaces/{workspace_id}/audit-events'),
  summary: 'The workspace audit trail',
  ...ACTIVITY.scope('members:read'),
  params: WorkspaceParams,
  query: PageQuery,
  success: ok('A page of audit events, newest first.', AuditEventPage),
  rows: ({ db, params }) => auditEventsQuery(db, params.workspace_id),
  present: (r) => ({
    id: r.id,
    actor_id: r.actor_id,
    action: r.action,
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    details: r.details,
    created_at: iso(r.created_at),
  }),
});
