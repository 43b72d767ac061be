/** Repositories. */
import { Type } from '@sinclair/typebox';
import { Nullable, Strict } from '../schema-kit';
import { CursorPage, ResourceParams, WorkspaceRecord, Timestamps } from '../schema-parts';

// Parameters ---------------------------------------------------------------------------------
export const RepositoryParams = ResourceParams('repository_id', 'The repository.');

// Meta ---------------------------------------------------------------------------------------
// Workspaces and members ---------------------------------------------------------------------
// Repositories -------------------------------------------------------------------------------

const RepositoryName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._/-]*$',
  description: 'Unique in the workspace (case-insensitive): letters, digits, `.`, `_`, `-`, `/`.',
});
const RepositoryUrl = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'Git URL: https:// (public hosts), ssh:// or scp-like `git@host:path` (when an operator enabled ssh for the workspace), a local path or file:/// URL (only in workspaces an operator allows).',
});
const BranchName = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Branch audited by default.',
});
const Description = Type.String({ maxLength: 2000 });

export const RepositoryCreate = Strict('RepositoryCreate', {
  name: RepositoryName,
  url: RepositoryUrl,
  default_branch: Type.Optional({ ...BranchName, default: 'main' }),
  description: Type.Optional(Nullable(Description)),
});

export const RepositoryUpdate = Strict(
  'RepositoryUpdate',
  {
    name: Type.Optional(RepositoryName),
    url: Type.Optional(RepositoryUrl),
    default_branch: Type.Optional(BranchName),
    description: Type.Optional(Nullable(Description)),
  },
  { minProperties: 1, description: 'The fields to change; at least one.' },
);

export const RepositoryResponse = Strict('RepositoryResponse', {
  ...WorkspaceRecord,
  name: Type.String(),
  url: Type.String(),
  default_branch: Type.String(),
  description: Nullable(Type.String()),
  ...Timestamps,
});
export const RepositoryPage = CursorPage('RepositoryPage', RepositoryResponse);
