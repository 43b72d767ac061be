/** The control assessment of a handful of files, through the real analyzers and reconcile. */
import { analyzeCicd } from '../../analysis/cicd';
import { analyzeCloud } from '../../analysis/cloud';
import { analyzeCode } from '../../analysis/code';
import { assessControls, type Assessment } from '../../analysis/controls';
import { reconcile, type StoredEvidence } from '../../analysis/reconcile';
import { classifyPath, headBytes } from '../../domain/audits/classify';
import type { SourceFile } from '../../analysis/evidence';

/** Assesses `files` (path -> text) as an audit would: classify, analyze, reconcile, assess. */
export async function assessFiles(files: Record<string, string>): Promise<Assessment[]> {
  const by: Record<'code' | 'cloud' | 'cicd', SourceFile[]> = { code: [], cloud: [], cicd: [] };
  for (const [path, text] of Object.entries(files)) {
    const type = classifyPath(path, headBytes(path) ? text.slice(0, headBytes(path)) : undefined);
    if (type) by[type].push({ path, text });
  }
  const outs = [
    await analyzeCode(by.code),
    await analyzeCloud(by.cloud),
    await analyzeCicd(by.cicd),
  ];
  const evidence: StoredEvidence[] = outs
    .flatMap((o) => o.evidence)
    .map((e, i) => ({ ...e, id: `e${i}` }));
  const graph = reconcile(evidence);
  return assessControls({
    evidence,
    entities: graph.entities,
    relationships: graph.relationships,
    files: Object.keys(files),
  });
}

/** One control's assessment. */
export function control(list: Assessment[], key: string): Assessment {
  const a = list.find((x) => x.control_key === key);
  if (!a) throw new Error(`no assessment of ${key}`);
  return a;
}
