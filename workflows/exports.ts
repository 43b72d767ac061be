/**
 * ExportWorkflow: renders one audit export into a stored file. The rendering activity retries
 * on passing faults; when it keeps failing, the export is marked failed, so no export stays
 * queued for ever.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { ExportActivities } from '../activities/exports';

const { renderExport, failExport } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

export interface ExportWorkflowInput {
  exportId: string;
}

export async function ExportWorkflow(
  input: ExportWorkflowInput,
): Promise<{ status: string; sha256: string | null }> {
  try {
    return await renderExport(input.exportId);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const code =
      cause instanceof ApplicationFailure && cause.type ? cause.type : 'export_render_failed';
    await failExport(input.exportId, code, cause instanceof Error ? cause.message : String(cause));
    return { status: 'failed', sha256: null };
  }
}
