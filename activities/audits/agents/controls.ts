/**
 * The controls agent (stage `controls`): assesses the built-in catalog against the audit's
 * stored snapshot and file list. Its artifact holds the assessments in terms of the snapshot's
 * evidence uuids, which are per audit; so it is never served from cache (the input is the
 * snapshot, not only the files), and `persistControls` writes the tables from it. The snapshot
 * is read as JSON text and assessed in the analysis pool (analysis/controls-artifact.ts).
 */
import { CONTROL_CATALOG_VERSION } from '../../../analysis/controls';
import { runInPool } from '../../../analysis/pool';
import type { Agent, AgentInput, AgentResult } from './types';
import { AgentError } from './types';

export const controlsAgent: Agent = {
  key: 'controls',
  version: CONTROL_CATALOG_VERSION,
  stage: 'controls',
  modelBacked: false,
  reasoningEffort: 'none',
  costKind: 'analysis',
  input: 'all',
  cacheable: false,
  async run(input: AgentInput): Promise<AgentResult> {
    const snapshot = await input.snapshotText();
    if (!snapshot)
      throw new AgentError(
        'snapshot_missing',
        'The audit has no architecture snapshot to assess.',
        false,
      );
    // In the analysis pool (off the worker's main thread), like the analyzers and reconcile.
    const result = await runInPool(
      { kind: 'controls-artifact', snapshot, files: input.files.map((f) => f.path) },
      input.signal,
    );
    if (result.kind !== 'controls-artifact')
      throw new Error('the analysis pool answered another task');
    const { artifact, summary, evidenceIds } = result.output;
    return {
      kind: 'control-assessments',
      title: `Control assessments (catalog ${CONTROL_CATALOG_VERSION})`,
      artifactText: artifact,
      evidenceIds,
      confidence: '1',
      summary,
    };
  },
};
