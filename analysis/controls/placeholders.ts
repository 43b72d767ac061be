/**
 * Values that are templates, placeholders or variables are never secrets and never unpinned
 * images: no-committed-secrets and images-pinned leave them out and say why in the assessment's
 * applicability. Which secret values are placeholders is decided where the value is read
 * (analysis/shared/secrets.ts, placeholderReason: the evidence carries `placeholder`); which
 * image references are placeholders is decided here, from the evidence of the whole repository.
 */
import { parseImageRef } from '../shared/images';
import { uniqueSorted } from '../shared/text';
import type { StoredEvidence } from '../reconcile';
import { ofKind, type Context } from './check';

/** Names of the services whose images this repository builds from its own Dockerfiles. */
function builtImages(ctx: Context): Set<string> {
  return new Set(
    ofKind(ctx, 'dockerfile-declared').map((e) =>
      e.subject_key.slice(e.subject_key.indexOf(':') + 1).toLowerCase(),
    ),
  );
}

/** A registry host: the first path segment with a dot or a port, or `localhost`. */
const hasRegistry = (repo: string): boolean => {
  const first = repo.split('/')[0] ?? '';
  return repo.includes('/') && (/[.:]/.test(first) || first === 'localhost');
};

/**
 * Why an image reference is a placeholder and not an image anyone runs as written (null: it is
 * one): a variable left for deploy time; an upper-case segment (image names are lower case, so
 * `CONTAINER_IMAGES_REGISTRY/x` is text a script replaces); `<...>`; a kustomize `images:` entry
 * that renames an image without a tag (the rendered image keeps the tag of the one it renames);
 * or a bare name, without registry, tag or digest, of an image this repository builds (Skaffold,
 * kustomize and CI set the real name and tag when they build and deploy it).
 */
export function imagePlaceholder(e: StoredEvidence, built: Set<string>): string | null {
  const a = e.attributes;
  const written = String(a.image ?? e.object_key ?? '');
  if (a.unresolved === true) return 'a variable set at deploy time';
  if (/<[^<>]*>/.test(written)) return 'a <...> placeholder';
  const ref = parseImageRef(written);
  if (!ref) return null;
  if (ref.repo.split('/').some((s) => /[A-Z]/.test(s) && /^[A-Z0-9_.-]+$/.test(s)))
    return 'an upper-case placeholder a script replaces';
  if (
    e.evidence_kind === 'image-reference' &&
    e.provider === 'kustomize' &&
    typeof a.original === 'string' &&
    a.new_tag == null &&
    a.digest == null
  )
    return 'a kustomize rename that keeps the tag of the image it renames';
  if (
    e.provider !== 'dockerfile' &&
    ref.tag === null &&
    ref.digest === null &&
    !hasRegistry(ref.repo) &&
    !ref.repo.includes('/') &&
    built.has(ref.repo.toLowerCase())
  )
    return 'an image this repository builds, named and tagged by its build tool';
  return null;
}

/** The image references images-pinned judges, and the placeholders it leaves out. */
export function imagesToJudge(ctx: Context): {
  judged: StoredEvidence[];
  placeholders: Array<{ e: StoredEvidence; why: string }>;
} {
  const built = builtImages(ctx);
  const judged: StoredEvidence[] = [];
  const placeholders: Array<{ e: StoredEvidence; why: string }> = [];
  for (const e of ofKind(ctx, 'image-reference')) {
    const why = imagePlaceholder(e, built);
    if (why) placeholders.push({ e, why });
    else judged.push(e);
  }
  return { judged, placeholders };
}

/** Literal-secret evidence that is a placeholder (`placeholder` set where the value was read). */
export function isSecretPlaceholder(e: StoredEvidence): boolean {
  return typeof e.attributes.placeholder === 'string';
}

/** `3 placeholder(s) not assessed: a.yaml (X: why), ...` for an applicability (empty: none). */
export function placeholderNote(key: string, ctx: Context): string {
  const items =
    key === 'images-pinned'
      ? imagesToJudge(ctx).placeholders.map(
          ({ e, why }) =>
            `${e.location.path} (${String(e.attributes.image ?? e.object_key)}: ${why})`,
        )
      : key === 'no-committed-secrets'
        ? ofKind(ctx, 'literal-secret')
            .filter(isSecretPlaceholder)
            .map(
              (e) =>
                `${e.location.path} (${String(e.attributes.variable ?? '')}: ${String(e.attributes.placeholder)})`,
            )
        : [];
  const list = uniqueSorted(items);
  if (list.length === 0) return '';
  const shown = list.slice(0, 20).join(', ');
  return `; ${list.length} placeholder(s), not applicable: ${shown}${list.length > 20 ? `, and ${list.length - 20} more` : ''}`;
}
