/** Workspaces and members. */
import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, Strict, Uuid } from '../schema-kit';
import { CursorPage, WorkspaceRecord, Timestamps } from '../schema-parts';

// Meta ---------------------------------------------------------------------------------------
// Workspaces and members ---------------------------------------------------------------------

export const WorkspaceResponse = Strict('WorkspaceResponse', {
  id: Uuid(),
  name: Type.String(),
  slug: Type.String(),
  ...Timestamps,
});
export const WorkspacePage = CursorPage('WorkspacePage', WorkspaceResponse);

export const MemberResponse = Strict('MemberResponse', {
  ...WorkspaceRecord,
  login: Type.String(),
  display_name: Nullable(Type.String()),
  role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
  created_at: DateTime(),
});
export const MemberPage = CursorPage('MemberPage', MemberResponse);
