/**
 * The analysis artifacts as stored, built in the analysis pool's threads (analysis/thread.ts):
 * a 10,000-service audit's evidence and graph are tens of megabytes of JSON, and parsing,
 * building or serialising them on the worker's main thread stopped it for up to a second at a
 * time, holding every other workspace's activities and workflow tasks behind it (issue 24, fair
 * sharing). Here they arrive and leave as JSON text: the main thread only moves strings.
 */
import type { AnalyzerGap, AnalyzerOutput, Evidence } from './evidence';
import { reconcile, type StoredEvidence } from './reconcile';

/** An artifact as JSON text, with the counts the audit's budgets read. */
export interface ArtifactText {
  json: string;
  evidence: number;
  entities: number;
}

/** What an analyzer's artifact says in its summary and logs. */
export interface AnalyzerArtifact {
  artifact: ArtifactText;
  gaps: AnalyzerGap[];
  subjects: number;
}

/** An analyzer's output as its stored artifact; `unread` are the files not given to it. */
export function analyzerArtifact(
  stage: 'code' | 'cloud' | 'cicd',
  output: AnalyzerOutput,
  unread: AnalyzerGap[],
): AnalyzerArtifact {
  const gaps = [...unread, ...output.gaps];
  return {
    artifact: {
      json: JSON.stringify({ source_type: stage, evidence: output.evidence, gaps }),
      evidence: output.evidence.length,
      entities: 0,
    },
    gaps,
    subjects: new Set(output.evidence.map((e) => e.subject_key)).size,
  };
}

/** The analyzers' artifacts as stored, by agent key. */
export interface AnalyzerArtifactText {
  agentKey: string;
  json: string;
}

/** What the reconcile artifact says in its summary. */
export interface GraphArtifact {
  artifact: ArtifactText;
  relationships: number;
}

/**
 * The reconciled graph of the analyzers' artifacts: their evidence in agent-key order, each
 * given its local id (`e<n>`) in that order, and their gaps; stored with the graph.
 */
export function graphArtifact(analyzers: readonly AnalyzerArtifactText[]): GraphArtifact {
  const evidence: StoredEvidence[] = [];
  const gaps: unknown[] = [];
  for (const p of [...analyzers].sort((a, b) => a.agentKey.localeCompare(b.agentKey))) {
    const artifact = JSON.parse(p.json) as { evidence?: Evidence[]; gaps?: unknown[] };
    for (const e of artifact.evidence ?? []) evidence.push({ ...e, id: `e${evidence.length}` });
    gaps.push(...(artifact.gaps ?? []));
  }
  const graph = reconcile(evidence);
  return {
    artifact: {
      json: JSON.stringify({ ...graph, evidence, gaps }),
      evidence: evidence.length,
      entities: graph.entities.length,
    },
    relationships: graph.relationships.length,
  };
}
