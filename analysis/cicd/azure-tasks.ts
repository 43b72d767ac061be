/**
 * What well-known Azure Pipelines tasks build, push and deploy, read from their `inputs:`.
 */
import type { Node, YAMLMap } from 'yaml';
import { type YamlFile } from '../shared/yaml';
import { substitute, type Op } from './shell';

type TaskOp = Omit<Op, 'line' | 'line_count'>;

/** What well-known tasks build, push and deploy, read from their inputs (names are case-insensitive). */
export function taskOps(
  y: YamlFile,
  task: string,
  inputs: YAMLMap | null,
  vars: Readonly<Record<string, string>> = {},
): TaskOp[] {
  const values = new Map(
    y
      .entries(inputs)
      .map((e) => [e.key.toLowerCase(), substitute(y.scalarString(e.value as Node) ?? '', vars)]),
  );
  const i = (...keys: string[]): string | undefined =>
    keys.map((k) => values.get(k.toLowerCase())).find((v) => v);
  const name = task.split('.').pop()?.toLowerCase() ?? '';
  const deploy = (
    tool: string,
    target: string | undefined,
    type: string,
    detail: Record<string, unknown> = {},
  ): TaskOp[] => [
    {
      kind: 'deploy',
      tool,
      action: task,
      ...(target ? { target, target_type: type } : {}),
      detail,
    },
  ];
  switch (name) {
    case 'docker': {
      const written = i('command') ?? 'buildAndPush';
      const command = written.toLowerCase();
      const repo = i('repository');
      if (!repo) return [];
      const tags = (i('tags') ?? '$(Build.BuildId)')
        .split(/[\n,]/)
        .map((t) => t.trim())
        .filter(Boolean);
      const image = `${repo}:${tags[0] ?? 'latest'}`;
      const detail = { tags, container_registry: i('containerRegistry') ?? null };
      const build = command === 'build' || command === 'buildandpush';
      const push = command === 'push' || command === 'buildandpush';
      return [
        ...(build
          ? [
              {
                kind: 'image-build' as const,
                tool: 'docker',
                action: `Docker ${written}`,
                image,
                detail,
              },
            ]
          : []),
        ...(push
          ? [
              {
                kind: 'image-push' as const,
                tool: 'docker',
                action: `Docker ${written}`,
                image,
                detail,
              },
            ]
          : []),
      ];
    }
    case 'kubernetesmanifest':
      return (i('action') ?? 'deploy').toLowerCase() === 'deploy'
        ? deploy('kubectl', undefined, 'deployment', {
            manifests: (i('manifests') ?? '').split('\n').filter(Boolean),
            namespace: i('namespace') ?? null,
          })
        : [];
    case 'kubernetes':
      return ['apply', 'set', 'rollout'].includes((i('command') ?? '').toLowerCase())
        ? deploy('kubectl', undefined, 'deployment', { namespace: i('namespace') ?? null })
        : [];
    case 'helmdeploy':
      return ['upgrade', 'install'].includes((i('command') ?? '').toLowerCase())
        ? deploy('helm', i('releaseName'), 'release', {
            chart: i('chartName', 'chartPath') ?? null,
            namespace: i('namespace') ?? null,
          })
        : [];
    case 'azurewebapp':
    case 'azurewebappcontainer':
    case 'azurermwebappdeployment':
      return deploy('az-webapp', i('appName', 'WebAppName'), 'webapp');
    case 'azurefunctionapp':
    case 'azurefunctionappcontainer':
      return deploy('az-functionapp', i('appName'), 'functionapp');
    case 'azurecontainerapps':
      return deploy('az-containerapp', i('containerAppName'), 'containerapp');
    case 'terraformtaskv4':
    case 'terraformtaskv3':
    case 'terraformcli':
      return (i('command') ?? '').toLowerCase() === 'apply'
        ? deploy('terraform', undefined, 'stack', {
            working_directory: i('workingDirectory') ?? null,
          })
        : [];
    case 'npm':
      return (i('command') ?? '').toLowerCase() === 'publish'
        ? [{ kind: 'publish', tool: 'npm', action: task }]
        : [];
    default:
      return [];
  }
}
