/**
 * One image repository, one tag per program (docs/decisions.md, "An image the repository
 * publishes names its program by its tag"): a repository that publishes several programs into
 * ONE image repository tells them apart by the tag (`ghcr.io/acme/shop:cart-latest`,
 * `ghcr.io/acme/shop:web-1.4.2`). A deployment running such an image by name only (no `build`)
 * runs the program of the code unit the tag names: the tag, or the tag without one trailing
 * version part (`-latest`, `-1.4.2`, `-v2`, `-<commit sha>`), is that unit's folder name or one
 * of its names.
 *
 * Only for an image repository the repository itself builds or pushes (a CI `image-build` or
 * `image-push` record of that repository): a vendor image's tag (`redis:7-alpine`) names a
 * variant of someone else's program, never a folder of this one. A name two units share names
 * neither. Linear: one index of the units' names, one look-up per image reference.
 */
import { keyName, normalizeName } from './evidence';
import type { StoredEvidence } from './reconcile-model';
import { basename } from './shared/paths';

/** Docker's limit on a tag's length; a longer "tag" is no tag. */
const MAX_TAG = 128;
/** A trailing version part of a tag: `latest`, a version number, a commit sha. */
const VERSION_PART = /^(?:latest|v?\d{1,9}(?:\.\d{1,9}){0,3}|[0-9a-f]{7,40})$/;

/** The names a tag may give its program: itself, and itself without a trailing version part. */
function tagNames(tag: string): string[] {
  if (tag.length === 0 || tag.length > MAX_TAG) return [];
  const names = [normalizeName(tag)];
  const cut = Math.max(tag.lastIndexOf('-'), tag.lastIndexOf('_'));
  if (cut > 0 && VERSION_PART.test(tag.slice(cut + 1).toLowerCase()))
    names.push(normalizeName(tag.slice(0, cut)));
  return names.filter((n) => n !== '');
}

/**
 * The look-up `image-reference record -> code unit key` (undefined when the tag names no unit,
 * or the image is not one the repository publishes).
 */
export function unitByImageTag(evidence: readonly StoredEvidence[]) {
  const published = new Set<string>();
  // name -> unit key; null when two units share the name.
  const units = new Map<string, string | null>();
  for (const e of evidence) {
    const repo = e.attributes.repo;
    if (
      (e.evidence_kind === 'image-build' || e.evidence_kind === 'image-push') &&
      typeof repo === 'string' &&
      !repo.includes('${')
    )
      published.add(repo.toLowerCase());
    if (e.evidence_kind !== 'unit-declared' || typeof e.attributes.dir !== 'string') continue;
    const aliases = Array.isArray(e.attributes.aliases) ? e.attributes.aliases : [];
    const names = new Set(
      [basename(e.attributes.dir), keyName(e.subject_key), ...aliases.map(String)]
        .map(normalizeName)
        .filter((n) => n !== ''),
    );
    for (const n of names) {
      const prior = units.get(n);
      units.set(n, prior === undefined || prior === e.subject_key ? e.subject_key : null);
    }
  }
  return (e: StoredEvidence): string | undefined => {
    if (published.size === 0 || e.evidence_kind !== 'image-reference') return undefined;
    const { repo, tag } = e.attributes;
    if (typeof repo !== 'string' || typeof tag !== 'string') return undefined;
    if (!published.has(repo.toLowerCase())) return undefined;
    for (const n of tagNames(tag)) {
      const unit = units.get(n);
      if (unit) return unit;
    }
    return undefined;
  };
}
