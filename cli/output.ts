/**
 * What the CLI prints: JSON for machines (--json), aligned tables for people, notes on stderr.
 * Everything printed passes through domain/output/terminal: text from the server (repository
 * paths, finding titles, decision text) never reaches the terminal with an escape sequence.
 */
import type { Command } from 'commander';
import { Api, DEFAULT_BOUNDS, readEnvironment, type Bounds } from './client';
import { terminalCell, terminalJson, terminalText } from '../domain/output/terminal';
import { CliError, EXIT } from './exit-codes';

export interface Ctx {
  api: Api;
  json: boolean;
  /** A line (or block) on stdout. */
  out(text: string): void;
  /** A note on stderr (progress, retries). */
  note(text: string): void;
}

interface GlobalOptions {
  json?: boolean;
  requestTimeout?: string;
  deadline?: string;
  retries?: string;
  maxResponseBytes?: string;
  pageSize?: string;
}

function positive(name: string, value: string | undefined, fallback: number, scale = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new CliError(`${name} must be a number >= 0.`, EXIT.usage);
  return n * scale;
}

/** The context of a command: its global options and a client for the environment's API. */
export function contextOf(cmd: Command): Ctx {
  const o = cmd.optsWithGlobals<GlobalOptions>();
  const bounds: Bounds = {
    requestTimeoutMs: positive(
      '--request-timeout',
      o.requestTimeout,
      DEFAULT_BOUNDS.requestTimeoutMs,
      1000,
    ),
    deadlineMs: positive('--deadline', o.deadline, DEFAULT_BOUNDS.deadlineMs, 1000),
    retries: positive('--retries', o.retries, DEFAULT_BOUNDS.retries),
    maxResponseBytes: positive(
      '--max-response-bytes',
      o.maxResponseBytes,
      DEFAULT_BOUNDS.maxResponseBytes,
    ),
    pageSize: Math.min(
      200,
      Math.max(1, positive('--page-size', o.pageSize, DEFAULT_BOUNDS.pageSize)),
    ),
  };
  const note = (text: string) => process.stderr.write(`${terminalText(text)}\n`);
  return {
    api: new Api(readEnvironment(process.env), bounds, note),
    json: o.json === true,
    out: (text: string) => {
      const safe = terminalText(text);
      process.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
    },
    note,
  };
}

/** The context of a command that needs a token, with the token's workspace id. */
export async function withWorkspace(cmd: Command): Promise<{ ctx: Ctx; ws: string }> {
  const ctx = contextOf(cmd);
  ctx.api.requireToken();
  return { ctx, ws: await ctx.api.workspaceId() };
}

/** Pretty JSON, the --json form of every command. */
export function asJson(value: unknown): string {
  return terminalJson(value);
}

export type Cell = string | number | boolean | null | undefined;

/** An aligned text table; `(none)` for no rows. */
export function table(headers: string[], rows: Cell[][]): string {
  if (rows.length === 0) return '(none)\n';
  const text = rows.map((r) =>
    r.map((c) => (c === null || c === undefined ? '-' : terminalCell(String(c)))),
  );
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(headers.map((h) => h.toUpperCase())), ...text.map(line)].join('\n')}\n`;
}

/** A list: JSON under --json, else a table with one row per item. */
export function printList<T>(
  ctx: Ctx,
  items: T[],
  headers: string[],
  row: (item: T) => Cell[],
): void {
  ctx.out(ctx.json ? asJson(items) : table(headers, items.map(row)));
}

/** One record: JSON under --json, else `key: value` lines. */
export function printRecord<T>(ctx: Ctx, record: T, pairs: (r: T) => Array<[string, Cell]>): void {
  ctx.out(ctx.json ? asJson(record) : fields(pairs(record)));
}

/** `key: value` lines, aligned. */
export function fields(pairs: Array<[string, Cell]>): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return `${pairs.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${v === null || v === undefined ? '-' : terminalCell(String(v))}`).join('\n')}\n`;
}

/** Replaces every occurrence of `secret` in what the process writes (a last line of defence). */
export function redactOutput(secret: string | undefined): void {
  if (!secret) return;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string') chunk = chunk.split(secret).join('[redacted token]');
      else if (chunk instanceof Uint8Array && Buffer.from(chunk).includes(secret))
        chunk = Buffer.from(chunk).toString('utf8').split(secret).join('[redacted token]');
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}
