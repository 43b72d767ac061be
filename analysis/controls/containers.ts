/** The container controls: not privileged, resource limits, non-root (analysis/controls/effective.ts). */
import type { StoredEvidence } from '../reconcile';
import type { ControlSpec } from './catalog';
import { uniqueSorted } from '../shared/text';
import { bool, containers, ofKind, onEvidence, type Check, type Context } from './check';
import { composeScope, containersNonRoot } from './effective';

/**
 * A compose service that names neither an image nor a build is a fragment another file of the
 * same project completes (`compose.full.yaml` adding `depends_on` to a service of
 * `compose.yaml`): Compose merges them, so the service is judged once, where it is declared.
 */
function isFragment(e: StoredEvidence, declared: Set<string>): boolean {
  const a = e.attributes;
  return a.image == null && a.build == null && declared.has(e.subject_key);
}

/** Compose services declared with an image or a build (the ones a fragment can complete). */
function declaredServices(ctx: Context): Set<string> {
  return new Set(
    ofKind(ctx, 'service-declared')
      .filter((e) => e.provider === 'docker-compose')
      .filter((e) => e.attributes.image != null || e.attributes.build != null)
      .map((e) => e.subject_key),
  );
}

/**
 * The containers the container controls judge: every Kubernetes container and compose service,
 * except the services of test compose files and override fragments (composeOutOfScope says which).
 */
function deployedContainers(ctx: Context): ReturnType<typeof containers> {
  const declared = declaredServices(ctx);
  return containers(ctx).filter(
    ({ e }) =>
      e.evidence_kind !== 'service-declared' ||
      (composeScope(e.location.path) === null && !isFragment(e, declared)),
  );
}

/** The compose files and fragments left out of the container controls, for the applicability. */
export function composeOutOfScope(ctx: Context): string[] {
  const declared = declaredServices(ctx);
  return uniqueSorted(
    ofKind(ctx, 'service-declared')
      .filter((e) => e.provider === 'docker-compose')
      .map((e) => {
        const why = composeScope(e.location.path);
        if (why) return `${e.location.path} (${why})`;
        return isFragment(e, declared)
          ? `${e.location.path} ${e.subject_key} (an override merged into its declaration)`
          : null;
      })
      .filter((x): x is string => x !== null),
  );
}

function containersNotPrivileged(ctx: Context): Check[] {
  return deployedContainers(ctx).map(({ e, c, name, label }) => {
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
  return deployedContainers(ctx).map(({ e, c, name, label }) => {
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
