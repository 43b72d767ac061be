/** Workspaces and members. A token belongs to one workspace, so it sees exactly one. */
import { findWorkspace, membersQuery } from '../../db/workspaces';
import { defineOperation, ok, operationGroup, route } from '../registry/operation';
import { PageQuery, WorkspaceParams } from '../schema-kit';
import { pageRequest } from '../shared';
import { presentMember, presentWorkspace } from './present';
import { MemberPage, WorkspacePage, WorkspaceResponse } from './schemas';
import { found, pageOf } from '../registry/parts';

const WORKSPACES = operationGroup('Workspaces');

export const listWorkspaces = defineOperation({
  operationId: 'listWorkspaces',
  ...route.get('/v1/workspaces'),
  summary: 'List the workspaces the token can see',
  description:
    "A token belongs to one workspace, so the page holds that workspace; a member's session (the console) sees every workspace of the member.",
  ...WORKSPACES.scope('repositories:read'),
  query: PageQuery,
  success: ok('A page of workspaces.', WorkspacePage),
  handler: async ({ principal, query }) => {
    // A token belongs to one workspace, which authentication has already read: no query here.
    // A session (the console) sees every workspace of its member, read with the session.
    const after = pageRequest(query).after;
    const all = principal.session?.workspaces ?? [principal.workspace];
    const items = all
      .filter(
        (w) =>
          after === null ||
          w.createdAt > after.createdAt ||
          (w.createdAt === after.createdAt && w.id > after.id),
      )
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
      .map((w) => ({
        id: w.id,
        name: w.name,
        slug: w.slug,
        created_at: w.createdAt,
        updated_at: w.updatedAt,
      }));
    return { items, has_more: false, next_cursor: null };
  },
});

export const getWorkspace = defineOperation({
  operationId: 'getWorkspace',
  ...route.get('/v1/workspaces/{workspace_id}'),
  summary: 'Get a workspace',
  ...WORKSPACES.scope('repositories:read'),
  params: WorkspaceParams,
  success: ok('The workspace.', WorkspaceResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findWorkspace(db, params.workspace_id),
      `Workspace ${params.workspace_id}`,
    );
    return presentWorkspace(row);
  },
});

export const listMembers = defineOperation({
  operationId: 'listMembers',
  ...route.get('/v1/workspaces/{workspace_id}/members'),
  summary: 'List the members of a workspace',
  ...WORKSPACES.scope('members:read'),
  params: WorkspaceParams,
  query: PageQuery,
  success: ok('A page of members, newest first.', MemberPage),
  handler: async ({ db, params, query }) => {
    return pageOf(query, membersQuery(db, params.workspace_id), presentMember);
  },
});
