/**
 * Container image references, read the same way wherever they are written (compose, Kubernetes,
 * Helm values, Kustomize, Terraform, Dockerfiles, CI jobs and scripts) so their keys line up.
 */
import { entityKey } from '../evidence';
import { NO_VARIABLES, expandVariables, isDynamic } from './variables';

export interface ImageRef {
  /** As written (trimmed). */
  raw: string;
  /**
   * Registry (host, with its port) and repository path, without tag or digest; Docker Hub's
   * `docker.io/`, `index.docker.io/` and `library/` are dropped (`nginx`, not
   * `docker.io/library/nginx`).
   */
  repo: string;
  tag: string | null;
  /** `sha256:...` as written after `@`. */
  digest: string | null;
  /** The digest is a full sha256. */
  pinned: boolean;
  /** A variable or template expression is left in the repository, tag or digest. */
  unresolved: boolean;
}

/** A digest that pins the image's content: a full `sha256:` hash. */
export function isSha256Digest(digest: string | null): boolean {
  return digest !== null && /^sha256:[0-9a-f]{64}$/i.test(digest);
}

/**
 * Offsets of the first `@`, and of the last `:` and `/` before it, that are not inside `${ }`,
 * `$( )`, `{{ }}` or `<< >>` (-1 for none).
 */
function separators(ref: string): { at: number; colon: number; slash: number } {
  let depth = 0;
  let at = -1;
  let colon = -1;
  let slash = -1;
  for (let i = 0; i < ref.length; i++) {
    const c = ref[i];
    if (c === '{' || c === '(' || c === '<') depth++;
    else if (c === '}' || c === ')' || c === '>') depth = Math.max(0, depth - 1);
    else if (depth > 0) continue;
    else if (c === '@' && at < 0) at = i;
    else if (c === ':' && at < 0) colon = i;
    else if (c === '/' && at < 0) slash = i;
  }
  return { at, colon, slash };
}

/**
 * Reads `[registry[:port]/]path[:tag][@digest]`, also behind `docker://`. Variable defaults
 * are applied first, as if the variable were unset (`${IMG:-nginx}:1.25` is `nginx` tag
 * `1.25`); a variable without one stays, and the reference is unresolved. Null for blank text.
 */
export function parseImageRef(written: string): ImageRef | null {
  const raw = written.trim();
  if (!raw) return null;
  const ref = expandVariables(raw.replace(/^docker:\/\//, ''), NO_VARIABLES);
  const { at, colon, slash } = separators(ref);
  const digest = at >= 0 ? ref.slice(at + 1) : null;
  let rest = at >= 0 ? ref.slice(0, at) : ref;
  let tag: string | null = null;
  if (colon > slash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const repo = rest.replace(/^(?:index\.)?docker\.io\//, '').replace(/^library\//, '');
  return {
    raw,
    repo,
    tag,
    digest,
    pinned: isSha256Digest(digest),
    unresolved: [repo, tag ?? '', digest ?? ''].some(isDynamic),
  };
}

/** `image:<repo>`; null while the repository is unknown (`${IMAGE}`), as nothing can be named. */
export function imageKey(image: ImageRef): string | null {
  return image.repo === '' || isDynamic(image.repo) ? null : entityKey('image', image.repo);
}

/** The facts every image-reference evidence carries. */
export function imageAttributes(image: ImageRef): Record<string, unknown> {
  return {
    image: image.raw,
    repo: image.repo,
    tag: image.tag,
    digest: image.digest,
    pinned: image.pinned,
    latest:
      !image.unresolved && image.digest === null && (image.tag === null || image.tag === 'latest'),
    ...(image.unresolved ? { unresolved: true } : {}),
  };
}
