/**
 * The built-in agents. The stage analyzers here inventory what each source type holds (which
 * build manifests, deployment formats and pipeline systems a repository uses); the architecture
 * extractors replace them stage by stage.
 */
import path from 'node:path';
import {
  AgentError,
  sourceTypeAgent,
  type Agent,
  type AgentInput,
  type AgentResult,
} from './types';
import type { ModelError } from './model';
import { cicdAnalyzer, cloudAnalyzer, codeAnalyzer, reconcileAgent } from './analyzers';
import { controlsAgent } from './controls';

function countBy<T>(items: T[], keyOf: (item: T) => string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) {
    const key = keyOf(item);
    if (key) out[key] = (out[key] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

const describe = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'nothing';

const inventory: Agent = {
  key: 'inventory',
  version: '1',
  stage: 'inventory',
  modelBacked: false,
  reasoningEffort: 'none',
  costKind: 'analysis',
  input: 'all',
  cacheable: true,
  async run({ files }: AgentInput): Promise<AgentResult> {
    const bySourceType = countBy(files, (f) => f.source_type ?? 'other');
    const byExtension = countBy(files, (f) => path.posix.extname(f.path).toLowerCase() || '(none)');
    const bytes = files.reduce((n, f) => n + Number(f.size), 0);
    return {
      kind: 'inventory',
      title: 'Source inventory',
      artifact: {
        files: files.length,
        bytes,
        by_source_type: bySourceType,
        by_extension: byExtension,
      },
      confidence: '1',
      summary: `${files.length} files (${describe(bySourceType)})`,
    };
  },
};

function classifier(
  key: string,
  stage: 'code' | 'cloud' | 'cicd',
  title: string,
  rules: Array<[string, RegExp]>,
): Agent {
  return sourceTypeAgent(key, '1', stage, async ({ files }: AgentInput): Promise<AgentResult> => {
    const matched: Record<string, string[]> = {};
    for (const f of files) {
      const rule = rules.find(([, re]) => re.test(f.path));
      const kind = rule ? rule[0] : 'other';
      (matched[kind] ??= []).push(f.path);
    }
    const counts = Object.fromEntries(Object.entries(matched).map(([k, v]) => [k, v.length]));
    return {
      kind: `${stage}-inventory`,
      title,
      artifact: { files: files.length, formats: matched },
      confidence: '1',
      summary: `${files.length} ${stage} files (${describe(counts)})`,
    };
  });
}

const codeInventory = classifier('code-inventory', 'code', 'Code and build manifests', [
  ['npm', /(^|\/)package\.json$/],
  ['go-modules', /(^|\/)go\.mod$/],
  ['python', /(^|\/)(requirements[\w.-]*\.txt|pyproject\.toml|setup\.py|Pipfile)$/],
  ['maven', /(^|\/)pom\.xml$/],
  ['gradle', /(^|\/)build\.gradle(\.kts)?$/],
  ['cargo', /(^|\/)Cargo\.toml$/],
  ['dotnet', /\.csproj$/],
  ['typescript', /\.tsx?$/],
  ['javascript', /\.(m|c)?jsx?$/],
  ['go', /\.go$/],
  ['python-source', /\.py$/],
  ['java', /\.(java|kt)$/],
]);

const cloudInventory = classifier(
  'cloud-inventory',
  'cloud',
  'Deployment and infrastructure configuration',
  [
    ['dockerfile', /(^|\/)([\w.-]*\.)?Dockerfile(\.[\w.-]+)?$/],
    ['docker-compose', /(^|\/)(docker-)?compose(\.[\w-]+)?\.ya?ml$/],
    ['terraform', /\.tf(vars|\.json)?$/],
    ['helm', /(^|\/)(Chart\.ya?ml|values(\.[\w-]+)?\.ya?ml|templates\/.+)$/],
    ['kustomize', /(^|\/)kustomization\.ya?ml$/],
    ['kubernetes', /\.ya?ml$/],
  ],
);

const cicdInventory = classifier('cicd-inventory', 'cicd', 'Pipeline definitions', [
  ['github-actions', /^\.github\/workflows\//],
  ['gitlab-ci', /\.gitlab-ci\.ya?ml$/],
  ['circleci', /^\.circleci\//],
  ['azure-pipelines', /azure-pipelines\.ya?ml$/],
  ['jenkins', /Jenkinsfile/],
  ['cloud-build', /cloudbuild\.ya?ml$/],
  ['bitbucket-pipelines', /bitbucket-pipelines\.ya?ml$/],
]);

const report: Agent = {
  key: 'report',
  // 2: sections name the artifacts they stand for; they no longer copy them (a 10,000-service
  // audit's copy was ~100 MB, parsed and written again on the worker's main thread).
  version: '2',
  stage: 'report',
  modelBacked: false,
  reasoningEffort: 'none',
  costKind: 'analysis',
  input: 'all',
  cacheable: false,
  async run({ audit, priorArtifactRefs }: AgentInput): Promise<AgentResult> {
    const prior = await priorArtifactRefs();
    return {
      kind: 'audit-report',
      title: 'Audit report',
      artifact: {
        audit_id: audit.id,
        commit_sha: audit.commit_sha,
        coverage_gaps: audit.coverage_gaps,
        sections: prior.map((p) => ({
          agent: p.agentKey,
          stage: p.stage,
          artifact_id: p.artifactId,
          kind: p.kind,
          title: p.title,
        })),
      },
      confidence: '1',
      summary: `report over ${prior.length} artifacts`,
    };
  },
};

/** The model-backed review: asks the configured model to review the inventory. */
const deepReview: Agent = {
  key: 'deep-review',
  version: '1',
  stage: 'report',
  modelBacked: true,
  reasoningEffort: 'medium',
  costKind: 'analysis',
  input: 'all',
  cacheable: true,
  async run({ model, priorArtifacts, signal, files }: AgentInput): Promise<AgentResult> {
    if (!model)
      throw new AgentError('model_not_configured', 'No model provider is configured.', false);
    const prior = (await priorArtifacts()).filter((p) => p.agentKey !== 'report');
    const context = JSON.stringify(
      prior.map((p) => ({ agent: p.agentKey, artifact: p.artifact })),
    ).slice(0, 60_000);
    try {
      const result = await model.complete({
        messages: [
          {
            role: 'system',
            content:
              'You review software architecture from evidence. Answer with a short list of observations, each naming the files it rests on. Say what the evidence does not show.',
          },
          { role: 'user', content: `Repository inventory (${files.length} files):\n${context}` },
        ],
        maxOutputTokens: 2000,
        reasoningEffort: 'medium',
        timeoutMs: 120_000,
        signal,
      });
      return {
        kind: 'deep-review',
        title: 'Model review of the inventory',
        artifact: { text: result.text, finish_reason: result.finishReason },
        confidence: '0.5',
        summary: `model review (${result.usage.outputTokens} output tokens)`,
        usage: result.usage,
        modelId: result.modelId,
      };
    } catch (err) {
      const e = err as ModelError;
      if (typeof e.code === 'string' && typeof e.retryable === 'boolean')
        throw new AgentError(e.code, e.message, e.retryable);
      throw err;
    }
  },
};

export const BUILTIN_AGENTS: readonly Agent[] = [
  inventory,
  codeInventory,
  cloudInventory,
  cicdInventory,
  codeAnalyzer,
  cloudAnalyzer,
  cicdAnalyzer,
  reconcileAgent,
  controlsAgent,
  deepReview,
  report,
];
