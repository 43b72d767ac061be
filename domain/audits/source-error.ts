/**
 * A refusal of the source itself (unknown branch, unsafe archive...): not worth retrying. The
 * audit fails with `code` as its error_code and `message` in its log.
 */
export class SourceError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'SourceError';
  }
}
