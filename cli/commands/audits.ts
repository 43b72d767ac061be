/** `archaudit audit run|gate|logs` and `archaudit diagram`. */
import fs from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { CHANGE_GATE_OUTCOMES, type ChangeGateOutcome } from '../../domain/contract/values';
import { collectPages, ProblemError, unwrap, type Api } from '../client';
import { CliError, EXIT } from '../exit-codes';
import type { components } from '../generated/api';
import { asJson, fields, printRecord, table, withWorkspace, type Ctx } from '../output';
import { resolveRepository } from './repos';
import { parseId, parseSeconds } from './shared';

type Audit = components['schemas']['AuditResponse'];
type Gate = components['schemas']['AuditGateResponse'];

const FAILING_OUTCOMES = CHANGE_GATE_OUTCOMES.filter((o) => o !== 'pass');
const OUTCOME_EXIT: Record<ChangeGateOutcome, number> = {
  pass: EXIT.ok,
  review: EXIT.review,
  blocked: EXIT.blocked,
  insufficient_evidence: EXIT.insufficientEvidence,
};

/** `--fail-on review,blocked`: the outcomes that fail (exit non-zero). */
export function parseFailOn(values: string[]): Set<ChangeGateOutcome> {
  const out = new Set<ChangeGateOutcome>();
  for (const v of values
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter(Boolean)) {
    if (!(FAILING_OUTCOMES as readonly string[]).includes(v))
      throw new CliError(
        `--fail-on takes ${FAILING_OUTCOMES.join(', ')} (comma-separated); got ${v}.`,
        EXIT.usage,
      );
    out.add(v as ChangeGateOutcome);
  }
  return out;
}

/** An answer that is not what the contract promises: a CI step must not read it as a pass. */
function unexpectedAnswer(what: string): CliError {
  return new CliError(
    `${what}: the API's answer is not the one the contract describes (is ARCHAUDIT_URL the archaudit API?); no verdict.`,
  );
}

/** The exit code for a gate outcome under --fail-on. */
export function gateExit(outcome: ChangeGateOutcome, failOn: Set<ChangeGateOutcome>): number {
  return failOn.has(outcome) ? OUTCOME_EXIT[outcome] : EXIT.ok;
}

const audit = (api: Api, ws: string, id: string) =>
  api.typed.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}', {
    params: { path: { workspace_id: ws, audit_id: id } },
  });

/** The audit's gate, or null when it has none (yet). */
async function gateOf(api: Api, ws: string, id: string): Promise<Gate | null> {
  const r = await api.typed.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/gate', {
    params: { path: { workspace_id: ws, audit_id: id } },
  });
  if (r.response.status === 404) {
    unwrap(await audit(api, ws, id)); // an unknown audit is the audit's 404, not the gate's
    return null;
  }
  return unwrap(r) as Gate;
}

async function summary(ctx: Ctx, ws: string, a: Audit) {
  const p = { path: { workspace_id: ws, audit_id: a.id } };
  const arch = await ctx.api.typed.GET(
    '/v1/workspaces/{workspace_id}/audits/{audit_id}/architecture',
    { params: p },
  );
  const findings = await collectPages(
    10_000,
    async (cursor, limit) =>
      unwrap(
        await ctx.api.typed.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/findings', {
          params: { ...p, query: { cursor, limit } },
        }),
      ),
    ctx.api.bounds.pageSize,
  );
  const bySeverity: Record<string, number> = { high: 0, medium: 0, low: 0 };
  for (const f of findings) bySeverity[f.severity] = (bySeverity[f.severity] ?? 0) + 1;
  const cost = await ctx.api.typed.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/cost', {
    params: p,
  });
  const gate = await gateOf(ctx.api, ws, a.id);
  return {
    status: a.status,
    entities: arch.data?.entity_count ?? null,
    relationships: arch.data?.relationship_count ?? null,
    findings: bySeverity,
    gate: gate?.outcome ?? null,
    cost_usd: cost.data?.cost_usd ?? null,
    model_calls: cost.data?.model_calls ?? null,
  };
}

interface RunOptions {
  repo?: string;
  path?: string;
  branch?: string;
  commit?: string;
  deepReview?: boolean;
  wait?: boolean;
  timeout: string;
}

async function startAudit(ctx: Ctx, ws: string, o: RunOptions): Promise<Audit> {
  if (!o.repo && !o.path)
    throw new CliError(
      "Give --repo NAME|ID, --path DIR, or both (a folder of that repository: its findings are the repository's).",
      EXIT.usage,
    );
  if (o.path && (o.branch !== undefined || o.commit !== undefined))
    throw new CliError(
      '--branch and --commit apply to a repository audit, not to --path.',
      EXIT.usage,
    );
  // Both: exactly that commit, recorded as on that branch (a pull request's head: its gate then
  // compares with the default branch at the merge-base).
  if (o.branch !== undefined && o.branch.trim() === '')
    throw new CliError('--branch is empty: give a branch name, or leave the flag out.', EXIT.usage);
  if (o.commit !== undefined && !/^[0-9a-f]{40}$/i.test(o.commit))
    throw new CliError(
      `--commit must be a full 40-hex commit sha; got ${JSON.stringify(o.commit.slice(0, 80))}.`,
      EXIT.usage,
    );
  const body: components['schemas']['AuditCreate'] = {
    ...(o.branch ? { branch_ref: o.branch } : {}),
    ...(o.commit ? { commit_sha: o.commit.toLowerCase() } : {}),
    ...(o.deepReview ? { deep_review: true } : {}),
  };
  if (o.repo) body.repository_id = await resolveRepository(ctx, o.repo);
  if (o.path) {
    const dir = path.resolve(o.path!);
    // Loaded when used: `--help` and the other commands do not parse tar-stream and ignore.
    const { packFolder } = await import('../pack.js');
    const packed = await packFolder(dir);
    ctx.note(
      `packed ${packed.files} files from ${dir} (${packed.bytes.length} bytes, .gitignore applied${
        packed.skippedLinks ? `, ${packed.skippedLinks} symbolic links left out` : ''
      })`,
    );
    const upload = unwrap(
      await ctx.api.typed.POST('/v1/workspaces/{workspace_id}/uploads', {
        params: {
          path: { workspace_id: ws },
          query: { filename: `${path.basename(dir) || 'source'}.tar.gz` },
        },
        body: packed.bytes as never,
        bodySerializer: (b: unknown) => b as Uint8Array,
        headers: { 'Content-Type': 'application/gzip' },
      }),
    );
    body.upload_id = upload.id;
  }
  return unwrap(
    await ctx.api.typed.POST('/v1/workspaces/{workspace_id}/audits', {
      params: { path: { workspace_id: ws } },
      body,
    }),
  );
}

function registerRun(auditCmd: Command): void {
  auditCmd
    .command('run')
    .description(
      'Start an audit of a registered repository or of a local folder (scope audits:write; --path also uploads:write).',
    )
    .option('--repo <name|id>', 'a registered repository')
    .option(
      '--path <dir>',
      "a local folder, packed (respecting .gitignore) and uploaded; with --repo, a folder of that repository (its findings join the repository's; it resolves none)",
    )
    .option('--branch <ref>', 'branch or ref to audit')
    .option('--commit <sha>', 'commit to audit (40 hex); with --branch, recorded as on that branch')
    .option('--deep-review', 'also run the model-backed review agents')
    .option('--wait', 'follow the stages and agent runs until the audit ends, then print a summary')
    .addOption(
      new Option('--timeout <s>', 'with --wait: give up waiting after this many seconds').default(
        '1800',
      ),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  archaudit audit run --repo orders --branch main --wait\n  archaudit audit run --path . --wait --timeout 900\n  archaudit audit run --path . --repo orders --wait\n\nWith --wait the exit code is 0 when the audit completed, 1 when it failed, was cancelled or --timeout passed.',
    )
    .action(async (o: RunOptions, cmd: Command) => {
      const timeoutMs = parseSeconds('--timeout', o.timeout) * 1000;
      const { ctx, ws } = await withWorkspace(cmd);
      const started = await startAudit(ctx, ws, o);
      if (!o.wait) {
        printRecord(ctx, started, (a) => [
          ['audit', a.id],
          ['status', a.status],
          ['follow', `archaudit audit logs ${a.id} --follow`],
        ]);
        return;
      }
      if (!ctx.json) ctx.out(`audit ${started.id} started`);
      const live = process.stdout.isTTY && !process.env.CI && !ctx.json;
      // Loaded when used (listr2 is the CLI's largest module after the contract validator).
      const { listrSink, plainSink, watchAudit } = await import('../progress.js');
      let result;
      if (live) {
        const { sink, done, stop } = listrSink(started.stages.map((s) => s.key));
        try {
          result = await watchAudit(ctx.api, ws, started.id, sink, timeoutMs);
        } finally {
          stop();
          await done;
        }
      } else {
        // Plain lines: on stdout for people reading a CI log, on stderr under --json.
        result = await watchAudit(
          ctx.api,
          ws,
          started.id,
          plainSink(ctx.json ? ctx.note : ctx.out),
          timeoutMs,
        );
      }
      const s = await summary(ctx, ws, result.audit);
      if (ctx.json) ctx.out(asJson({ audit: result.audit, summary: s }));
      else
        ctx.out(
          fields([
            ['audit', result.audit.id],
            ['status', result.timedOut ? `${s.status} (still running after --timeout)` : s.status],
            ['entities', s.entities],
            ['relationships', s.relationships],
            [
              'findings',
              `high ${s.findings.high}, medium ${s.findings.medium}, low ${s.findings.low}`,
            ],
            ['gate', s.gate ?? 'none'],
            ['cost', s.cost_usd === null ? null : `$${s.cost_usd} (${s.model_calls} model calls)`],
          ]),
        );
      if (result.timedOut)
        throw new CliError(
          `Stopped waiting after ${o.timeout}s; the audit goes on (archaudit audit logs ${result.audit.id} --follow).`,
        );
      if (result.audit.status !== 'completed') process.exitCode = EXIT.failure;
    });
}

const GATE_FORMATS = ['text', 'json', 'sarif', 'junit', 'markdown'] as const;

function gateText(g: Gate): string {
  const flagged = g.changes.filter((c) => c.consequence !== 'informational');
  const lines = [
    `gate: ${g.outcome} (policy version ${g.policy_version}${g.policy_enabled ? '' : ', disabled'})`,
    ...g.reasons.map((r) => `  - ${r.text}`),
  ];
  if (flagged.length)
    lines.push(
      '',
      table(
        ['change', 'key', 'consequence'],
        flagged.map((c) => [c.change_type, c.key, c.consequence]),
      ).trimEnd(),
    );
  return lines.join('\n');
}

function registerGate(auditCmd: Command): void {
  auditCmd
    .command('gate')
    .description(
      "The audit's change gate, for CI: the exit code says the outcome (scope audits:read).",
    )
    .argument('<audit>', 'audit id')
    .option(
      '--fail-on <outcomes...>',
      'outcomes that fail, comma-separated: review, blocked, insufficient_evidence',
      ['review,blocked,insufficient_evidence'],
    )
    .addOption(
      new Option('--format <format>', 'text, json, sarif, junit or markdown')
        .choices(GATE_FORMATS)
        .default('text'),
    )
    .option(
      '--output <file>',
      'write the rendering to a file (the outcome line still goes to stderr)',
    )
    .addHelpText(
      'after',
      `\nExit codes: 0 pass (or an outcome --fail-on leaves out), 10 review, 11 blocked, 12 insufficient_evidence,\n  1 no gate yet / unknown audit, 2 usage, 3 transport or auth.\n\nExamples:\n  archaudit audit gate $AUDIT_ID\n  archaudit audit gate $AUDIT_ID --fail-on blocked --format sarif --output gate.sarif`,
    )
    .action(
      async (
        auditId: string,
        o: { failOn: string[]; format: (typeof GATE_FORMATS)[number]; output?: string },
        cmd: Command,
      ) => {
        const failOn = parseFailOn(o.failOn);
        auditId = parseId(auditId, 'audit');
        const { ctx, ws } = await withWorkspace(cmd);
        const gate = await gateOf(ctx.api, ws, auditId);
        if (!gate) {
          const a = unwrap(await audit(ctx.api, ws, auditId));
          if (a?.id !== auditId || typeof a.status !== 'string')
            throw unexpectedAnswer(`GET audit ${auditId}`);
          if (a.status === 'queued' || a.status === 'running')
            throw new CliError(
              `Audit ${a.id} is ${a.status}: its gate is computed by the changes stage. Wait for it (archaudit audit run --wait) and ask again.`,
            );
          // An ended audit without a gate: no verdict was given, so the step fails whatever
          // --fail-on says (only an evaluated gate that passes exits 0).
          throw new CliError(
            `Audit ${a.id} ${a.status} without a change gate: no verdict on the change (exit 1 whatever --fail-on says).`,
          );
        }
        if (gate?.audit_id !== auditId || !CHANGE_GATE_OUTCOMES.includes(gate.outcome))
          throw unexpectedAnswer(`GET audit ${auditId} gate`);
        let rendering: string;
        if (o.format === 'text') rendering = ctx.json ? asJson(gate) : `${gateText(gate)}\n`;
        else if (o.format === 'json') rendering = asJson(gate);
        else {
          const r = await ctx.api.raw(
            'GET',
            `/v1/workspaces/${ws}/audits/${encodeURIComponent(auditId)}/gate`,
            {
              query: { format: o.format },
            },
          );
          if (r.status !== 200) throw new ProblemError({ status: r.status, ...(r.json as object) });
          rendering = r.text.endsWith('\n') ? r.text : `${r.text}\n`;
        }
        if (o.output) {
          fs.writeFileSync(o.output, rendering);
          ctx.note(`gate: ${gate.outcome} (${o.format} written to ${o.output})`);
        } else ctx.out(rendering);
        process.exitCode = gateExit(gate.outcome, failOn);
      },
    );
}

function registerLogs(auditCmd: Command): void {
  auditCmd
    .command('logs')
    .description(
      "An audit's log (scope audits:read); --follow keeps printing until the audit ends.",
    )
    .argument('<audit>', 'audit id')
    .addOption(
      new Option('--level <level>', 'only this level').choices(['info', 'warning', 'error']),
    )
    .option('--follow', 'poll for new lines until the audit ends')
    .addHelpText('after', '\nExample:\n  archaudit audit logs $AUDIT_ID --follow')
    .action(
      async (
        auditId: string,
        o: { level?: 'info' | 'warning' | 'error'; follow?: boolean },
        cmd: Command,
      ) => {
        auditId = parseId(auditId, 'audit');
        const { ctx, ws } = await withWorkspace(cmd);
        const seen = new Set<string>();
        let since: string | undefined;
        for (;;) {
          const status = o.follow ? unwrap(await audit(ctx.api, ws, auditId)).status : undefined;
          const logs = unwrap(
            await ctx.api.typed.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}/logs', {
              params: {
                path: { workspace_id: ws, audit_id: auditId },
                query: { level: o.level, since, limit: 5000 },
              },
            }),
          );
          for (const l of logs.items) {
            const key = JSON.stringify(l);
            if (seen.has(key)) continue;
            seen.add(key);
            since = l.occurred_at;
            ctx.out(
              ctx.json
                ? JSON.stringify(l)
                : `${l.occurred_at} ${l.level.padEnd(7)} ${l.source.padEnd(12)} ${l.message}`,
            );
          }
          if (!o.follow || (status && !['queued', 'running'].includes(status))) return;
          await new Promise((r) => setTimeout(r, 2000));
        }
      },
    );
}

export function registerAudits(program: Command): void {
  const auditCmd = program.command('audit').description('Run audits, read their gate and logs.');
  registerRun(auditCmd);
  registerGate(auditCmd);
  registerLogs(auditCmd);

  program
    .command('diagram')
    .description("The audit's architecture diagram as Mermaid source or SVG (scope audits:read).")
    .argument('<audit>', 'audit id')
    .addOption(
      new Option('--format <format>', 'mermaid or svg')
        .choices(['mermaid', 'svg'])
        .default('mermaid'),
    )
    .option('--output <file>', 'write to a file instead of stdout')
    .addHelpText(
      'after',
      '\nExample:\n  archaudit diagram $AUDIT_ID --format svg --output architecture.svg',
    )
    .action(
      async (auditId: string, o: { format: 'mermaid' | 'svg'; output?: string }, cmd: Command) => {
        auditId = parseId(auditId, 'audit');
        const { ctx, ws } = await withWorkspace(cmd);
        const r = await ctx.api.raw(
          'GET',
          `/v1/workspaces/${ws}/audits/${encodeURIComponent(auditId)}/architecture/diagram`,
          {
            query: { format: o.format },
          },
        );
        if (r.status !== 200) throw new ProblemError({ status: r.status, ...(r.json as object) });
        if (o.output) fs.writeFileSync(o.output, r.text);
        else ctx.out(r.text);
      },
    );
}
