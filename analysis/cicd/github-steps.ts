/**
 * GitHub Actions `uses:` references: how they are pinned, and what the well-known build, push
 * and deploy actions do with their inputs.
 */
import type { YAMLMap } from 'yaml';
import { imageKey, parseImageRef } from '../shared/images';
import { stem } from '../shared/paths';
import { isDynamic } from '../shared/variables';
import { type YamlFile } from '../shared/yaml';
import { pathKey } from './common';
import type { Op } from './shell';
import { substitute } from './shell';

export type Pin = 'sha' | 'tag' | 'branch' | 'local' | 'docker';

export interface UsesRef {
  raw: string;
  /** `action:<owner>/<repo>[/path]`, `action:./path`, `image:<repo>` or `pipeline:github-actions/<name>`. */
  object: string | null;
  /** `owner/repo[/path]` lowercased, for recognising well-known actions. */
  name: string;
  ref: string | null;
  pin: Pin;
  pinned: boolean;
  first_party: boolean;
  reusable_workflow: boolean;
}

const FULL_SHA = /^[0-9a-f]{40}$/i;
const TAG_LIKE = /^v?\d+(\.\d+)*([-+][0-9A-Za-z.-]+)?$/;

export function parseUses(raw: string): UsesRef {
  const value = raw.trim();
  const reusable = /\.github\/workflows\/[^/@]+\.ya?ml(@|$)/.test(value);
  if (value.startsWith('./') || value.startsWith('../')) {
    const local = value.replace(/@.*$/, '');
    const object = reusable
      ? pathKey('pipeline', 'github-actions', stem(local))
      : pathKey('action', local);
    return {
      raw: value,
      object,
      name: local,
      ref: null,
      pin: 'local',
      pinned: true,
      first_party: false,
      reusable_workflow: reusable,
    };
  }
  if (value.startsWith('docker://')) {
    const img = parseImageRef(value);
    return {
      raw: value,
      object: img ? imageKey(img) : null,
      name: img?.repo ?? value,
      ref: img?.digest ?? img?.tag ?? null,
      pin: 'docker',
      pinned: img?.pinned ?? false,
      first_party: false,
      reusable_workflow: false,
    };
  }
  const at = value.lastIndexOf('@');
  const spec = at > 0 ? value.slice(0, at) : value;
  const ref = at > 0 ? value.slice(at + 1) : null;
  const owner = (spec.split('/')[0] ?? '').toLowerCase();
  const pin: Pin = ref && FULL_SHA.test(ref) ? 'sha' : ref && TAG_LIKE.test(ref) ? 'tag' : 'branch';
  return {
    raw: value,
    object: pathKey('action', spec),
    name: spec.toLowerCase(),
    ref,
    pin,
    pinned: pin === 'sha',
    first_party: owner === 'actions' || owner === 'github',
    reusable_workflow: reusable,
  };
}

export function pinPhrase(u: UsesRef): string {
  switch (u.pin) {
    case 'sha':
      return 'pinned to a commit sha';
    case 'tag':
      return 'tag, not pinned to a commit';
    case 'branch':
      return u.ref ? 'branch, not pinned to a commit' : 'no ref, not pinned to a commit';
    case 'local':
      return 'local, versioned with this repository';
    case 'docker':
      return u.pinned ? 'docker image pinned by digest' : 'docker image, not pinned by digest';
  }
}

type StepOp = Omit<Op, 'line' | 'line_count'> & { environment?: string };

/** Inputs as strings with `${{ env.X }}` expanded from literal env values. */
function inputs(
  y: YamlFile,
  withMap: YAMLMap | null,
  vars: Readonly<Record<string, string>>,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of y.entries(withMap)) {
    const v = y.scalarString(e.value) ?? y.stringList(e.value).join('\n');
    out.set(e.key.toLowerCase(), substitute(v, vars));
  }
  return out;
}

function truthy(v: string | undefined): boolean | 'conditional' {
  if (v === undefined) return false;
  if (v.includes('${{')) return 'conditional';
  return v.trim().toLowerCase() === 'true';
}

/** What a well-known action builds, pushes or deploys, read from its `with:` inputs. */
export function actionOps(
  y: YamlFile,
  uses: UsesRef,
  withMap: YAMLMap | null,
  vars: Readonly<Record<string, string>>,
): StepOp[] {
  const w = inputs(y, withMap, vars);
  const target = (
    tool: string,
    action: string,
    input: string,
    type: string,
    extra: Partial<StepOp> = {},
  ): StepOp[] => {
    const t = w.get(input);
    return [
      { kind: 'deploy', tool, action, ...(t ? { target: t, target_type: type } : {}), ...extra },
    ];
  };
  switch (uses.name) {
    case 'docker/build-push-action': {
      const push = truthy(w.get('push'));
      const tags = (w.get('tags') ?? '')
        .split(/[\n,]/)
        .map((t) => t.trim())
        .filter((t) => t.length > 0);
      const byRepo = new Map<string, string[]>();
      for (const t of tags) {
        const repo = parseImageRef(t)?.repo ?? t;
        byRepo.set(repo, [...(byRepo.get(repo) ?? []), t]);
      }
      return [...byRepo.values()].flatMap((group) => {
        // `context` and `file` say which folder and Dockerfile the image is built from (the
        // action's default context is the repository's git context: not a folder we can name).
        const context = w.get('context');
        const file = w.get('file');
        const detail = {
          tags: group,
          ...(push === 'conditional' ? { conditional: true } : {}),
          ...(context && !isDynamic(context) ? { context } : {}),
          ...(file && !isDynamic(file) ? { dockerfile: file } : {}),
        };
        const build: StepOp = {
          kind: 'image-build',
          tool: 'docker',
          action: 'build-push-action',
          image: group[0] ?? '',
          detail,
        };
        return push ? [build, { ...build, kind: 'image-push' as const }] : [build];
      });
    }
    case 'actions/deploy-pages':
    case 'peaceiris/actions-gh-pages':
      return [
        { kind: 'deploy', tool: 'github-pages', action: uses.name, environment: 'github-pages' },
      ];
    case 'aws-actions/amazon-ecs-deploy-task-definition': {
      const cluster = w.get('cluster');
      return target(
        'aws-ecs',
        'deploy-task-definition',
        'service',
        'ecs-service',
        cluster ? { detail: { cluster } } : {},
      );
    }
    case 'google-github-actions/deploy-cloudrun': {
      const image = w.get('image');
      return target(
        'gcloud-run',
        'deploy-cloudrun',
        'service',
        'cloud-run-service',
        image ? { image } : {},
      );
    }
    case 'azure/webapps-deploy':
      return target('az-webapp', 'webapps-deploy', 'app-name', 'webapp');
    case 'azure/functions-action':
      return target('az-functionapp', 'functions-action', 'app-name', 'functionapp');
    case 'azure/container-apps-deploy-action':
      return target(
        'az-containerapp',
        'container-apps-deploy-action',
        'containerappname',
        'containerapp',
      );
    case 'azure/k8s-deploy':
      return [
        {
          kind: 'deploy',
          tool: 'kubectl',
          action: 'k8s-deploy',
          detail: { manifests: (w.get('manifests') ?? '').split('\n').filter(Boolean) },
        },
      ];
    case 'js-devtools/npm-publish':
      return [{ kind: 'publish', tool: 'npm', action: 'npm-publish' }];
    default:
      return [];
  }
}
