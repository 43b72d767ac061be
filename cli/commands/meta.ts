/** `archaudit scopes` (no token needed) and `archaudit whoami`. */
import type { Command } from 'commander';
import { unwrap } from '../client';
import { asJson, contextOf, fields, table } from '../output';

export function registerMeta(program: Command): void {
  program
    .command('scopes')
    .description(
      'List the scopes a token can carry (no token needed): ask for the fewest you need.',
    )
    .addHelpText('after', '\nExample:\n  archaudit scopes\n  archaudit scopes --json')
    .action(async (_o, cmd: Command) => {
      const ctx = contextOf(cmd);
      const scopes = unwrap(await ctx.api.typed.GET('/v1/scopes'));
      ctx.out(
        ctx.json
          ? asJson(scopes)
          : table(
              ['scope', 'description'],
              scopes.items.map((s) => [s.name, s.description]),
            ),
      );
    });

  program
    .command('whoami')
    .description("Show the token's name, prefix, workspace, scopes and expiry (never the secret).")
    .addHelpText('after', '\nExample:\n  ARCHAUDIT_TOKEN=... archaudit whoami')
    .action(async (_o, cmd: Command) => {
      const ctx = contextOf(cmd);
      ctx.api.requireToken();
      const t = unwrap(await ctx.api.typed.GET('/v1/token'));
      ctx.out(
        ctx.json
          ? asJson(t)
          : fields([
              ['token', `${t.name} (${t.prefix}_...)`],
              ['workspace', t.workspace_id],
              ['member', t.member_id],
              ['scopes', t.scopes.join(', ')],
              ['expires', t.expires_at],
              ['last used', t.last_used_at],
            ]),
      );
    });
}
