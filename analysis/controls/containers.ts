/** The container controls: not privileged, resource limits, non-root (analysis/controls/effective.ts). */
import type { ControlSpec } from './catalog';
import { bool, containers, onEvidence, type Check, type Context } from './check';
import { containersNonRoot } from './effective';

function containersNotPrivileged(ctx: Context): Check[] {
  return containers(ctx).map(({ e, c, name, label }) => {
    const p = bool(c.privileged);
    return onEvidence(ctx, e, {
      requirement: 'no-privileged-containers',
      verdict: p === null ? 'unknown' : p ? 'fail' : 'pass',
      title: `${label} ${p ? 'runs privileged' : 'is not privileged'}`,
      facts: { privileged: p },
      discriminator: name,
    });
  });
}

function containersResourceLimits(ctx: Context): Check[] {
  return containers(ctx).map(({ e, c, name, label }) => {
    const set = bool(c.resource_limits_set);
    return onEvidence(ctx, e, {
      requirement: 'resource-limits-set',
      verdict: set === null ? 'unknown' : set ? 'pass' : 'fail',
      title: `${label} ${set ? 'declares' : 'does not declare'} resource limits`,
      facts: { resource_limits_set: set },
      discriminator: name,
    });
  });
}

export const CONTAINER_CONTROLS: ControlSpec[] = [
  {
    control: {
      key: 'containers-not-privileged',
      title: 'Containers not privileged',
      description: 'No compose service or Kubernetes container runs privileged.',
      domain: 'cloud',
      severity: 'high',
      requirements: [
        { key: 'no-privileged-containers', description: 'privileged is not set on any container.' },
      ],
    },
    evaluate: containersNotPrivileged,
    notApplicable: 'no compose service or Kubernetes container found',
  },
  {
    control: {
      key: 'containers-resource-limits',
      title: 'Container resource limits set',
      description: 'Every compose service and Kubernetes container declares resource limits.',
      domain: 'cloud',
      severity: 'medium',
      requirements: [
        { key: 'resource-limits-set', description: 'Each container declares CPU/memory limits.' },
      ],
    },
    evaluate: containersResourceLimits,
    notApplicable: 'no compose service or Kubernetes container found',
  },
  {
    control: {
      key: 'containers-non-root',
      title: 'Containers run as non-root',
      description:
        'Dockerfiles set a non-root USER; Kubernetes containers set runAsNonRoot (or a non-zero runAsUser); compose services do not set user root.',
      domain: 'cloud',
      severity: 'high',
      requirements: [
        {
          key: 'dockerfile-non-root-user',
          description: 'The final Dockerfile stage sets a non-root USER.',
        },
        {
          key: 'runtime-non-root',
          description:
            'Runtime configuration (Kubernetes securityContext, compose user) is non-root.',
        },
      ],
    },
    evaluate: containersNonRoot,
    notApplicable: 'no Dockerfile, Kubernetes container or compose user found',
  },
];
