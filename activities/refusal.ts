/**
 * A move an activity refuses under its row lock (the state changed since the workflow validated
 * it): a non-retryable failure whose type is the problem code and whose first detail is the
 * refusal, which the workflow hands to the API as the Update's failure.
 */
import { ApplicationFailure } from '@temporalio/activity';

export function refusal(r: { code: string }): never {
  throw ApplicationFailure.create({
    type: r.code,
    message: `refused: ${r.code}`,
    nonRetryable: true,
    details: [r],
  });
}
