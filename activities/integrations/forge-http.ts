/**
 * Calls to a forge's REST API: only under the integration's configured base URL, to addresses the
 * source policy allows (every address the host resolves to is checked and the connection is
 * pinned to the checked one, so DNS rebinding cannot redirect it), with a deadline and a bounded
 * answer. The token travels in a header only; no error message carries it (nor the answer's body
 * beyond the forge's short `message`).
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { resolvedAddressProblem, type SourcePolicy } from '../../domain/repositories/source-policy';

/** A forge call's deadline. */
const TIMEOUT_MS = 15_000;
/** The largest answer read (comment lists are paged at 100). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export interface ForgeAnswer {
  status: number;
  body: unknown;
}

/** Why a call could not be made or answered: `retryable` for outages, not for refusals. */
export class ForgeError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly retryable: boolean,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** A lookup that answers only with addresses the policy allows (all must be). */
function checkedLookup(policy: SourcePolicy): LookupFunction {
  return (hostname, options, callback) => {
    const done = (err: Error | null, addresses: dns.LookupAddress[]) => {
      if (err) return callback(err, '', 4);
      for (const a of addresses) {
        const problem = resolvedAddressProblem(policy, hostname, a.address);
        if (problem !== null)
          return callback(new ForgeError(problem, 'forge_host_not_allowed', false), '', 4);
      }
      const first = addresses[0];
      if (!first)
        return callback(
          new ForgeError(`${hostname} does not resolve`, 'forge_unreachable', true),
          '',
          4,
        );
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, [first]);
      callback(null, first.address, first.family);
    };
    const literal = isIP(hostname);
    if (literal) return done(null, [{ address: hostname, family: literal }]);
    dns.lookup(hostname, { all: true, verbatim: true }, (err, addresses) => done(err, addresses));
  };
}

/** A JSON request to `baseUrl` + `path`. */
export function forgeRequest(
  policy: SourcePolicy,
  baseUrl: string,
  request: {
    method: 'GET' | 'POST' | 'PATCH' | 'PUT';
    path: string;
    headers: Record<string, string>;
    body?: unknown;
  },
): Promise<ForgeAnswer> {
  const url = new URL(baseUrl.replace(/\/+$/, '') + request.path);
  const payload =
    request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  const where = `${request.method} ${url.origin}${url.pathname}`;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: request.method,
        lookup: checkedLookup(policy),
        timeout: TIMEOUT_MS,
        headers: {
          Accept: 'application/json',
          'User-Agent': 'archaudit',
          ...(payload
            ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) }
            : {}),
          ...request.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            req.destroy(
              new ForgeError(
                `${where}: answer over ${MAX_ANSWER_BYTES} bytes`,
                'forge_answer_too_large',
                false,
              ),
            );
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = null;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            body = null;
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', (err) => reject(asForgeError(err, where)));
      },
    );
    req.on('timeout', () =>
      req.destroy(
        new ForgeError(`${where}: no answer within ${TIMEOUT_MS} ms`, 'forge_timeout', true),
      ),
    );
    req.on('error', (err) => reject(asForgeError(err, where)));
    req.end(payload);
  });
}

function asForgeError(err: unknown, where: string): ForgeError {
  if (err instanceof ForgeError)
    return new ForgeError(`${where}: ${err.message}`, err.code, err.retryable);
  const code = (err as { code?: string }).code ?? 'error';
  return new ForgeError(`${where}: ${code}`, 'forge_unreachable', true);
}

/** The error for an answer that is not a success: outages retry, refusals do not. */
export function answerError(where: string, answer: ForgeAnswer): ForgeError {
  const said = (answer.body as { message?: unknown } | null)?.message;
  const message = typeof said === 'string' ? `: ${said.slice(0, 200)}` : '';
  // GitHub answers its secondary rate limits with 403 and a message that says so.
  const limited = answer.status === 403 && /rate limit/i.test(message);
  const retryable =
    answer.status >= 500 || answer.status === 429 || answer.status === 408 || limited;
  const code =
    (answer.status === 401 || answer.status === 403) && !limited
      ? 'forge_unauthorized'
      : retryable
        ? 'forge_unavailable'
        : 'forge_refused';
  return new ForgeError(
    `${where} answered ${answer.status}${message}`,
    code,
    retryable,
    answer.status,
  );
}
