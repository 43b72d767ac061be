/**
 * The two records every write leaves: an audit event (who did what, for compliance) and an
 * activity feed item (what a person browsing the workspace sees). Written in the same
 * transaction as the change itself.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';

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

/** Who a write is by, as its record names them: a member (through a token, in a request). */
export interface WriteActor {
  id: string | null;
  login: string | null;
  tokenId: string | null;
  requestId: string | null;
}

/** The actor fields of a write record; `null` for a write by the system, which names no one. */
export function writtenBy(
  actor: WriteActor | null,
): Pick<WriteRecord, 'actorId' | 'actorLogin' | 'tokenId' | 'requestId'> {
  return {
    actorId: actor?.id ?? null,
    actorLogin: actor?.login ?? null,
    tokenId: actor?.tokenId ?? null,
    requestId: actor?.requestId ?? null,
  };
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

/**
 * Many writes of one kind by the system at once (an audit resolving or reopening findings): an
 * audit event for each, 1,000 per statement, and one activity item for all of them (the feed is
 * for people: one line per audit and action, not one per finding). Ids are the caller's,
 * derived from what was written, so a retried step skips what it wrote already.
 */
export interface BulkWrite {
  workspaceId: string;
  actorLogin: string;
  action: string;
  resourceType: string;
  events: ReadonlyArray<{ id: string; resourceId: string; details: Record<string, unknown> }>;
  summary: {
    id: string;
    action: string;
    resourceType: string;
    resourceId: string | null;
    details: Record<string, unknown>;
  };
}

export async function recordBulkWrite(db: Knex, w: BulkWrite): Promise<void> {
  if (w.events.length === 0) return;
  for (let i = 0; i < w.events.length; i += 1000)
    await db('audit_events')
      .insert(
        w.events.slice(i, i + 1000).map((e) => ({
          id: e.id,
          workspace_id: w.workspaceId,
          actor_id: null,
          token_id: null,
          action: w.action,
          resource_type: w.resourceType,
          resource_id: e.resourceId,
          details: JSON.stringify(e.details),
          request_id: null,
        })),
      )
      .onConflict('id')
      .ignore();
  await db('activity_feed')
    .insert({
      id: w.summary.id,
      workspace_id: w.workspaceId,
      actor_login: w.actorLogin,
      action: w.summary.action,
      resource_type: w.summary.resourceType,
      resource_id: w.summary.resourceId,
      details: JSON.stringify(w.summary.details),
    })
    .onConflict('id')
    .ignore();
}

interface EventRow {
  id: string;
  created_at: Date;
  action: string;
  resource_type: string;
  resource_id: string | null;
  details: Record<string, unknown>;
}

export type AuditEventRow = EventRow & { actor_id: string | null };

export type ActivityRow = EventRow & {
  workspace_id: string | null;
  workspace_name: string | null;
  actor_login: string | null;
};

export function auditEventsQuery(db: Knex, workspaceId: string): Keyset<AuditEventRow> {
  return keyset(
    db('audit_events').select('*').where('audit_events.workspace_id', workspaceId),
    'audit_events',
  );
}

export function activityQuery(db: Knex, workspaceId: string): Keyset<ActivityRow> {
  return keyset(
    db('activity_feed')
      .leftJoin('workspaces', 'workspaces.id', 'activity_feed.workspace_id')
      .select('activity_feed.*', 'workspaces.name as workspace_name')
      .where('activity_feed.workspace_id', workspaceId),
    'activity_feed',
  );
}
