/** `archaudit repos list|add|show`. */
import type { Command } from 'commander';
import { collectPages, unwrap } from '../client';
import { CliError } from '../exit-codes';
import type { components } from '../generated/api';
import { printList, printRecord, withWorkspace, type Cell, type Ctx } from '../output';
import { limitOption, parseLimit } from './shared';

type Repository = components['schemas']['RepositoryResponse'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function listRepositories(ctx: Ctx, limit: number) {
  const ws = await ctx.api.workspaceId();
  return collectPages(
    limit,
    async (cursor, size) =>
      unwrap(
        await ctx.api.typed.GET('/v1/workspaces/{workspace_id}/repositories', {
          params: { path: { workspace_id: ws }, query: { cursor, limit: size } },
        }),
      ),
    ctx.api.bounds.pageSize,
  );
}

const repositoryFields = (r: Repository): Array<[string, Cell]> => [
  ['id', r.id],
  ['name', r.name],
  ['url', r.url],
  ['default branch', r.default_branch],
  ['description', r.description],
  ['created', r.created_at],
];

/** The repository id for a name or an id of the token's workspace. */
export async function resolveRepository(ctx: Ctx, nameOrId: string): Promise<string> {
  if (UUID.test(nameOrId)) return nameOrId;
  const found = (await listRepositories(ctx, 10_000)).find((r) => r.name === nameOrId);
  if (!found)
    throw new CliError(`No repository named ${nameOrId} in this workspace (archaudit repos list).`);
  return found.id;
}

export function registerRepos(program: Command): void {
  const repos = program.command('repos').description('Repositories of the workspace.');

  repos
    .command('list')
    .description('List repositories (scope repositories:read).')
    .addOption(limitOption())
    .addHelpText('after', '\nExample:\n  archaudit repos list --limit 20')
    .action(async (o: { limit: string }, cmd: Command) => {
      const { ctx } = await withWorkspace(cmd);
      const items = await listRepositories(ctx, parseLimit(o.limit));
      printList(ctx, items, ['id', 'name', 'default branch', 'url'], (r) => [
        r.id,
        r.name,
        r.default_branch,
        r.url,
      ]);
    });

  repos
    .command('add')
    .description('Register a repository (scope repositories:write).')
    .argument('<name>', 'a name unique in the workspace')
    .argument('<url>', 'its clone URL')
    .option('--default-branch <branch>', 'the branch audited by default')
    .option('--description <text>', 'what it is')
    .addHelpText(
      'after',
      '\nExample:\n  archaudit repos add orders https://github.com/acme/orders.git --default-branch main',
    )
    .action(
      async (
        name: string,
        url: string,
        o: { defaultBranch?: string; description?: string },
        cmd: Command,
      ) => {
        const { ctx, ws } = await withWorkspace(cmd);
        const r = unwrap(
          await ctx.api.typed.POST('/v1/workspaces/{workspace_id}/repositories', {
            params: { path: { workspace_id: ws } },
            body: {
              name,
              url,
              ...(o.defaultBranch ? { default_branch: o.defaultBranch } : {}),
              ...(o.description ? { description: o.description } : {}),
            },
          }),
        );
        printRecord(ctx, r, repositoryFields);
      },
    );

  repos
    .command('show')
    .description('Show a repository by name or id (scope repositories:read).')
    .argument('<repository>', 'name or id')
    .addHelpText('after', '\nExample:\n  archaudit repos show orders')
    .action(async (nameOrId: string, _o, cmd: Command) => {
      const { ctx, ws } = await withWorkspace(cmd);
      const id = await resolveRepository(ctx, nameOrId);
      const r = unwrap(
        await ctx.api.typed.GET('/v1/workspaces/{workspace_id}/repositories/{repository_id}', {
          params: { path: { workspace_id: ws, repository_id: id } },
        }),
      );
      printRecord(ctx, r, repositoryFields);
    });
}
