/**
 * The architecture agents: one analyzer per source type (pure functions over the audit's files,
 * emitting evidence), and the reconciler that merges their evidence into one graph. The
 * analysis itself runs in the analysis pool's threads (analysis/pool.ts).
 */
import { sourceTypeAgent, type Agent, type AgentInput, type AgentResult } from './types';
import type { AnalyzerGap, AnalyzerOutput, Evidence, SourceFile } from '../../../analysis/evidence';
import type { StoredEvidence } from '../../../analysis/reconcile';
import { runInPool } from '../../../analysis/pool';

/**
 * Files as text. Binary files (a NUL in the first 8 KiB) and files too large to have been read
 * are skipped, each reported as a gap saying why; invalid UTF-8 is read with replacement
 * characters (the analyzers see what a text editor would).
 */
async function readText(input: AgentInput): Promise<{ files: SourceFile[]; gaps: AnalyzerGap[] }> {
  const files: SourceFile[] = [];
  const gaps: AnalyzerGap[] = [];
  for (const f of input.files) {
    if (f.kind !== 'file') continue;
    if (!f.stored || !f.sha256) {
      gaps.push({
        path: f.path,
        reason: 'file_too_large',
        message: `${f.path} (${f.size} bytes) was not read: over the size limit`,
      });
      continue;
    }
    const data = await input.readFile(f.sha256);
    if (data.subarray(0, 8192).includes(0)) {
      gaps.push({
        path: f.path,
        reason: 'binary_file',
        message: `${f.path} looks binary and was not analyzed`,
      });
      continue;
    }
    files.push({ path: f.path, text: data.toString('utf8') });
  }
  return { files, gaps };
}

/** The analyzer of a source type, run in the analysis pool (off the main thread). */
async function analyzeInPool(
  stage: 'code' | 'cloud' | 'cicd',
  files: SourceFile[],
  signal: AbortSignal,
): Promise<AnalyzerOutput> {
  const result = await runInPool({ kind: stage, files }, signal);
  if (result.kind === 'reconcile' || result.kind === 'controls')
    throw new Error('the analysis pool answered another task');
  return result.output;
}

function analyzer(key: string, stage: 'code' | 'cloud' | 'cicd'): Agent {
  return sourceTypeAgent(key, '2', stage, async (input: AgentInput): Promise<AgentResult> => {
    const { files, gaps: unread } = await readText(input);
    const analyzed = await analyzeInPool(stage, files, input.signal);
    const output = { evidence: analyzed.evidence, gaps: [...unread, ...analyzed.gaps] };
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
  });
}

export const codeAnalyzer = analyzer('code-analyzer', 'code');
export const cloudAnalyzer = analyzer('cloud-analyzer', 'cloud');
export const cicdAnalyzer = analyzer('cicd-analyzer', 'cicd');

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
  async run({ priorArtifacts, signal }: AgentInput): Promise<AgentResult> {
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
    const result = await runInPool({ kind: 'reconcile', evidence }, signal);
    if (result.kind !== 'reconcile') throw new Error('the analysis pool answered another task');
    const graph = result.output;
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
