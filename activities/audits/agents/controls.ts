/**
 * The controls agent (stage `controls`): assesses the built-in catalog against the audit's
 * stored snapshot and file list. Its artifact holds the assessments in terms of the snapshot's
 * evidence uuids, which are per audit; so it is never served from cache (the input is the
 * snapshot, not only the files), and `persistControls` writes the tables from it.
 */
import { ASSESSMENT_STATUSES } from '../../../domain/contract/values';
import { CONTROL_CATALOG_VERSION, type Assessment } from '../../../analysis/controls';
import { runInPool } from '../../../analysis/pool';
import type { ConflictingClaim } from '../../../analysis/reconcile';
import type { Agent, AgentInput, AgentResult } from './types';
import { AgentError } from './types';

/** One assessment as the artifact carries it: the pure result plus what it rests on in the graph. */
export interface ControlArtifactItem extends Assessment {
  /** Canonical keys of the relationships whose evidence the control used. */
  architecture_relationship_ids: string[];
  /** Evidence the control used that takes part in a contradiction of the snapshot. */
  conflicting_evidence_ids: string[];
  /** Always empty: every evidence comes from this audit's own observation of its commit. */
  stale_evidence_ids: string[];
  /** Requirements whose checks all lacked the facts they need (status unknown). */
  missing_requirement_keys: string[];
}

export interface ControlArtifact {
  catalog_version: string;
  assessments: ControlArtifactItem[];
}

function contradictionEvidence(items: Array<{ contradictions: ConflictingClaim[] }>): Set<string> {
  const out = new Set<string>();
  for (const item of items)
    for (const c of item.contradictions)
      for (const claim of c.claims) for (const id of claim.evidence_ids) out.add(id);
  return out;
}

const STATUS_ORDER = ASSESSMENT_STATUSES;

/** "14 controls: 9 pass, 3 fail, 2 not_applicable". */
export function describeAssessments(assessments: Array<{ status: string }>): string {
  const counts = STATUS_ORDER.map(
    (s) => [s, assessments.filter((a) => a.status === s).length] as const,
  ).filter(([, n]) => n > 0);
  return `${assessments.length} controls: ${counts.map(([s, n]) => `${n} ${s}`).join(', ')}`;
}

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
    const snapshot = await input.snapshot();
    if (!snapshot)
      throw new AgentError(
        'snapshot_missing',
        'The audit has no architecture snapshot to assess.',
        false,
      );
    // In the analysis pool (off the worker's main thread), like the analyzers and reconcile.
    const result = await runInPool(
      {
        kind: 'controls',
        input: {
          entities: snapshot.entities,
          relationships: snapshot.relationships,
          evidence: snapshot.evidence,
          files: input.files.map((f) => f.path),
        },
      },
      input.signal,
    );
    if (result.kind !== 'controls') throw new Error('the analysis pool answered another task');
    const assessed = result.output;
    const conflicting = contradictionEvidence([...snapshot.entities, ...snapshot.relationships]);
    const assessments: ControlArtifactItem[] = assessed.map((a) => {
      const used = new Set(a.evidence_ids);
      return {
        ...a,
        architecture_relationship_ids: snapshot.relationships
          .filter((r) => r.evidence_ids.some((id) => used.has(id)))
          .map((r) => r.canonical_key)
          .sort(),
        conflicting_evidence_ids: a.evidence_ids.filter((id) => conflicting.has(id)),
        stale_evidence_ids: [],
        missing_requirement_keys: a.requirements
          .filter((r) => r.status === 'unknown')
          .map((r) => r.key),
      };
    });
    const artifact: ControlArtifact = { catalog_version: CONTROL_CATALOG_VERSION, assessments };
    return {
      kind: 'control-assessments',
      title: `Control assessments (catalog ${CONTROL_CATALOG_VERSION})`,
      artifact: artifact as unknown as Record<string, unknown>,
      evidenceIds: [...new Set(assessments.flatMap((a) => a.failing_evidence_ids))].sort(),
      confidence: '1',
      summary: describeAssessments(assessments),
    };
  },
};
