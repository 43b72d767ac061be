/**
 * Which database errors mean "PostgreSQL is unreachable or restarting" (worth retrying later)
 * rather than "this statement is wrong" (constraint violations, bad input: retrying repeats it).
 */

/** Node socket errors of a connection that could not be made or was cut. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/**
 * SQLSTATEs of a server going away or not yet accepting: class 08 (connection exception),
 * 57P01..57P03 (admin / crash shutdown, cannot connect now) and 53300 (too many connections).
 */
function unavailableSqlState(code: string): boolean {
  return code.startsWith('08') || /^57P0[1-3]$/.test(code) || code === '53300';
}

/** Messages node-postgres gives a client whose connection ended under it. */
const ENDED = /Connection terminated|connection error and is not queryable|Connection ended/i;

interface ErrorLike {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** True when `err` (or an error it wraps) says the database cannot be reached now. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e = err as ErrorLike | undefined;
  for (let depth = 0; e && depth < 5; depth++) {
    // The pool waited its acquire timeout for a connection that never came.
    if (e.name === 'KnexTimeoutError') return true;
    if (typeof e.code === 'string' && (SOCKET_CODES.has(e.code) || unavailableSqlState(e.code)))
      return true;
    if (typeof e.message === 'string' && ENDED.test(e.message)) return true;
    if (e instanceof AggregateError && e.errors.some(isDatabaseUnavailable)) return true;
    e = e.cause as ErrorLike | undefined;
  }
  return false;
}
