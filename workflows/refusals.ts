/**
 * How the workflows that own a lifecycle (decisions, remediations, workflow actions) refuse an
 * Update: a refusal travels as a non-retryable ApplicationFailure whose type is the problem code
 * and whose first detail is the refusal, which the API turns into its problem response.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

/** Refuses an Update (from its validator) with `refusal`. */
export function refuse(refusal: { code: string }): never {
  throw ApplicationFailure.create({
    type: refusal.code,
    message: `refused: ${refusal.code}`,
    nonRetryable: true,
    details: [refusal],
  });
}

/**
 * A refusal found by the activity that applies an Update (a stale version, a race) fails the
 * Update, not the run: rethrown as the Update's own failure. Any other error is returned as it is.
 */
export function asUpdateFailure(err: unknown): unknown {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure)
    return ApplicationFailure.create({
      type: err.cause.type ?? 'internal',
      message: err.cause.message,
      nonRetryable: true,
      details: err.cause.details ?? [],
    });
  return err;
}
