/**
 * The only way the CLI talks to the service: HTTP under /v1 of ARCHAUDIT_URL, with the token of
 * ARCHAUDIT_TOKEN. Every request is bounded: a timeout per attempt, retries on 429/503 that wait
 * as Retry-After (or the RateLimit header) says but never past a deadline per request, no
 * redirects (the token would follow them), and a cap on the response size.
 */
import crypto from 'node:crypto';
import createClient from 'openapi-fetch';
import type { paths } from './generated/api';
import { CliError, EXIT } from './exit-codes';

export interface Bounds {
  requestTimeoutMs: number;
  /** The most one request may take, its retries and waits included. */
  deadlineMs: number;
  retries: number;
  maxResponseBytes: number;
  /** Items asked for per page when following next_cursor. */
  pageSize: number;
}

export const DEFAULT_BOUNDS: Bounds = {
  requestTimeoutMs: 30_000,
  deadlineMs: 120_000,
  retries: 4,
  maxResponseBytes: 64 * 1024 * 1024,
  pageSize: 200,
};

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface Environment {
  base: URL;
  token: string | undefined;
}

/** Reads ARCHAUDIT_URL and ARCHAUDIT_TOKEN: the only place credentials come from. */
export function readEnvironment(env: NodeJS.ProcessEnv): Environment {
  const text = env.ARCHAUDIT_URL?.trim() || DEFAULT_URL;
  let base: URL;
  try {
    base = new URL(text);
  } catch {
    throw new CliError(`ARCHAUDIT_URL is not a URL (expected e.g. ${DEFAULT_URL}).`, EXIT.usage);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new CliError('ARCHAUDIT_URL must be an http:// or https:// URL.', EXIT.usage);
  if (base.username || base.password)
    throw new CliError(
      'ARCHAUDIT_URL carries credentials; put the token in ARCHAUDIT_TOKEN instead.',
      EXIT.usage,
    );
  if ((base.pathname !== '/' && base.pathname !== '') || base.search || base.hash)
    throw new CliError(
      'ARCHAUDIT_URL must be the server origin only (e.g. https://archaudit.example.com): the CLI adds /v1/... itself.',
      EXIT.usage,
    );
  const token = env.ARCHAUDIT_TOKEN?.trim() || undefined;
  return { base: new URL(base.origin), token };
}

export interface Problem {
  status: number;
  code?: string;
  detail?: string;
  hint?: string;
  request_id?: string;
  errors?: Array<{ path?: string; message?: string }>;
}

/** `code: detail (hint) [request id]`, plus each field error on its own line. */
export function describeProblem(p: Problem): string {
  const head = `${p.code ?? `http_${p.status}`}: ${p.detail ?? 'the API refused the request'}${
    p.hint ? ` (${p.hint})` : ''
  }${p.request_id ? ` [${p.request_id}]` : ''}`;
  const fields = (p.errors ?? []).map((e) => `  ${e.path || '/'}: ${e.message ?? ''}`);
  return [head, ...fields].join('\n');
}

/** 401/403, throttling and server failures are transport/auth errors (3); other 4xx are 1. */
function exitForStatus(status: number): number {
  if (status === 401 || status === 403 || status === 429 || status >= 500) return EXIT.transport;
  return EXIT.failure;
}

export class ProblemError extends CliError {
  constructor(readonly problem: Problem) {
    super(describeProblem(problem), exitForStatus(problem.status));
  }
}

/** A problem from a response body that may or may not be problem+json. */
export function problemFrom(status: number, body: unknown): ProblemError {
  const b = (body && typeof body === 'object' ? body : {}) as Partial<Problem>;
  return new ProblemError({ ...b, status });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Seconds to wait before retrying, from Retry-After, else the RateLimit header, else backoff. */
export function retryDelayMs(headers: Headers, attempt: number, now = Date.now()): number {
  const after = headers.get('retry-after');
  if (after) {
    const seconds = Number(after);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const reset = rateLimitReset(headers);
  if (reset !== null) return reset * 1000;
  return Math.min(30_000, 1000 * 2 ** attempt);
}

/** The reset seconds of a `RateLimit: "default";r=0;t=12` header when nothing remains. */
function rateLimitReset(headers: Headers): number | null {
  const value = headers.get('ratelimit');
  if (!value) return null;
  const r = /(?:^|;)\s*r=(\d+)/.exec(value);
  const t = /(?:^|;)\s*t=(\d+)/.exec(value);
  return r && t && Number(r[1]) === 0 ? Number(t[1]) : null;
}

async function readCapped(res: Response, cap: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? 'NaN');
  if (declared > cap) {
    await res.body?.cancel();
    throw new CliError(`The response is larger than the cap of ${cap} bytes.`, EXIT.transport);
  }
  if (!res.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > cap) {
      await reader.cancel();
      throw new CliError(`The response is larger than the cap of ${cap} bytes.`, EXIT.transport);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export interface RawReply {
  status: number;
  headers: Headers;
  contentType: string;
  bytes: Uint8Array;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: unknown;
}

export interface RawRequest {
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** JSON value, or bytes sent as they are (with headers['Content-Type']). */
  body?: unknown;
}

/** The HTTP side of the CLI: a typed client over a bounded fetch, and a raw request for `api`. */
export class Api {
  readonly typed: ReturnType<typeof createClient<paths>>;
  private pausedUntil = 0;
  private workspace: Promise<string> | undefined;

  constructor(
    readonly env: Environment,
    readonly bounds: Bounds,
    /** Progress notes (retries, waits) for stderr. */
    private readonly note: (line: string) => void,
  ) {
    this.typed = createClient<paths>({ baseUrl: env.base.origin, fetch: this.fetch });
  }

  /** Fails with a clear message when a command that needs a token runs without one. */
  requireToken(): void {
    if (!this.env.token)
      throw new CliError(
        'ARCHAUDIT_TOKEN is not set: create a token (archaudit scopes lists what to ask for) and export ARCHAUDIT_TOKEN=... in the environment.',
        EXIT.transport,
      );
  }

  /** The workspace of the token (a token belongs to exactly one). */
  workspaceId(): Promise<string> {
    this.workspace ??= this.typed.GET('/v1/token').then((r) => unwrap(r).workspace_id);
    return this.workspace;
  }

  /** The bounded fetch every request goes through. */
  readonly fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.origin !== this.env.base.origin || !url.pathname.startsWith('/v1/'))
      throw new CliError(
        `Refused to call ${url.pathname}: archaudit only calls /v1 paths of ARCHAUDIT_URL.`,
        EXIT.usage,
      );
    const headers = new Headers(request.headers);
    if (this.env.token) headers.set('Authorization', `Bearer ${this.env.token}`);
    if (!headers.has('X-Request-ID')) headers.set('X-Request-ID', `cli-${crypto.randomUUID()}`);
    headers.set('User-Agent', 'archaudit-cli');
    const body =
      request.method === 'GET' || request.method === 'HEAD'
        ? undefined
        : new Uint8Array(await request.arrayBuffer());
    const deadline = Date.now() + this.bounds.deadlineMs;
    for (let attempt = 0; ; attempt++) {
      if (this.pausedUntil > Date.now() && this.pausedUntil < deadline) {
        const wait = this.pausedUntil - Date.now();
        this.note(`quota spent (RateLimit r=0): waiting ${Math.ceil(wait / 1000)}s`);
        await sleep(wait);
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new CliError(
          `No answer within the ${this.bounds.deadlineMs / 1000}s deadline.`,
          EXIT.transport,
        );
      let res: Response;
      try {
        res = await fetch(url, {
          method: request.method,
          headers,
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(Math.min(this.bounds.requestTimeoutMs, remaining)),
        });
      } catch (err) {
        throw transportError(err, this.env.base, this.bounds);
      }
      const reset = rateLimitReset(res.headers);
      this.pausedUntil = reset === null ? 0 : Date.now() + reset * 1000;
      if ((res.status === 429 || res.status === 503) && attempt < this.bounds.retries) {
        const wait = retryDelayMs(res.headers, attempt);
        if (Date.now() + wait <= deadline) {
          await res.body?.cancel();
          this.note(
            `${res.status} from ${request.method} ${url.pathname}: retrying in ${Math.ceil(wait / 1000)}s as Retry-After says (retry ${attempt + 1} of ${this.bounds.retries})`,
          );
          await sleep(wait);
          continue;
        }
        this.note(
          `${res.status} from ${request.method} ${url.pathname}: the wait asked for (${Math.ceil(wait / 1000)}s) passes the ${this.bounds.deadlineMs / 1000}s deadline; giving up`,
        );
      }
      if (res.status >= 300 && res.status < 400)
        throw new CliError(
          `The API answered ${res.status} (a redirect to ${res.headers.get('location') ?? 'nowhere'}); archaudit follows no redirects (the token would go along). Check ARCHAUDIT_URL.`,
          EXIT.transport,
        );
      const bytes = await readCapped(res, this.bounds.maxResponseBytes);
      return new Response(bytes.byteLength ? (bytes as unknown as BodyInit) : null, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    }
  };

  /** Any /v1 operation by method and path (for `archaudit api` and the contract download). */
  async raw(method: string, path: string, options: RawRequest = {}): Promise<RawReply> {
    const url = new URL(path, this.env.base);
    for (const [k, v] of Object.entries(options.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers = new Headers(options.headers);
    let body: BodyInit | undefined;
    if (options.body instanceof Uint8Array) body = options.body as unknown as BodyInit;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers.set('Content-Type', 'application/json');
    }
    const res = await this.fetch(new Request(url, { method: method.toUpperCase(), headers, body }));
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    const contentType = res.headers.get('content-type') ?? '';
    let json: unknown;
    if (/json/.test(contentType) && text) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { status: res.status, headers: res.headers, contentType, bytes, text, json };
  }
}

function transportError(err: unknown, base: URL, bounds: Bounds): CliError {
  const e = err as { name?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError')
    return new CliError(
      `No answer from ${base.origin} within ${bounds.requestTimeoutMs / 1000}s.`,
      EXIT.transport,
    );
  if (err instanceof CliError) return err;
  const why = e.cause?.code ?? e.cause?.message ?? 'network error';
  return new CliError(
    `Cannot reach ${base.origin} (${why}). Check ARCHAUDIT_URL and that the API is running.`,
    EXIT.transport,
  );
}

/** The data of an openapi-fetch result, or the problem it carries as an error. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok)
    throw problemFrom(result.response.status, result.error);
  return result.data as T;
}

export interface PageOf<T> {
  items: T[];
  next_cursor?: string | null;
  has_more?: boolean;
}

/** Follows next_cursor until `limit` items (or the last page); each page asks only what is left. */
export async function collectPages<T>(
  limit: number,
  page: (cursor: string | undefined, size: number) => Promise<PageOf<T>>,
  pageSize: number,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  while (out.length < limit) {
    const got = await page(cursor, Math.min(pageSize, limit - out.length));
    out.push(...got.items.slice(0, limit - out.length));
    if (!got.next_cursor) break;
    cursor = got.next_cursor;
  }
  return out;
}
