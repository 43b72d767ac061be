/**
 * An image the repository can build but none of its deployments runs (docs/decisions.md, "A
 * lone Dockerfile no deployment runs", issue 23, session 14).
 *
 * A Dockerfile is a build recipe, not a deployment: a container runs its image only when
 * something runs that image (a compose service's `build`, a workload or compose `image:` of the
 * same name, a CI build whose image a deployment runs). Reconcile joins such runners to the
 * Dockerfile's folder; a set left with the Dockerfile's own records alone is run by nothing the
 * repository holds. When the repository has no deployment, that Dockerfile (with an `EXPOSE`) is
 * the only sign of a deployable and stays one. When the repository's deployments run prebuilt
 * service images (a compose `image:` without `build`, a Kubernetes workload), the system is
 * deployed from those images, and the unrun Dockerfile is another packaging of it (an all-in-one
 * image for a quick trial, an alternative stack's image), not a unit of the deployed graph. Its
 * records stay evidence. Pure.
 */
import { keyKind } from './evidence';
import { DEPLOYMENT_KINDS, type StoredEvidence } from './reconcile-model';
import { parseImageRef } from './shared/images';
import { joinPath } from './shared/paths';

/**
 * Whether the repository's (primary) deployments run at least one prebuilt service image: a
 * compose service with an `image` and no `build`, or a workload (its containers name images).
 */
export function deploysPrebuiltServices(evidence: readonly StoredEvidence[]): boolean {
  return evidence.some((e) => {
    if (!DEPLOYMENT_KINDS.has(e.evidence_kind) || keyKind(e.subject_key) !== 'service')
      return false;
    if (e.attributes.in_test === true) return false;
    if (e.evidence_kind === 'workload-declared') return true;
    const { image, build } = e.attributes;
    return image !== null && image !== undefined && (build === null || build === undefined);
  });
}

/**
 * A set known only by its Dockerfiles' own records (no code unit, no deployment declaration, no
 * record from any other file), in a repository whose deployments run prebuilt service images.
 */
export function isUnrunImage(ev: readonly StoredEvidence[], prebuiltDeployed: boolean): boolean {
  if (!prebuiltDeployed) return false;
  const dockerfiles = ev.filter((e) => e.evidence_kind === 'dockerfile-declared');
  if (dockerfiles.length === 0) return false;
  const files = new Set(dockerfiles.map((e) => e.location.path));
  return ev.every((e) => files.has(e.location.path) && !DEPLOYMENT_KINDS.has(e.evidence_kind));
}

const repoOf = (raw: unknown) =>
  typeof raw === 'string' ? (parseImageRef(raw)?.repo.toLowerCase() ?? null) : null;

/**
 * Folders whose image is only a base image (docs/decisions.md, "A base image is no service",
 * issue 23, session 15): a CI step builds an image from the folder (`image-build`, its context
 * or Dockerfile), another Dockerfile of the repository starts `FROM` that image, and no
 * deployment file runs it (no image reference outside the repository's Dockerfiles). Returns the
 * Dockerfile paths of such builds. Linear in the records.
 */
export function baseOnlyDockerfiles(evidence: readonly StoredEvidence[]): Set<string> {
  const dockerfiles = new Set<string>();
  for (const e of evidence)
    if (e.evidence_kind === 'dockerfile-declared') dockerfiles.add(e.location.path);
  // Image repositories other Dockerfiles start FROM, by the Dockerfile that does.
  const fromBy = new Map<string, Set<string>>();
  // Image repositories something other than a Dockerfile runs (a compose service, a workload).
  const run = new Set<string>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'image-reference') continue;
    const repo = repoOf(e.attributes.image) ?? repoOf(e.attributes.repo);
    if (repo === null) continue;
    if (!dockerfiles.has(e.location.path)) run.add(repo);
    else fromBy.set(repo, (fromBy.get(repo) ?? new Set()).add(e.location.path));
  }
  const out = new Set<string>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'image-build') continue;
    const repo = repoOf(e.attributes.repo);
    const { context, dockerfile } = e.attributes;
    if (repo === null || run.has(repo) || typeof context !== 'string') continue;
    const path =
      typeof dockerfile === 'string' ? joinPath('', dockerfile) : joinPath(context, 'Dockerfile');
    if (path === null || !dockerfiles.has(path)) continue;
    // Another Dockerfile is built FROM it (not the folder's own multi-stage build).
    if ([...(fromBy.get(repo) ?? [])].some((p) => p !== path)) out.add(path);
  }
  return out;
}

/** A set with no deployment whose Dockerfile builds only a base image of other Dockerfiles. */
export function isBaseImage(ev: readonly StoredEvidence[], baseOnly: Set<string>): boolean {
  return ev.some((e) => e.evidence_kind === 'dockerfile-declared' && baseOnly.has(e.location.path));
}
