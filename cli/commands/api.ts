/**
 * `archaudit api OPERATION_ID`: every operation of the bundled contract as a subcommand, so the
 * whole API is reachable from a terminal. Its help names the method, path, scope and parameters.
 */
import fs from 'node:fs';
import { Option, type Command } from 'commander';
import { problemFrom } from '../client';
import { bundledContract, operationsOf, scopeOf, type OperationEntry } from '../contract';
import { CliError, EXIT } from '../exit-codes';
import { asJson, contextOf } from '../output';

interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
}

function paramsOf(e: OperationEntry): Param[] {
  return ((e.op.parameters ?? []) as Param[]).filter((p) => p.name !== 'X-Request-ID');
}

function bodyTypes(e: OperationEntry): string[] {
  const body = e.op.requestBody as { content?: Record<string, unknown> } | undefined;
  return Object.keys(body?.content ?? {});
}

function helpOf(e: OperationEntry): string {
  const params = paramsOf(e).map(
    (p) =>
      `  ${p.name} (${p.in}${p.required ? ', required' : ''})${p.description ? `: ${p.description}` : ''}`,
  );
  const types = bodyTypes(e);
  return [
    '',
    `${e.method.toUpperCase()} ${e.path}`,
    `Scope: ${scopeOf(e.op)}`,
    params.length ? `Parameters (--param name=value):\n${params.join('\n')}` : 'Parameters: none',
    types.length ? `Body (--body FILE or - for stdin): ${types.join(', ')}` : '',
    'workspace_id defaults to the workspace of ARCHAUDIT_TOKEN.',
  ]
    .filter(Boolean)
    .join('\n');
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function call(
  e: OperationEntry,
  o: { param: string[]; body?: string; contentType?: string; output?: string },
  cmd: Command,
) {
  const ctx = contextOf(cmd);
  const known = new Map(paramsOf(e).map((p) => [p.name, p]));
  const given = new Map<string, string>();
  for (const kv of o.param) {
    const at = kv.indexOf('=');
    if (at <= 0) throw new CliError(`--param takes name=value; got ${kv}.`, EXIT.usage);
    const name = kv.slice(0, at);
    if (!known.has(name))
      throw new CliError(
        `${e.operationId} has no parameter ${name} (it has: ${[...known.keys()].join(', ') || 'none'}).`,
        EXIT.usage,
      );
    given.set(name, kv.slice(at + 1));
  }
  if (scopeOf(e.op) !== 'public') ctx.api.requireToken();
  if (known.has('workspace_id') && !given.has('workspace_id'))
    given.set('workspace_id', await ctx.api.workspaceId());
  let path = e.path;
  const query: Record<string, string> = {};
  const headers: Record<string, string> = {};
  for (const [name, p] of known) {
    const value = given.get(name);
    if (value === undefined) {
      if (p.required) throw new CliError(`${e.operationId} needs --param ${name}=...`, EXIT.usage);
      continue;
    }
    if (p.in === 'path') path = path.replace(`{${name}}`, encodeURIComponent(value));
    else if (p.in === 'query') query[name] = value;
    else headers[name] = value;
  }
  const types = bodyTypes(e);
  let body: unknown;
  if (o.body !== undefined) {
    if (!types.length) throw new CliError(`${e.operationId} takes no body.`, EXIT.usage);
    const bytes = o.body === '-' ? fs.readFileSync(0) : fs.readFileSync(o.body);
    if (types.includes('application/json')) {
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch (err) {
        throw new CliError(`--body is not JSON: ${(err as Error).message}`, EXIT.usage);
      }
    } else {
      body = new Uint8Array(bytes);
      headers['Content-Type'] = o.contentType ?? types[0]!;
    }
  } else if (types.length && (e.op.requestBody as { required?: boolean }).required)
    throw new CliError(`${e.operationId} needs a body: --body FILE (or - for stdin).`, EXIT.usage);
  const r = await ctx.api.raw(e.method, path, { query, headers, body });
  if (r.status >= 400) throw problemFrom(r.status, r.json);
  if (o.output) {
    fs.writeFileSync(o.output, r.bytes);
    ctx.note(`${r.status}: ${r.contentType || 'no body'} written to ${o.output}`);
  } else if (r.json !== undefined) ctx.out(asJson(r.json));
  else if (/^text\/|xml|svg/.test(r.contentType)) ctx.out(r.text);
  else if (r.bytes.length) process.stdout.write(r.bytes);
}

export function registerApi(program: Command): void {
  const api = program
    .command('api')
    .description(
      'Call any operation of the contract by its operationId (archaudit api OPERATION_ID --help).',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  archaudit api listRepositories --param limit=10\n  archaudit api getAudit --param audit_id=$AUDIT_ID\n  archaudit api proposeDecision --body decision.json',
    );
  const ops = [...operationsOf(bundledContract()).values()].sort((a, b) =>
    a.operationId.localeCompare(b.operationId),
  );
  for (const e of ops) {
    api
      .command(e.operationId)
      .summary(`${e.method.toUpperCase()} ${e.path} (${scopeOf(e.op)})`)
      .description(String(e.op.summary ?? e.operationId))
      .option('--param <name=value>', 'a path, query or header parameter (repeatable)', collect, [])
      .option('--body <file>', 'request body: a file, or - for stdin')
      .addOption(
        new Option('--content-type <type>', 'content type of a non-JSON body').choices(
          bodyTypes(e).filter((t) => t !== 'application/json'),
        ),
      )
      .option('--output <file>', 'write the response body to a file')
      .addHelpText('after', helpOf(e))
      .action(
        (
          o: { param: string[]; body?: string; contentType?: string; output?: string },
          cmd: Command,
        ) => call(e, o, cmd),
      );
  }
}
