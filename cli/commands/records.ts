/** `archaudit findings|decisions|uncertainty|schedules`: the workspace's records. */
import { Option, type Command } from 'commander';
import {
  DECISION_STATES,
  SCHEDULE_CADENCES,
  CONTROL_SEVERITIES,
} from '../../domain/contract/values';
import { collectPages, unwrap, type PageOf } from '../client';
import { CliError, EXIT } from '../exit-codes';
import type { components } from '../generated/api';
import { asJson, printList, printRecord, withWorkspace, type Cell, type Ctx } from '../output';
import { resolveRepository } from './repos';
import { limitOption, parseId, parseLimit } from './shared';

type Decision = components['schemas']['ArchitectureDecisionResponse'];

/** A list command's items: the token's workspace, `--repo` resolved, pages followed to --limit. */
async function listed<T>(
  cmd: Command,
  o: { repo?: string; limit: string },
  page: (
    ctx: Ctx,
    at: {
      ws: string;
      repository_id: string | undefined;
      cursor: string | undefined;
      limit: number;
    },
  ) => Promise<PageOf<T>>,
): Promise<{ ctx: Ctx; items: T[] }> {
  const { ctx, ws } = await withWorkspace(cmd);
  const repository_id = o.repo ? await resolveRepository(ctx, o.repo) : undefined;
  const items = await collectPages(
    parseLimit(o.limit),
    (cursor, limit) => page(ctx, { ws, repository_id, cursor, limit }),
    ctx.api.bounds.pageSize,
  );
  return { ctx, items };
}

function integer(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n)) throw new CliError(`${name} must be an integer.`, EXIT.usage);
  return n;
}

function registerFindings(program: Command): void {
  program
    .command('findings')
    .description('Findings of the workspace.')
    .command('list')
    .description('List findings (scope findings:read).')
    .addOption(
      new Option('--severity <severity>', 'only this severity').choices(CONTROL_SEVERITIES),
    )
    .addOption(
      new Option('--status <status>', 'only this status').choices([
        'open',
        'accepted_risk',
        'false_positive',
        'resolved',
      ]),
    )
    .option('--repo <name|id>', 'only this repository')
    .addOption(limitOption())
    .addHelpText('after', '\nExample:\n  archaudit findings list --severity high --status open')
    .action(
      async (
        o: {
          severity?: 'high' | 'medium' | 'low';
          status?: 'open' | 'accepted_risk' | 'false_positive' | 'resolved';
          repo?: string;
          limit: string;
        },
        cmd: Command,
      ) => {
        const { ctx, items } = await listed(
          cmd,
          o,
          async (c, { ws, repository_id, cursor, limit }) =>
            unwrap(
              await c.api.typed.GET('/v1/workspaces/{workspace_id}/findings', {
                params: {
                  path: { workspace_id: ws },
                  query: { severity: o.severity, status: o.status, repository_id, cursor, limit },
                },
              }),
            ),
        );
        // The source column says whose each finding is: a repository's, or one upload's.
        printList(ctx, items, ['id', 'severity', 'status', 'control', 'source', 'title'], (f) => [
          f.id,
          f.severity,
          f.status,
          f.control_key,
          f.source_label,
          f.title,
        ]);
      },
    );
}

function decisionFields(d: Decision): Array<[string, Cell]> {
  return [
    ['id', d.id],
    ['title', d.title],
    ['status', d.status],
    ['question', d.question],
    ['options', d.options.map((x) => x.id).join(', ')],
    ['selected', d.selected_option_id],
    ['version', d.version],
    ['updated', d.updated_at],
  ];
}

function registerDecisions(program: Command): void {
  const decisions = program.command('decisions').description('Architecture decisions.');
  decisions
    .command('list')
    .description('List decisions (scope decisions:read).')
    .addOption(new Option('--status <status>', 'only this state').choices(DECISION_STATES))
    .option('--repo <name|id>', 'only this repository')
    .addOption(limitOption())
    .addHelpText('after', '\nExample:\n  archaudit decisions list --status in_review')
    .action(
      async (o: { status?: Decision['status']; repo?: string; limit: string }, cmd: Command) => {
        const { ctx, items } = await listed(
          cmd,
          o,
          async (c, { ws, repository_id, cursor, limit }) =>
            unwrap(
              await c.api.typed.GET('/v1/workspaces/{workspace_id}/decisions', {
                params: {
                  path: { workspace_id: ws },
                  query: { status: o.status, repository_id, cursor, limit },
                },
              }),
            ),
        );
        printList(ctx, items, ['id', 'status', 'title', 'updated'], (d) => [
          d.id,
          d.status,
          d.title,
          d.updated_at,
        ]);
      },
    );
  decisions
    .command('show')
    .description('Show a decision (scope decisions:read).')
    .argument('<decision>', 'decision id')
    .addHelpText('after', '\nExample:\n  archaudit decisions show $DECISION_ID')
    .action(async (id: string, _o, cmd: Command) => {
      id = parseId(id, 'decision');
      const { ctx, ws } = await withWorkspace(cmd);
      const d = unwrap(
        await ctx.api.typed.GET('/v1/workspaces/{workspace_id}/decisions/{decision_id}', {
          params: { path: { workspace_id: ws, decision_id: id } },
        }),
      );
      printRecord(ctx, d, decisionFields);
    });
  decisions
    .command('brief')
    .description("The decision's brief as Markdown (scope decisions:read).")
    .argument('<decision>', 'decision id')
    .addHelpText('after', '\nExample:\n  archaudit decisions brief $DECISION_ID > decision.md')
    .action(async (id: string, _o, cmd: Command) => {
      id = parseId(id, 'decision');
      const { ctx, ws } = await withWorkspace(cmd);
      const b = unwrap(
        await ctx.api.typed.GET('/v1/workspaces/{workspace_id}/decisions/{decision_id}/brief', {
          params: { path: { workspace_id: ws, decision_id: id } },
        }),
      );
      ctx.out(ctx.json ? asJson(b) : b.markdown);
    });
  decisions
    .command('transition')
    .description(
      'Move a decision to another state (scope decisions:write; decisions:approve to approve or reject).',
    )
    .argument('<decision>', 'decision id')
    .argument('<status>', DECISION_STATES.join(', '))
    .requiredOption('--rationale <text>', 'why (3 to 4000 characters)')
    .option('--option <id>', 'the selected option (when approving)')
    .addHelpText(
      'after',
      '\nExample:\n  archaudit decisions transition $DECISION_ID approved --option direct --rationale "Cheapest, reviewed"',
    )
    .action(
      async (
        id: string,
        status: string,
        o: { rationale: string; option?: string },
        cmd: Command,
      ) => {
        if (!(DECISION_STATES as readonly string[]).includes(status))
          throw new CliError(`The state must be one of ${DECISION_STATES.join(', ')}.`, EXIT.usage);
        id = parseId(id, 'decision');
        const { ctx, ws } = await withWorkspace(cmd);
        const params = { path: { workspace_id: ws, decision_id: id } };
        // Approving and rejecting are the approval operations (approveDecision, rejectDecision).
        const d = unwrap(
          status === 'approved'
            ? await ctx.api.typed.POST(
                '/v1/workspaces/{workspace_id}/decisions/{decision_id}/approval',
                { params, body: { rationale: o.rationale, selected_option_id: o.option ?? '' } },
              )
            : status === 'rejected'
              ? await ctx.api.typed.POST(
                  '/v1/workspaces/{workspace_id}/decisions/{decision_id}/rejection',
                  { params, body: { rationale: o.rationale } },
                )
              : await ctx.api.typed.POST(
                  '/v1/workspaces/{workspace_id}/decisions/{decision_id}/transitions',
                  {
                    params,
                    body: {
                      status: status as Decision['status'],
                      rationale: o.rationale,
                      ...(o.option ? { selected_option_id: o.option } : {}),
                    },
                  },
                ),
        );
        printRecord(ctx, d, decisionFields);
      },
    );
}

function registerUncertainty(program: Command): void {
  program
    .command('uncertainty')
    .description('Uncertainty cases: open questions about the architecture.')
    .command('list')
    .description('List uncertainty cases (scope findings:read).')
    .addOption(
      new Option('--state <state>', 'only this state').choices([
        'open',
        'investigating',
        'resolved',
        'dismissed',
      ]),
    )
    .option('--blocking', 'only the cases that block a gate')
    .option('--repo <name|id>', 'only this repository')
    .addOption(limitOption())
    .addHelpText('after', '\nExample:\n  archaudit uncertainty list --state open --blocking')
    .action(
      async (
        o: {
          state?: 'open' | 'investigating' | 'resolved' | 'dismissed';
          blocking?: boolean;
          repo?: string;
          limit: string;
        },
        cmd: Command,
      ) => {
        const { ctx, items } = await listed(
          cmd,
          o,
          async (c, { ws, repository_id, cursor, limit }) =>
            unwrap(
              await c.api.typed.GET('/v1/workspaces/{workspace_id}/uncertainty-cases', {
                params: {
                  path: { workspace_id: ws },
                  query: { state: o.state, blocking: o.blocking, repository_id, cursor, limit },
                },
              }),
            ),
        );
        printList(ctx, items, ['id', 'state', 'blocking', 'subject', 'detail'], (u) => [
          u.id,
          u.state,
          u.blocking,
          u.subject_key,
          u.detail,
        ]);
      },
    );
}

interface ScheduleFlags {
  timezone: string;
  cadence: components['schemas']['AuditScheduleCreate']['cadence'];
  at: string;
  weekday?: string;
  day?: string;
  anchor?: string;
}

/** The definition fields shared by preview and create, from `--cadence weekly --at 06:30 ...`. */
function definition(o: ScheduleFlags) {
  const m = /^(\d{1,2}):(\d{2})$/.exec(o.at);
  if (!m) throw new CliError('--at takes a local time HH:MM.', EXIT.usage);
  return {
    timezone: o.timezone,
    cadence: o.cadence,
    local_hour: Number(m[1]),
    local_minute: Number(m[2]),
    ...(o.weekday !== undefined ? { weekday: integer('--weekday', o.weekday) } : {}),
    ...(o.day !== undefined ? { day_of_month: integer('--day', o.day) } : {}),
    ...(o.anchor ? { anchor_date: o.anchor } : {}),
  };
}

function scheduleOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--timezone <tz>', 'IANA time zone, e.g. Europe/Paris')
    .addOption(
      new Option('--cadence <cadence>', 'how often')
        .choices(SCHEDULE_CADENCES)
        .makeOptionMandatory(),
    )
    .requiredOption('--at <HH:MM>', 'local time of day')
    .option('--weekday <0-6>', 'weekly, biweekly: 0 = Sunday')
    .option('--day <1-31>', 'monthly: day of the month')
    .option('--anchor <date>', 'biweekly: a date in the first week (YYYY-MM-DD)');
}

function registerSchedules(program: Command): void {
  const schedules = program.command('schedules').description('Audit schedules.');
  scheduleOptions(schedules.command('preview'))
    .description(
      'The next run times of a schedule definition, before creating it (scope audits:read).',
    )
    .option('--count <n>', 'how many runs (1 to 20)', '5')
    .addHelpText(
      'after',
      '\nExample:\n  archaudit schedules preview --timezone Europe/Paris --cadence weekly --weekday 1 --at 06:30',
    )
    .action(async (o: ScheduleFlags & { count: string }, cmd: Command) => {
      const { ctx, ws } = await withWorkspace(cmd);
      const p = unwrap(
        await ctx.api.typed.POST('/v1/workspaces/{workspace_id}/audit-schedules/preview', {
          params: { path: { workspace_id: ws } },
          body: { ...definition(o), count: integer('--count', o.count) ?? 5 },
        }),
      );
      printRecord(ctx, p, (x) => [
        ['timezone', x.timezone],
        ...x.runs.map((r, i): [string, Cell] => [`run ${i + 1}`, r]),
      ]);
    });
  schedules
    .command('list')
    .description('List schedules (scope audits:read).')
    .option('--repo <name|id>', 'only this repository')
    .addOption(limitOption())
    .addHelpText('after', '\nExample:\n  archaudit schedules list')
    .action(async (o: { repo?: string; limit: string }, cmd: Command) => {
      const { ctx, items } = await listed(cmd, o, async (c, { ws, repository_id, cursor, limit }) =>
        unwrap(
          await c.api.typed.GET('/v1/workspaces/{workspace_id}/audit-schedules', {
            params: { path: { workspace_id: ws }, query: { repository_id, cursor, limit } },
          }),
        ),
      );
      printList(ctx, items, ['id', 'name', 'state', 'cadence', 'next run'], (s) => [
        s.id,
        s.name,
        s.state,
        s.cadence,
        s.next_run_at,
      ]);
    });
  scheduleOptions(schedules.command('create'))
    .description('Create a schedule (scope audits:write).')
    .requiredOption('--name <name>', 'a name')
    .requiredOption('--repo <name|id>', 'the repository to audit')
    .option('--branch <ref>', 'branch to audit (default: the repository default)')
    .addOption(new Option('--missed <policy>', 'after downtime').choices(['skip', 'run_once']))
    .addHelpText(
      'after',
      '\nExample:\n  archaudit schedules create --name nightly --repo orders --timezone UTC --cadence daily --at 02:00',
    )
    .action(
      async (
        o: ScheduleFlags & {
          name: string;
          repo: string;
          branch?: string;
          missed?: 'skip' | 'run_once';
        },
        cmd: Command,
      ) => {
        const { ctx, ws } = await withWorkspace(cmd);
        const s = unwrap(
          await ctx.api.typed.POST('/v1/workspaces/{workspace_id}/audit-schedules', {
            params: { path: { workspace_id: ws } },
            body: {
              ...definition(o),
              name: o.name,
              repository_id: await resolveRepository(ctx, o.repo),
              ...(o.branch ? { branch_ref: o.branch } : {}),
              ...(o.missed ? { missed_run_policy: o.missed } : {}),
            },
          }),
        );
        printRecord(ctx, s, (x) => [
          ['id', x.id],
          ['name', x.name],
          ['state', x.state],
          ['next run', x.next_run_at],
        ]);
      },
    );
}

export function registerRecords(program: Command): void {
  registerFindings(program);
  registerDecisions(program);
  registerUncertainty(program);
  registerSchedules(program);
}
