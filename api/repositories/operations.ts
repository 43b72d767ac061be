/** Repositories: the git sources audits run against. */
import type { Knex } from 'knex';
import {
  findRepositoryByName,
  insertRepository,
  repositoriesQuery,
  softDeleteRepository,
  updateRepository as updateRepositoryRow,
  type RepositoryRow,
} from '../../db/repositories';
import type { WorkspaceRef } from '../../domain/repositories/source-policy';
import type { Config } from '../../platform/config';
import { checkRegistration, sourcePolicyOf } from '../../platform/source-access';
import { ApiError, problems } from '../errors';
import { defineOperation, created, ok, operationGroup, route } from '../registry/operation';
import { PageQuery, WorkspaceParams } from '../schema-kit';
import { presentRepository } from './present';
import {
  RepositoryCreate,
  RepositoryPage,
  RepositoryParams,
  RepositoryResponse,
  RepositoryUpdate,
} from './schemas';
import { found, listOperation, recordedWrite } from '../registry/parts';
import { loadRepository } from '../registry/loads';

const SOURCE_HINTS: Record<string, string> = {
  local_repository_not_allowed:
    'Register the repository by its https URL; an operator can allow local sources for this workspace.',
  repository_path_protected: 'Register a repository outside the service folders.',
  ssh_repository_not_allowed:
    'Use the https URL; an operator can enable ssh for this workspace with a known-hosts file.',
  repository_host_not_allowed:
    'Use a public host; an operator can allow an internal one (REPOSITORY_ALLOWED_HOSTS).',
};

/** The source policy's verdict on a URL for this workspace; a refusal is a 400 naming /url. */
async function assertSource(url: string, workspace: WorkspaceRef, config: Config): Promise<void> {
  const check = await checkRegistration(url, workspace, sourcePolicyOf(config));
  if (check.ok) return;
  const errors = [{ in: 'body' as const, path: '/url', message: check.reason }];
  if (check.code === 'invalid_repository_url') throw problems.validationFailed(errors);
  throw new ApiError({
    status: 400,
    code: check.code,
    title: 'Repository source not allowed',
    detail: `body/url: ${check.reason}`,
    hint: SOURCE_HINTS[check.code]!,
    errors,
  });
}

async function assertNameFree(
  db: Knex,
  workspaceId: string,
  name: string,
  exceptId?: string,
): Promise<void> {
  const existing = await findRepositoryByName(db, workspaceId, name);
  if (existing && existing.id !== exceptId) {
    throw problems.conflict(
      'conflict',
      `A repository named ${JSON.stringify(name)} already exists.`,
      'Choose another name.',
      {
        repository_id: existing.id,
      },
    );
  }
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

const REPOSITORIES = operationGroup('Repositories');

export const listRepositories = listOperation({
  operationId: 'listRepositories',
  ...route.get('/v1/workspaces/{workspace_id}/repositories'),
  summary: 'List repositories',
  ...REPOSITORIES.scope('repositories:read'),
  params: WorkspaceParams,
  query: PageQuery,
  success: ok('A page of repositories, newest first.', RepositoryPage),
  rows: ({ db, params }) => repositoriesQuery(db, params.workspace_id),
  present: presentRepository,
});

export const createRepository = defineOperation({
  operationId: 'createRepository',
  ...route.post('/v1/workspaces/{workspace_id}/repositories'),
  summary: 'Register a repository',
  ...REPOSITORIES.scope('repositories:write'),
  params: WorkspaceParams,
  body: RepositoryCreate,
  errors: [409],
  success: created('The registered repository.', RepositoryResponse),
  handler: async ({ db, params, body, principal, requestId, services, koa }) => {
    await assertSource(body.url, principal.workspace, services.config);
    const row = await db
      .transaction(async (trx) => {
        await assertNameFree(trx, params.workspace_id, body.name);
        const created = await insertRepository(trx, {
          workspaceId: params.workspace_id,
          name: body.name,
          url: body.url,
          defaultBranch: body.default_branch ?? 'main',
          description: body.description ?? null,
        });
        return recordedWrite(trx, principal, requestId, created, {
          action: 'repository.created',
          details: { name: created.name, url: created.url, default_branch: created.default_branch },
        });
      })
      .catch(async (err: unknown) => {
        if (isUniqueViolation(err)) await assertNameFree(db, params.workspace_id, body.name);
        throw err;
      });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/repositories/${row.id}`);
    return presentRepository(row);
  },
});

export const getRepository = defineOperation({
  operationId: 'getRepository',
  ...route.get('/v1/workspaces/{workspace_id}/repositories/{repository_id}'),
  summary: 'Get a repository',
  ...REPOSITORIES.scope('repositories:read'),
  params: RepositoryParams,
  success: ok('The repository.', RepositoryResponse),
  handler: async ({ db, params }) => {
    const row = await loadRepository(db, params.workspace_id, params.repository_id);
    return presentRepository(row);
  },
});

export const updateRepository = defineOperation({
  operationId: 'updateRepository',
  ...route.patch('/v1/workspaces/{workspace_id}/repositories/{repository_id}'),
  summary: 'Change a repository',
  ...REPOSITORIES.scope('repositories:write'),
  params: RepositoryParams,
  body: RepositoryUpdate,
  errors: [409],
  success: ok('The changed repository.', RepositoryResponse),
  handler: async ({ db, params, body, principal, requestId, services }) => {
    if (body.url !== undefined) await assertSource(body.url, principal.workspace, services.config);
    const row = await db
      .transaction(async (trx) => {
        const before = await loadRepository(trx, params.workspace_id, params.repository_id);
        if (body.name !== undefined)
          await assertNameFree(trx, params.workspace_id, body.name, before.id);
        const after = await updateRepositoryRow(
          trx,
          params.workspace_id,
          params.repository_id,
          body,
        );
        // Deleted by a concurrent request since it was read.
        if (!after) throw problems.notFound(`Repository ${params.repository_id}`);
        const changed = Object.fromEntries(
          Object.keys(body).map((k) => [
            k,
            { from: before[k as keyof RepositoryRow], to: after[k as keyof RepositoryRow] },
          ]),
        );
        return recordedWrite(trx, principal, requestId, after, {
          action: 'repository.updated',
          details: { name: after.name, changes: changed },
        });
      })
      .catch(async (err: unknown) => {
        if (isUniqueViolation(err) && body.name)
          await assertNameFree(db, params.workspace_id, body.name, params.repository_id);
        throw err;
      });
    return presentRepository(row);
  },
});

export const deleteRepository = defineOperation({
  operationId: 'deleteRepository',
  ...route.delete('/v1/workspaces/{workspace_id}/repositories/{repository_id}'),
  summary: 'Delete a repository',
  description:
    'The repository disappears from reads; audits already run against it keep their history.',
  ...REPOSITORIES.scope('repositories:write'),
  params: RepositoryParams,
  success: ok('The deleted repository as it was.', RepositoryResponse),
  handler: async ({ db, params, principal, requestId }) => {
    const row = await db.transaction(async (trx) => {
      const deleted = await found(
        softDeleteRepository(trx, params.workspace_id, params.repository_id),
        `Repository ${params.repository_id}`,
      );
      return recordedWrite(trx, principal, requestId, deleted, {
        action: 'repository.deleted',
        details: { name: deleted.name },
      });
    });
    return presentRepository(row);
  },
});
