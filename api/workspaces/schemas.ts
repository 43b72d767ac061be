/** Workspaces and members. */
import { Type } from '@sinclair/typebox';
import { CursorPage, DateTime, Nullable, Strict, Uuid } from '../schema-kit';

// Meta ---------------------------------------------------------------------------------------
// Workspaces and members ---------------------------------------------------------------------

export const WorkspaceResponse = Strict('WorkspaceResponse', {
  id: Uuid(),
  name: Type.String(),
  slug: Type.String(),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export const WorkspacePage = CursorPage('WorkspacePage', WorkspaceResponse);

export const MemberResponse = Strict('MemberResponse', {
  id: Uuid(),
  workspace_id: Uuid(),
  login: Type.String(),
  display_name: Nullable(Type.String()),
  role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
  created_at: DateTime(),
});
export const MemberPage = CursorPage('MemberPage', MemberResponse);
