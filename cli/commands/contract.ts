/** `archaudit contract check|get`: download the served contract, validate it, compare it. */
import fs from 'node:fs';
import type { Command } from 'commander';
import { problemFrom } from '../client';
import { bundledContract, diffContracts, operationsOf, outsideBounds, type Doc } from '../contract';
import { CliError, EXIT } from '../exit-codes';
import { asJson, contextOf, type Ctx } from '../output';

async function download(ctx: Ctx): Promise<Doc> {
  const r = await ctx.api.raw('GET', '/v1/openapi.json');
  if (r.status !== 200) throw problemFrom(r.status, r.json);
  if (!r.json || typeof r.json !== 'object')
    throw new CliError('GET /v1/openapi.json did not answer a JSON document.');
  return r.json as Doc;
}

function readDoc(file: string, what: string): Doc {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Doc;
  } catch (err) {
    throw new CliError(
      `${what} ${file} is not readable JSON: ${(err as Error).message}`,
      EXIT.usage,
    );
  }
}

/** Problems that make `doc` no OpenAPI 3.1 document (empty when it is one). */
async function validationErrors(doc: Doc): Promise<string[]> {
  if (typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.1.'))
    return [`openapi is ${JSON.stringify(doc.openapi)}, not 3.1.x`];
  const { Validator } = await import('@seriousme/openapi-schema-validator');
  const result = await new Validator().validate(doc as never);
  if (result.valid) return [];
  const errors = Array.isArray(result.errors) ? result.errors : [result.errors];
  return errors.slice(0, 20).map((e) => {
    const x = e as { instancePath?: string; message?: string };
    return `${x.instancePath || '/'}: ${x.message ?? JSON.stringify(e)}`;
  });
}

export function registerContract(program: Command): void {
  const contract = program.command('contract').description('The OpenAPI 3.1 contract of the API.');

  contract
    .command('get')
    .description('Download the served contract (GET /v1/openapi.json, public).')
    .option('--output <file>', 'write it to a file instead of stdout')
    .addHelpText('after', '\nExample:\n  archaudit contract get --output openapi.json')
    .action(async (o: { output?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const doc = await download(ctx);
      if (o.output) fs.writeFileSync(o.output, asJson(doc));
      else ctx.out(asJson(doc));
    });

  contract
    .command('check')
    .description(
      'Download the served contract, validate it as OpenAPI 3.1 and compare it with the contract this CLI was generated from (or --against FILE). Removed operations, newly required fields or parameters, narrowed enums and changed scopes are breaking (exit 1); additions are reported (exit 0).',
    )
    .option(
      '--against <file>',
      'the baseline to compare with (default: the contract bundled with this CLI)',
    )
    .option('--file <file>', 'check this document instead of downloading the served one')
    .addHelpText(
      'after',
      '\nExamples:\n  archaudit contract check\n  archaudit contract check --against pinned-openapi.json --json',
    )
    .action(async (o: { against?: string; file?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const doc = o.file ? readDoc(o.file, '--file') : await download(ctx);
      const base = o.against ? readDoc(o.against, '--against') : bundledContract();
      const source = o.file ?? `${ctx.api.env.base.origin}/v1/openapi.json`;
      const invalid = await validationErrors(doc);
      const refused = outsideBounds(doc, ctx.api.env.base.origin);
      const changes = invalid.length ? [] : diffContracts(base, doc);
      const breaking = [
        ...refused.map((text) => ({ kind: 'breaking' as const, operation: null, text })),
        ...changes.filter((c) => c.kind === 'breaking'),
      ];
      const additions = changes.filter((c) => c.kind === 'addition');
      const info = (d: Doc) => (d.info ?? {}) as { version?: string };
      if (ctx.json) {
        ctx.out(
          asJson({
            source,
            version: info(doc).version ?? null,
            valid: invalid.length === 0,
            validation_errors: invalid,
            baseline: o.against ?? 'bundled',
            baseline_version: info(base).version ?? null,
            operations: operationsOf(doc).size,
            breaking,
            additions,
          }),
        );
      } else {
        const lines = [
          `contract: ${source} (version ${info(doc).version ?? '?'}, ${operationsOf(doc).size} operations)`,
          invalid.length ? `NOT a valid OpenAPI 3.1 document:` : 'valid OpenAPI 3.1',
          ...invalid.map((e) => `  - ${e}`),
          `baseline: ${o.against ?? 'the contract bundled with this CLI'} (version ${info(base).version ?? '?'}, ${operationsOf(base).size} operations)`,
          `breaking changes: ${breaking.length}`,
          ...breaking.map((c) => `  - ${c.operation ? `${c.operation}: ` : ''}${c.text}`),
          `additions: ${additions.length}`,
          ...additions.map((c) => `  + ${c.operation ? `${c.operation}: ` : ''}${c.text}`),
        ];
        ctx.out(lines.join('\n'));
      }
      if (invalid.length || breaking.length) process.exitCode = EXIT.failure;
    });
}
