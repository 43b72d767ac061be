/**
 * AssistantRunWorkflow answers one question (workflow id `assistant-run-<run id>`): begin the
 * run, route it and answer from the cache or the graph specialist, else ask the model through
 * read-only tools (retried with backoff on model errors that a retry can help), and record the
 * end. A cancel ends the run `cancelled` in a non-cancellable scope. Deterministic: all I/O is in
 * activities.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
} from '@temporalio/workflow';
import type { AssistantActivities } from '../activities/assistant';
import { errorCodeOf } from './audits';

export interface AssistantRunInput {
  runId: string;
}

/** Model errors no retry can fix (the request itself is wrong, or a bound was reached). */
const NON_RETRYABLE = [
  'model_request_rejected',
  'model_bad_response',
  'model_not_configured',
  'output_token_limit',
  'run_not_found',
  'snapshot_gone',
];

export async function AssistantRunWorkflow(
  input: AssistantRunInput,
): Promise<{ status: string; errorCode: string | null }> {
  const book = proxyActivities<AssistantActivities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
  });
  const model = proxyActivities<AssistantActivities>({
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '30 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '20 seconds',
      maximumAttempts: 3,
      nonRetryableErrorTypes: NON_RETRYABLE,
    },
  });
  const { runId } = input;
  try {
    if (!(await book.beginAssistantRun(runId))) return { status: 'ended', errorCode: null };
    const outcome = await book.answerAssistantRunFromGraph(runId);
    if (outcome !== 'needs_model')
      return { status: outcome === 'refused' ? 'refused' : 'completed', errorCode: null };
    await model.answerAssistantRunWithModel(runId);
    return { status: 'completed', errorCode: null };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() =>
        book.endAssistantRun({ runId, status: 'cancelled', errorCode: 'cancelled' }),
      );
      throw err;
    }
    const code = errorCodeOf(err);
    const message =
      err instanceof ActivityFailure && err.cause instanceof ApplicationFailure
        ? err.cause.message
        : String(err);
    await book.endAssistantRun({ runId, status: 'failed', errorCode: code, errorMessage: message });
    return { status: 'failed', errorCode: code };
  }
}
