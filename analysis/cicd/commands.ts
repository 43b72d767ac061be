/**
 * Recognises what a CI shell script builds, pushes, deploys and publishes: docker, kubectl,
 * helm, terraform, aws ecs/lambda, gcloud run, az webapp/containerapp, npm publish and a few
 * more, with the image, release or service each command names.
 */
import { basename } from '../shared/paths';
import { flag, flagAll, parseArgs, splitCommands, substitute, type Op } from './shell';

const set = (...xs: string[]): ReadonlySet<string> => new Set(xs);

const DOCKER_GLOBAL = set('--config', '-c', '--context', '-H', '--host', '-l', '--log-level');
const DOCKER_BUILD = set(
  ...['-t', '--tag', '-f', '--file', '--build-arg', '--target', '--platform', '--label'],
  ...['--cache-from', '--cache-to', '--secret', '--ssh', '--output', '-o', '--progress'],
  ...['--network', '--add-host', '--iidfile', '--metadata-file', '--builder', '--build-context'],
  ...['--annotation', '--attest', '--shm-size', '--ulimit', '-m', '--memory', '--allow'],
);
const KUBECTL = set(
  ...['-n', '--namespace', '--context', '--kubeconfig', '--cluster', '-s', '--server', '--user'],
  ...['--token', '--as', '-l', '--selector', '-f', '--filename', '-k', '--kustomize', '-o'],
  ...['--output', '--field-manager', '--timeout', '-c', '--container', '--type', '-p', '--patch'],
  ...['--image', '--replicas', '--to-revision', '--dry-run'],
);
const HELM = set(
  ...['-f', '--values', '-n', '--namespace', '--set', '--set-string', '--set-file', '--set-json'],
  ...['--version', '--timeout', '--kube-context', '--kubeconfig', '--repo', '--post-renderer'],
  ...['--description', '--history-max', '--username', '--password', '--ca-file', '--cert-file'],
  ...['--key-file', '--keyring', '--post-renderer-args', '--labels', '-o', '--output'],
);
const AWS = set(
  ...['--cluster', '--service', '--task-definition', '--region', '--profile', '--desired-count'],
  ...['--function-name', '--image-uri', '--zip-file', '--s3-bucket', '--s3-key', '--output'],
  ...['--application-name', '--deployment-group-name', '--revision', '--cli-input-json'],
);
const GCLOUD = set(
  ...['--image', '--region', '--project', '--platform', '--source', '--service-account'],
  ...['--memory', '--cpu', '--port', '--set-env-vars', '--update-env-vars', '--set-secrets'],
  ...['--concurrency', '--max-instances', '--min-instances', '--timeout', '--tag', '--account'],
);
const AZ = set('-n', '--name', '-g', '--resource-group', '--image', '--src-path', '--type');

const WORKLOADS: Record<string, string> = {
  deployment: 'deployment',
  deployments: 'deployment',
  deploy: 'deployment',
  statefulset: 'statefulset',
  statefulsets: 'statefulset',
  sts: 'statefulset',
  daemonset: 'daemonset',
  daemonsets: 'daemonset',
  ds: 'daemonset',
};

/** `deployment/api` or `deployment api` as type and name. */
function resourceRef(pos: string[], at: number): { type?: string; name?: string } {
  const first = pos[at];
  if (!first) return {};
  const slash = first.indexOf('/');
  const rawType = slash > 0 ? first.slice(0, slash) : first;
  const name = slash > 0 ? first.slice(slash + 1) : pos[at + 1];
  const type = WORKLOADS[rawType.toLowerCase().split('.')[0] ?? ''] ?? rawType.toLowerCase();
  return { type, ...(name && !name.includes('=') ? { name } : {}) };
}

type Base = Pick<Op, 'line' | 'line_count'>;
type Recognizer = (args: string[], base: Base) => Op[];

function docker(args: string[], base: Base): Op[] {
  let i = 0;
  while (i < args.length && (args[i] ?? '').startsWith('-')) {
    i += DOCKER_GLOBAL.has(args[i] ?? '') && !(args[i] ?? '').includes('=') ? 2 : 1;
  }
  let rest = args.slice(i);
  if (['image', 'buildx', 'builder'].includes(rest[0] ?? '')) rest = rest.slice(1);
  const sub = rest[0];
  const a = parseArgs(rest.slice(1), sub === 'build' ? DOCKER_BUILD : set());
  if (sub === 'build') {
    const tags = flagAll(a, '-t', '--tag');
    const outputs = flagAll(a, '--output', '-o').join(',');
    const pushes = a.flags.has('--push') || /type=registry|push=true/.test(outputs);
    // The folder the image is built from, and its Dockerfile when named: what the image runs.
    const context = a.positional[0];
    const file = flag(a, '-f', '--file');
    const detail = {
      ...(context ? { context } : {}),
      ...(file ? { dockerfile: file } : {}),
    };
    return tags.flatMap((image) => [
      { kind: 'image-build' as const, tool: 'docker', action: 'build', image, detail, ...base },
      ...(pushes
        ? [{ kind: 'image-push' as const, tool: 'docker', action: 'build --push', image, ...base }]
        : []),
    ]);
  }
  if (sub === 'push' && a.positional[0]) {
    return [
      { kind: 'image-push', tool: 'docker', action: 'push', image: a.positional[0], ...base },
    ];
  }
  if (sub === 'stack' && a.positional[0] === 'deploy') {
    const s = parseArgs(rest.slice(2), set('-c', '--compose-file', '--resolve-image'));
    const target = s.positional[0];
    return [
      {
        kind: 'deploy',
        tool: 'docker-stack',
        action: 'stack deploy',
        ...(target ? { target, target_type: 'stack' } : {}),
        ...base,
      },
    ];
  }
  return [];
}

function kubectl(args: string[], base: Base): Op[] {
  const a = parseArgs(args, KUBECTL);
  const pos = a.positional;
  const namespace = flag(a, '-n', '--namespace');
  const detail = namespace ? { namespace } : {};
  const op = (action: string, extra: Partial<Op>): Op[] => [
    {
      kind: 'deploy',
      tool: 'kubectl',
      action,
      ...extra,
      detail: { ...detail, ...extra.detail },
      ...base,
    },
  ];
  const verb = pos[0];
  if (verb === 'apply' || verb === 'replace' || (verb === 'create' && pos.length === 1)) {
    const manifests = flagAll(a, '-f', '--filename');
    const kustomize = flag(a, '-k', '--kustomize');
    return op(verb, {
      detail: { ...(manifests.length ? { manifests } : {}), ...(kustomize ? { kustomize } : {}) },
    });
  }
  if (verb === 'create' && pos[1] === 'deployment' && pos[2]) {
    const image = flag(a, '--image');
    return op('create deployment', {
      target: pos[2],
      target_type: 'deployment',
      ...(image ? { image } : {}),
    });
  }
  if (verb === 'set' && pos[1] === 'image') {
    const ref = resourceRef(pos, 2);
    const spec = pos.slice(2).find((p) => p.includes('='));
    const image = spec ? spec.slice(spec.indexOf('=') + 1) : undefined;
    return op('set image', {
      ...(ref.name ? { target: ref.name, target_type: ref.type } : {}),
      ...(image ? { image } : {}),
    });
  }
  if (verb === 'rollout' && pos[1]) {
    const ref = resourceRef(pos, 2);
    return op(`rollout ${pos[1]}`, ref.name ? { target: ref.name, target_type: ref.type } : {});
  }
  if (verb === 'patch' || verb === 'scale') {
    const ref = resourceRef(pos, 1);
    return op(verb, ref.name ? { target: ref.name, target_type: ref.type } : {});
  }
  return [];
}

function helm(args: string[], base: Base): Op[] {
  const a = parseArgs(args, HELM);
  const [verb, release, chart] = a.positional;
  if (verb !== 'upgrade' && verb !== 'install') return [];
  const install = a.flags.has('--install') || a.flags.has('-i');
  const generated = verb === 'install' && a.flags.has('--generate-name');
  const namespace = flag(a, '-n', '--namespace');
  const theChart = generated ? release : chart;
  return [
    {
      kind: 'deploy',
      tool: 'helm',
      action: verb === 'upgrade' && install ? 'upgrade --install' : verb,
      ...(release && !generated ? { target: release, target_type: 'release' } : {}),
      detail: { ...(theChart ? { chart: theChart } : {}), ...(namespace ? { namespace } : {}) },
      ...base,
    },
  ];
}

function terraform(tool: string): Recognizer {
  return (args, base) => {
    const a = parseArgs(args, set());
    const verbs = a.positional.filter((p) => p === 'apply' || p === 'run-all');
    if (!a.positional.includes('apply')) return [];
    const chdir = flag(a, '-chdir');
    return [
      {
        kind: 'deploy',
        tool,
        action: verbs.join(' '),
        ...(chdir ? { detail: { chdir } } : {}),
        ...base,
      },
    ];
  };
}

function aws(args: string[], base: Base): Op[] {
  const a = parseArgs(args, AWS);
  const [svc, verb] = a.positional;
  if (svc === 'ecs' && (verb === 'update-service' || verb === 'deploy')) {
    const target = flag(a, '--service');
    const cluster = flag(a, '--cluster');
    return [
      {
        kind: 'deploy',
        tool: 'aws-ecs',
        action: verb,
        ...(target ? { target, target_type: 'ecs-service' } : {}),
        ...(cluster ? { detail: { cluster } } : {}),
        ...base,
      },
    ];
  }
  if (
    svc === 'lambda' &&
    (verb === 'update-function-code' || verb === 'update-function-configuration')
  ) {
    const target = flag(a, '--function-name');
    return [
      {
        kind: 'deploy',
        tool: 'aws-lambda',
        action: verb,
        ...(target ? { target, target_type: 'function' } : {}),
        ...base,
      },
    ];
  }
  if (svc === 'deploy' && verb === 'create-deployment') {
    const target = flag(a, '--application-name');
    return [
      {
        kind: 'deploy',
        tool: 'aws-codedeploy',
        action: verb,
        ...(target ? { target, target_type: 'application' } : {}),
        ...base,
      },
    ];
  }
  return [];
}

function gcloud(args: string[], base: Base): Op[] {
  const a = parseArgs(args, GCLOUD);
  const pos =
    a.positional[0] === 'alpha' || a.positional[0] === 'beta'
      ? a.positional.slice(1)
      : a.positional;
  const image = flag(a, '--image');
  const extra = image ? { image } : {};
  if (pos[0] === 'run' && (pos[1] === 'deploy' || (pos[1] === 'services' && pos[2] === 'update'))) {
    const target = pos[1] === 'deploy' ? pos[2] : pos[3];
    return [
      {
        kind: 'deploy',
        tool: 'gcloud-run',
        action: pos.slice(0, pos[1] === 'deploy' ? 2 : 3).join(' '),
        ...(target ? { target, target_type: 'cloud-run-service' } : {}),
        ...extra,
        ...base,
      },
    ];
  }
  if (pos[0] === 'functions' && pos[1] === 'deploy') {
    const target = pos[2];
    return [
      {
        kind: 'deploy',
        tool: 'gcloud-functions',
        action: 'functions deploy',
        ...(target ? { target, target_type: 'function' } : {}),
        ...base,
      },
    ];
  }
  if (pos[0] === 'app' && pos[1] === 'deploy') {
    return [{ kind: 'deploy', tool: 'gcloud-app', action: 'app deploy', ...base }];
  }
  return [];
}

const AZ_READ_ONLY = new Set(['list', 'show', 'log', 'logs', 'browse', 'ssh', 'list-runtimes']);

function az(args: string[], base: Base): Op[] {
  const a = parseArgs(args, AZ);
  const [group, verb] = a.positional;
  if (!group || !['webapp', 'containerapp', 'functionapp'].includes(group)) return [];
  if (!verb || AZ_READ_ONLY.has(verb)) return [];
  const target = flag(a, '-n', '--name');
  const image = flag(a, '--image');
  const action = a.positional.slice(1).join(' ');
  return [
    {
      kind: 'deploy',
      tool: `az-${group}`,
      action,
      ...(target ? { target, target_type: group } : {}),
      ...(image ? { image } : {}),
      ...base,
    },
  ];
}

function publisher(tool: string): Recognizer {
  return (args, base) => {
    const pos = args.filter((w) => !w.startsWith('-'));
    const isPublish = pos[0] === 'publish' || (pos[0] === 'npm' && pos[1] === 'publish');
    return isPublish ? [{ kind: 'publish', tool, action: 'publish', ...base }] : [];
  };
}

function simpleDeploy(
  tool: string,
  verbs: string[],
  targetFlags: string[],
  targetType: string,
): Recognizer {
  return (args, base) => {
    const a = parseArgs(args, set(...targetFlags, '-c', '--config'));
    const at = a.positional.findIndex((p) => verbs.includes(p));
    if (at < 0) return [];
    const target = flag(a, ...targetFlags);
    return [
      {
        kind: 'deploy',
        tool,
        action: a.positional[at] ?? '',
        ...(target ? { target, target_type: targetType } : {}),
        ...base,
      },
    ];
  };
}

function argocd(args: string[], base: Base): Op[] {
  const a = parseArgs(args, set('--server', '--auth-token', '--revision', '--timeout'));
  const [grp, verb, target] = a.positional;
  if (grp !== 'app' || (verb !== 'sync' && verb !== 'set')) return [];
  return [
    {
      kind: 'deploy',
      tool: 'argocd',
      action: `app ${verb}`,
      ...(target ? { target, target_type: 'argocd-app' } : {}),
      ...base,
    },
  ];
}

const RECOGNIZERS: Record<string, Recognizer> = {
  docker,
  podman: docker,
  kubectl,
  oc: kubectl,
  helm,
  helmfile: simpleDeploy('helmfile', ['apply', 'sync'], [], 'release'),
  terraform: terraform('terraform'),
  tofu: terraform('opentofu'),
  terragrunt: terraform('terragrunt'),
  aws,
  gcloud,
  az,
  npm: publisher('npm'),
  yarn: publisher('npm'),
  pnpm: publisher('npm'),
  fly: simpleDeploy('fly', ['deploy'], ['-a', '--app'], 'app'),
  flyctl: simpleDeploy('fly', ['deploy'], ['-a', '--app'], 'app'),
  argocd,
  skaffold: simpleDeploy('skaffold', ['run', 'deploy'], [], 'app'),
  serverless: simpleDeploy('serverless', ['deploy'], [], 'app'),
  sls: simpleDeploy('serverless', ['deploy'], [], 'app'),
};

const PREFIXES = new Set(['sudo', 'time', 'exec', 'command', 'env', 'nohup', 'xargs']);

/** Everything a script builds, pushes, deploys or publishes, in script order. */
export function scanScript(script: string, vars: Readonly<Record<string, string>> = {}): Op[] {
  const ops: Op[] = [];
  for (const cmd of splitCommands(script)) {
    let words = cmd.words;
    while (words.length > 0) {
      const w = words[0] ?? '';
      if (
        /^[A-Za-z_][A-Za-z0-9_]*=/.test(w) ||
        PREFIXES.has(w) ||
        (w.startsWith('-') && words !== cmd.words)
      ) {
        words = words.slice(1);
      } else break;
    }
    const head = basename(words[0] ?? '');
    const recognize = RECOGNIZERS[head];
    if (!recognize) continue;
    const args = words.slice(1).map((w) => substitute(w, vars));
    ops.push(...recognize(args, { line: cmd.line, line_count: cmd.line_count }));
  }
  return ops;
}
