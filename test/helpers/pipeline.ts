/** The audit's analysis path over in-memory files: classified, analyzed, reconciled. */
import { analyzeCicd } from '../../analysis/cicd';
import { analyzeCloud } from '../../analysis/cloud';
import { analyzeCode } from '../../analysis/code';
import type { SourceFile } from '../../analysis/evidence';
import { reconcile, type Graph, type StoredEvidence } from '../../analysis/reconcile';
import { classifyPath } from '../../domain/audits/classify';

export async function analyzeFiles(
  files: SourceFile[],
): Promise<{ graph: Graph; evidence: StoredEvidence[] }> {
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
  return { graph: reconcile(evidence), evidence };
}
