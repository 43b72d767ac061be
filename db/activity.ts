/**
 * The two records every write leaves: an audit event (who did what, for compliance) and an
 * activity feed item (what a person browsing the workspace sees). Written in the same
 * transaction as the change itself.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';

export interface WriteRecord {
  workspaceId: string;
  actorId: string | null;
  actorLogin: string | null;
  tokenId: string | null;
  requestId: string | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  details: Record<string, unknown>;
}

export async function recordWrite(db: Knex, w: WriteRecord): Promise<void> {
  await db('audit_events').insert({
    id: crypto.randomUUID(),
    workspace_id: w.workspaceId,
    actor_id: w.actorId,
    token_id: w.tokenId,
    action: w.action,
    resource_type: w.resourceType,
    resource_id: w.resourceId,
    details: JSON.stringify(w.details),
    request_id: w.requestId,
  });
  await db('activity_feed').insert({
    id: crypto.randomUUID(),
    workspace_id: w.workspaceId,
    actor_login: w.actorLogin,
    action: w.action,
    resource_type: w.resourceType,
    resource_id: w.resourceId,
    details: JSON.stringify(w.details),
  });
}

export function auditEventsQuery(db: Knex, workspaceId: string): Knex.QueryBuilder {
  return db('audit_events').select('*').where('audit_events.workspace_id', workspaceId);
}

export function activityQuery(db: Knex, workspaceId: string): Knex.QueryBuilder {
  return db('activity_feed')
    .leftJoin('workspaces', 'workspaces.id', 'activity_feed.workspace_id')
    .select('activity_feed.*', 'workspaces.name as workspace_name')
    .where('activity_feed.workspace_id', workspaceId);
}
