/**
 * What well-known CircleCI orb commands and orb jobs build, push and deploy, read from their
 * parameters.
 */
import type { YAMLMap } from 'yaml';
import { type YamlFile } from '../shared/yaml';
import { substitute, type Op } from './shell';

type OrbOp = Omit<Op, 'line' | 'line_count'>;

/** What well-known orb commands and jobs build, push and deploy, read from their parameters. */
export function orbOps(
  y: YamlFile,
  used: string,
  params: YAMLMap | null,
  vars: Record<string, string>,
): OrbOp[] {
  const p = (k: string): string | undefined => {
    const v = y.getString(params, k) ?? y.getString(params, k.replace(/-/g, '_'));
    return v === undefined ? undefined : substitute(v, vars);
  };
  const [alias = '', command = ''] = used.split('/');
  const cmd = command.replace(/_/g, '-');
  const target = (
    tool: string,
    t: string | undefined,
    type: string,
    detail: Record<string, unknown> = {},
  ): OrbOp[] => [
    {
      kind: 'deploy',
      tool,
      action: `${alias}/${command}`,
      ...(t ? { target: t, target_type: type } : {}),
      detail,
    },
  ];
  if (cmd === 'build-and-push-image' || cmd === 'publish' || cmd === 'push-image') {
    const repo = p('repo') ?? p('image');
    if (!repo) return [];
    const tags = (p('tag') ?? 'latest').split(',').map((t) => t.trim());
    const image = `${repo}:${tags[0] ?? 'latest'}`;
    const detail = { tags };
    return [
      ...(cmd !== 'push-image'
        ? [
            {
              kind: 'image-build' as const,
              tool: 'docker',
              action: `${alias}/${command}`,
              image,
              detail,
            },
          ]
        : []),
      { kind: 'image-push', tool: 'docker', action: `${alias}/${command}`, image, detail },
    ];
  }
  if (cmd === 'build') {
    const image = p('image');
    return image
      ? [
          {
            kind: 'image-build',
            tool: 'docker',
            action: `${alias}/${command}`,
            image: `${image}:${p('tag') ?? 'latest'}`,
          },
        ]
      : [];
  }
  if (cmd === 'deploy-service-update' || cmd === 'update-service') {
    const cluster = p('cluster') ?? p('cluster-name');
    return target(
      'aws-ecs',
      p('service-name') ?? p('family'),
      'ecs-service',
      cluster ? { cluster } : {},
    );
  }
  if (cmd === 'upgrade-helm-chart' || cmd === 'install-helm-chart') {
    const chart = p('chart');
    return target('helm', p('release-name'), 'release', chart ? { chart } : {});
  }
  if (
    cmd === 'update-container-image' ||
    cmd === 'rollout-status' ||
    cmd === 'create-or-update-resource'
  ) {
    const resource = p('resource-name') ?? '';
    const name = resource.includes('/') ? resource.slice(resource.indexOf('/') + 1) : undefined;
    return target('kubectl', name, 'deployment');
  }
  if (cmd === 'deploy-via-git') return target('heroku', p('app-name'), 'app');
  if (alias.includes('cloud-run') && cmd === 'deploy')
    return target('gcloud-run', p('service-name'), 'cloud-run-service');
  return [];
}
