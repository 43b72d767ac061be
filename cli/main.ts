/**
 * `archaudit`: the command-line client of the /v1 API. Credentials come only from the environment
 * (ARCHAUDIT_URL, ARCHAUDIT_TOKEN); a token given as an argument is refused before anything runs.
 */
import { Command, CommanderError, Option } from 'commander';
import { terminalText } from '../domain/output/terminal';
import { containsTokenText } from '../domain/tokens/rules';
import { registerApi } from './commands/api';
import { registerAudits } from './commands/audits';
import { registerContract } from './commands/contract';
import { registerMeta } from './commands/meta';
import { registerRecords } from './commands/records';
import { registerRepos } from './commands/repos';
import { CliError, EXIT, EXIT_CODES_HELP } from './exit-codes';
import { redactOutput } from './output';

const CREDENTIAL_FLAG =
  /^--?(token|api[-_]?key|apikey|auth|authorization|bearer|password|secret|access[-_]?token)(=|$)/i;

const WHY_ENVIRONMENT =
  'archaudit reads the token only from the ARCHAUDIT_TOKEN environment variable: arguments are kept in shell history, shown to every user in process lists (ps) and printed in CI logs. Export ARCHAUDIT_TOKEN (in CI, from a masked secret) and run the command without it.';

/** The reason to refuse these arguments, or null. Never repeats the argument itself. */
export function refusedArgument(argv: readonly string[]): string | null {
  for (const arg of argv) {
    const flag = CREDENTIAL_FLAG.exec(arg);
    if (flag) return `The flag --${flag[1]!.toLowerCase()} is not accepted. ${WHY_ENVIRONMENT}`;
    if (containsTokenText(arg))
      return `An argument looks like an API token (aat_...). ${WHY_ENVIRONMENT} If you pasted it by accident, revoke it.`;
  }
  return null;
}

const ENVIRONMENT_HELP = `Environment:
  ARCHAUDIT_URL    the API origin (default http://127.0.0.1:8080)
  ARCHAUDIT_TOKEN  a workspace API token (aat_...); never accepted as an argument

`;

export function buildProgram(): Command {
  const program = new Command('archaudit')
    .description('Command-line client of the archaudit API (/v1).')
    .version(
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      (require('../package.json') as { version: string }).version,
    )
    .option('--json', 'print JSON instead of tables')
    .addOption(
      new Option('--request-timeout <s>', 'timeout of each HTTP attempt, in seconds').default('30'),
    )
    .addOption(new Option('--retries <n>', 'retries of a request answered 429 or 503').default('4'))
    .addOption(
      new Option(
        '--deadline <s>',
        'the most one request may take, retries and waits included',
      ).default('120'),
    )
    .addOption(
      new Option('--max-response-bytes <n>', 'refuse larger responses').default(
        String(64 * 1024 * 1024),
      ),
    )
    .addOption(
      new Option('--page-size <n>', 'items per request when following pages (1 to 200)').default(
        '200',
      ),
    )
    .addHelpText('after', `\n${ENVIRONMENT_HELP}${EXIT_CODES_HELP}\n`)
    .showHelpAfterError('(archaudit --help lists the commands)')
    .exitOverride();
  registerMeta(program);
  registerContract(program);
  registerRepos(program);
  registerAudits(program);
  registerRecords(program);
  registerApi(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  redactOutput(process.env.ARCHAUDIT_TOKEN?.trim());
  const refused = refusedArgument(argv.slice(2));
  if (refused) {
    process.stderr.write(`archaudit: ${terminalText(refused)}\n`);
    return EXIT.usage;
  }
  try {
    await buildProgram().parseAsync(argv);
    return Number(process.exitCode ?? EXIT.ok);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are exits of their own with code 0.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof CliError) {
      process.stderr.write(`archaudit: ${terminalText(err.message)}\n`);
      return err.exitCode;
    }
    // Never a stack trace: the message is enough to report.
    process.stderr.write(
      `archaudit: unexpected error: ${terminalText((err as Error).message ?? String(err))}\n`,
    );
    return EXIT.failure;
  }
}

/** Runs the CLI on `argv` (as process.argv) and sets the exit code (bin.cjs and the bundle call it). */
export async function run(argv: string[]): Promise<void> {
  process.exitCode = await main(argv);
}
