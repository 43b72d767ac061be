/**
 * The architecture agents: one analyzer per source type (pure functions over the audit's files,
 * emitting evidence), and the reconciler that merges their evidence into one graph.
 */
import type { Agent, AgentInput, AgentResult } from './types';
import type { AnalyzerOutput, Evidence, SourceFile } from '../../analysis/evidence';
import { reconcile, type StoredEvidence } from '../../analysis/reconcile';
import { analyzeCode } from '../../analysis/code';
import { analyzeCloud } from '../../analysis/cloud';
import { analyzeCicd } from '../../analysis/cicd';

/** Files as text; binary files (a NUL in the first 8 KiB) and unread large files are skipped. */
async function readText(input: AgentInput): Promise<SourceFile[]> {
  const out: SourceFile[] = [];
  for (const f of input.files) {
    if (f.kind !== 'file' || !f.stored || !f.sha256) continue;
    const data = await input.readFile(f.sha256);
    if (data.subarray(0, 8192).includes(0)) continue;
    out.push({ path: f.path, text: data.toString('utf8') });
  }
  return out;
}

function analyzer(
  key: string,
  stage: 'code' | 'cloud' | 'cicd',
  run: (files: SourceFile[]) => Promise<AnalyzerOutput>,
): Agent {
  return {
    key,
    version: '1',
    stage,
    modelBacked: false,
    reasoningEffort: 'none',
    costKind: 'analysis',
    input: stage,
    cacheable: true,
    async run(input: AgentInput): Promise<AgentResult> {
      const files = await readText(input);
      const output = await run(files);
      for (const gap of output.gaps)
        await input.log('warning', `${gap.path}: ${gap.message}`, { reason: gap.reason });
      const kinds = new Set(output.evidence.map((e) => e.subject_key));
      return {
        kind: 'evidence',
        title: `${stage} evidence`,
        artifact: { source_type: stage, evidence: output.evidence, gaps: output.gaps },
        confidence: '1',
        summary: `${output.evidence.length} evidence records about ${kinds.size} subjects from ${files.length} files${output.gaps.length ? `, ${output.gaps.length} gaps` : ''}`,
      };
    },
  };
}

export const codeAnalyzer = analyzer('code-analyzer', 'code', analyzeCode);
export const cloudAnalyzer = analyzer('cloud-analyzer', 'cloud', analyzeCloud);
export const cicdAnalyzer = analyzer('cicd-analyzer', 'cicd', analyzeCicd);

/** Evidence carries local ids (`e<n>`) inside artifacts; the snapshot gives them uuids. */
export const reconcileAgent: Agent = {
  key: 'reconcile',
  version: '2',
  stage: 'reconcile',
  modelBacked: false,
  reasoningEffort: 'none',
  costKind: 'analysis',
  input: 'all',
  cacheable: false,
  async run({ priorArtifacts }: AgentInput): Promise<AgentResult> {
    const prior = await priorArtifacts();
    const evidence: StoredEvidence[] = [];
    const gaps: unknown[] = [];
    for (const p of prior
      .filter((a) => ['code-analyzer', 'cloud-analyzer', 'cicd-analyzer'].includes(a.agentKey))
      .sort((a, b) => a.agentKey.localeCompare(b.agentKey))) {
      for (const e of (p.artifact.evidence as Evidence[]) ?? [])
        evidence.push({ ...e, id: `e${evidence.length}` });
      gaps.push(...((p.artifact.gaps as unknown[]) ?? []));
    }
    const graph = reconcile(evidence);
    return {
      kind: 'architecture-graph',
      title: 'Reconciled architecture graph',
      artifact: { ...graph, evidence, gaps },
      evidenceIds: [],
      confidence: '1',
      summary: `${graph.entities.length} entities, ${graph.relationships.length} relationships from ${evidence.length} evidence records`,
    };
  },
};
