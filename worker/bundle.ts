/**
 * The workflow code as one pre-built bundle. Production images build it once
 * (`npm run bundle:workflows`) and set WORKFLOW_BUNDLE, so a worker starts without running the
 * bundler; without it the worker bundles `workflows/` itself at start (development, tests).
 */
import { bundleWorkflowCode } from '@temporalio/worker';

export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * Temporal's OpenTelemetry workflow interceptors. Always in a pre-built bundle (a bundle cannot
 * gain them later), so its worker registers their span sink whether tracing is on or not.
 */
export const TRACING_INTERCEPTORS =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/** Bundles the workflows (the same bundle the worker would make at start). */
export async function buildWorkflowBundle(): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [TRACING_INTERCEPTORS],
  });
  return code;
}
