/** The audit's analysis path over in-memory files: classified, analyzed, reconciled. */
import { analyzeCicd } from '../../analysis/cicd';
import { analyzeCloud } from '../../analysis/cloud';
import { analyzeCode } from '../../analysis/code';
import type { SourceFile } from '../../analysis/evidence';
import crypto from 'node:crypto';
import type { Evidence } from '../../analysis/evidence';
import { reconcile, type Graph, type StoredEvidence } from '../../analysis/reconcile';
import { classifyPath } from '../../domain/audits/classify';

export async function analyzeFiles(
  files: SourceFile[],
): Promise<{ graph: Graph; evidence: StoredEvidence[]; gaps: string[] }> {
  const byType: Record<'code' | 'cloud' | 'cicd', SourceFile[]> = { code: [], cloud: [], cicd: [] };
  for (const f of files) {
    const type = classifyPath(f.path, f.text.slice(0, 4096));
    if (type) byType[type].push(f);
  }
  const outputs = [
    await analyzeCode(byType.code),
    await analyzeCloud(byType.cloud),
    await analyzeCicd(byType.cicd),
  ];
  const evidence = outputs.flatMap((o) => o.evidence).map((e, i) => ({ ...e, id: `e${i}` }));
  return {
    graph: reconcile(evidence),
    evidence,
    gaps: outputs.flatMap((o) => o.gaps.map((g) => `${g.path}: ${g.reason}`)),
  };
}

/** analyzeFiles over a `path -> text` map. */
export const analyzeFileMap = (files: Record<string, string>) =>
  analyzeFiles(Object.entries(files).map(([path, text]) => ({ path, text })));

/** The graph's runtime connections, `source -> target`, sorted. */
export const connections = (g: Graph) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to')
    .map((r) => `${r.source_key} -> ${r.target_key}`)
    .sort();

/** The graph's entity keys, sorted. */
export const entityKeys = (g: Graph) => g.entities.map((e) => e.canonical_key).sort();

/** Whether a record's citation verifies against the file as written (lines and content hash). */
export function verifiable(files: SourceFile[], e: Evidence): boolean {
  const f = files.find((x) => x.path === e.location.path);
  if (!f) return false;
  const lines = f.text.split('\n').slice(e.location.start_line - 1, e.location.end_line);
  return crypto.createHash('sha256').update(lines.join('\n')).digest('hex') === e.content_sha256;
}

/** A Kubernetes Deployment manifest (one container, its env as literal values). */
export const deployment = (name: string, image: string, env: Record<string, string> = {}) => `---
apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name} }
spec:
  template:
    spec:
      containers:
        - name: ${name}
          image: ${image}
          env:
${
  Object.entries(env)
    .map(([k, v]) => `            - { name: ${k}, value: "${v}" }`)
    .join('\n') || '            []'
}
`;
