/** The process exit codes of `archaudit`, one meaning each (README and `--help` list them). */
export const EXIT = {
  ok: 0,
  /** A breaking contract change, an audit that failed, or an API refusal (a 4xx problem). */
  failure: 1,
  /** Bad flags or arguments, including a token given as an argument. */
  usage: 2,
  /** The API could not be reached, timed out, refused the token (401/403) or stayed throttled. */
  transport: 3,
  /** `audit gate` outcomes named by --fail-on. */
  review: 10,
  blocked: 11,
  insufficientEvidence: 12,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0   success; for \`audit gate\`, the outcome is pass (or an outcome --fail-on does not name)
  1   failure: the API refused the request (4xx problem), a breaking contract change, an audit
      that failed or was cancelled, or --wait timed out
  2   usage error (unknown command or flag, bad value, a token given as an argument)
  3   transport or authorization error: unreachable, timeout, 401/403, still throttled (429/503)
      after the retries, response too large, 5xx
  10  audit gate: review
  11  audit gate: blocked
  12  audit gate: insufficient_evidence`;

/** An error the CLI reports as one line (never a stack trace) and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
  }
}
