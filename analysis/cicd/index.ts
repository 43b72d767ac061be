/**
 * The CI/CD analyzer: picks the CI files among an audit's files, runs the reader for each
 * system, and returns their evidence in a deterministic order. Never throws on bad input.
 */
import type { AnalyzerOutput, SourceFile } from '../evidence';
import { sortOutput, analyzerErrorGap } from '../shared/evidence';
import { basename, sortByPath } from '../shared/paths';
import { analyzeAzurePipeline } from './azure-pipelines';
import { analyzeCircleci } from './circleci';
import { analyzeGithubWorkflow } from './github-actions';
import { isCompositeAction } from './github-composite';
import { analyzeGitlabCi } from './gitlab-ci';
import { analyzeJenkinsfile } from './jenkinsfile';

export type CicdSystem =
  'github-actions' | 'gitlab-ci' | 'circleci' | 'azure-pipelines' | 'jenkins';

/** Which CI system a path belongs to, or null when it is not a CI definition we read. */
export function cicdSystem(path: string): CicdSystem | null {
  const base = basename(path);
  if (/(^|\/)\.github\/workflows\/[^/]+\.ya?ml$/.test(path)) return 'github-actions';
  if (isCompositeAction(path)) return 'github-actions';
  if (/(^|\.)gitlab-ci\.ya?ml$/.test(base)) return 'gitlab-ci';
  if (/(^|\/)\.circleci\/config\.ya?ml$/.test(path)) return 'circleci';
  if (/^(.+[.-])?azure-pipelines?([.-].+)?\.ya?ml$/i.test(base)) return 'azure-pipelines';
  if (/^Jenkinsfile([.-][^/]+)?$/.test(base) || /\.jenkinsfile$/i.test(base)) return 'jenkins';
  return null;
}

/** Evidence from every CI/CD definition among `files`, ordered by path, then line. */
export async function analyzeCicd(files: SourceFile[]): Promise<AnalyzerOutput> {
  const sorted = sortByPath(files);
  const byPath = new Map(sorted.map((f) => [f.path, f]));
  const merged: AnalyzerOutput = { evidence: [], gaps: [] };
  const run = (file: SourceFile, system: CicdSystem, read: () => AnalyzerOutput): void => {
    try {
      const out = read();
      merged.evidence.push(...out.evidence);
      merged.gaps.push(...out.gaps);
    } catch (err) {
      merged.gaps.push(analyzerErrorGap(file.path, `${system} reader`, err));
    }
  };
  // GitLab roots (`.gitlab-ci.yml`) first: a file another one includes is part of that
  // pipeline, not a pipeline of its own.
  const gitlab = sorted
    .filter((f) => cicdSystem(f.path) === 'gitlab-ci')
    .sort((a, b) => Number(!isGitlabRoot(a.path)) - Number(!isGitlabRoot(b.path)));
  const consumed = new Set<string>();
  for (const file of gitlab) {
    if (consumed.has(file.path)) continue;
    run(file, 'gitlab-ci', () => {
      const r = analyzeGitlabCi(file, byPath);
      r.included.forEach((p) => consumed.add(p));
      return r.output;
    });
  }
  for (const file of sorted) {
    const system = cicdSystem(file.path);
    if (system && system !== 'gitlab-ci') run(file, system, () => READERS[system](file));
  }
  return sortOutput(merged);
}

function isGitlabRoot(path: string): boolean {
  return /(^|\/)\.gitlab-ci\.ya?ml$/.test(path);
}

const READERS: Record<Exclude<CicdSystem, 'gitlab-ci'>, (file: SourceFile) => AnalyzerOutput> = {
  'github-actions': analyzeGithubWorkflow,
  circleci: analyzeCircleci,
  'azure-pipelines': analyzeAzurePipeline,
  jenkins: analyzeJenkinsfile,
};

export {
  analyzeAzurePipeline,
  analyzeCircleci,
  analyzeGithubWorkflow,
  analyzeGitlabCi,
  analyzeJenkinsfile,
};
