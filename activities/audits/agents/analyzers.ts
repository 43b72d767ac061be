/**
 * The architecture agents: one analyzer per source type (pure functions over the audit's files,
 * emitting evidence), and the reconciler that merges their evidence into one graph. The
 * analysis itself runs in the analysis pool's threads (analysis/pool.ts).
 */
import { sourceTypeAgent, type Agent, type AgentInput, type AgentResult } from './types';
import type { AnalyzerGap, SourceFile } from '../../../analysis/evidence';
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

function analyzer(key: string, stage: 'code' | 'cloud' | 'cicd'): Agent {
  return sourceTypeAgent(key, '2', stage, async (input: AgentInput): Promise<AgentResult> => {
    const { files, gaps: unread } = await readText(input);
    // In the analysis pool (off the main thread), which also writes the artifact's JSON.
    const result = await runInPool(
      { kind: 'analyzer-artifact', stage, files, unread },
      input.signal,
    );
    if (result.kind !== 'analyzer-artifact')
      throw new Error('the analysis pool answered another task');
    const { artifact, gaps, subjects } = result.output;
    for (const gap of gaps)
      await input.log('warning', `${gap.path}: ${gap.message}`, { reason: gap.reason });
    return {
      kind: 'evidence',
      title: `${stage} evidence`,
      artifactText: artifact,
      confidence: '1',
      summary: `${artifact.evidence} evidence records about ${subjects} subjects from ${files.length} files${gaps.length ? `, ${gaps.length} gaps` : ''}`,
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
  async run({ priorArtifactTexts, signal }: AgentInput): Promise<AgentResult> {
    // The analyzers' artifacts as text, parsed and reconciled in the analysis pool.
    const analyzers = (await priorArtifactTexts()).filter((a) =>
      ['code-analyzer', 'cloud-analyzer', 'cicd-analyzer'].includes(a.agentKey),
    );
    const result = await runInPool({ kind: 'graph-artifact', analyzers }, signal);
    if (result.kind !== 'graph-artifact')
      throw new Error('the analysis pool answered another task');
    const { artifact, relationships } = result.output;
    return {
      kind: 'architecture-graph',
      title: 'Reconciled architecture graph',
      artifactText: artifact,
      evidenceIds: [],
      confidence: '1',
      summary: `${artifact.entities} entities, ${relationships} relationships from ${artifact.evidence} evidence records`,
    };
  },
};
