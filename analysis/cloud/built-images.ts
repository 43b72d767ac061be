/**
 * Images to folders (issue 23, item 4): an image a deployment runs by name only
 * (`image: acme/user-db`) is linked to the folder that builds it, so the Dockerfile's base
 * (`FROM mongo`) says what it runs. The builds known to the cloud files: a compose service with
 * both `image` and `build` (in any compose file), a compose service of the same name with a
 * `build` in another compose file of the same folder (a dev file beside the one that pulls), and
 * a Skaffold artifact. (CI `docker build -t` steps are read by the CI analyzer, not here.)
 */
import type { SourceFile } from '../evidence';
import { parseImageRef, type ImageRef } from '../shared/images';
import { dirname, joinPath } from '../shared/paths';
import { asString, isRecord } from '../shared/values';
import { classifyImage, type ImageClass } from './common';
import type { ComposeFile } from './compose-merge';
import { finalBaseImage } from './dockerfile';
import { isSkaffold, skaffoldArtifacts } from './skaffold';

interface Build {
  context: string;
  dockerfile: string | null;
  /** Where the build is declared, for the clue. */
  declared: string;
}

/** What an image-only service runs, from the Dockerfile that builds its image; null if unknown. */
export type BuiltEngine = (
  image: ImageRef | null,
  service: string,
  composeDir: string,
) => (ImageClass & { clue: string }) | null;

const repoOf = (raw: string) => parseImageRef(raw)?.repo.toLowerCase() ?? null;

/** The lookup over the builds the compose files and Skaffold files declare. */
export function builtEngines(parsed: ComposeFile[], files: Map<string, SourceFile>): BuiltEngine {
  const byImage = new Map<string, Build>();
  const byService = new Map<string, Build>();
  for (const cf of parsed) {
    for (const [name, svc] of Object.entries(cf.services)) {
      if (!isRecord(svc) || svc.build === undefined) continue;
      const spec = typeof svc.build === 'string' ? { context: svc.build } : svc.build;
      if (!isRecord(spec)) continue;
      const context = joinPath(dirname(cf.file.path), asString(spec.context) ?? '.');
      if (context === null) continue;
      const build = { context, dockerfile: asString(spec.dockerfile), declared: cf.file.path };
      const image = asString(svc.image);
      const repo = image ? repoOf(image) : null;
      if (repo && !byImage.has(repo)) byImage.set(repo, build);
      const key = `${dirname(cf.file.path)}\u0000${name}`;
      if (!byService.has(key)) byService.set(key, build);
    }
  }
  const skaffold = [...files.values()].filter((f) => isSkaffold(f.path));
  for (const a of skaffoldArtifacts(skaffold)) {
    const repo = repoOf(a.image);
    if (repo && !byImage.has(repo))
      byImage.set(repo, { context: a.context, dockerfile: a.dockerfile, declared: a.path });
  }
  return (image, service, composeDir) => {
    const build =
      (image ? byImage.get(image.repo.toLowerCase()) : undefined) ??
      byService.get(`${composeDir}\u0000${service}`);
    if (!build) return null;
    const path = joinPath(build.context, build.dockerfile ?? 'Dockerfile');
    const dockerfile = path === null ? undefined : files.get(path);
    const base = dockerfile ? finalBaseImage(dockerfile.text) : null;
    const cls = base ? classifyImage(parseImageRef(base)) : null;
    if (!cls || !path || !base) return null;
    return {
      ...cls,
      clue: `its image is built from ${path} (declared in ${build.declared}), FROM ${base}`,
    };
  };
}

interface Recorded {
  evidence_kind: string;
  attributes: Record<string, unknown>;
}

/**
 * The same link from CI: `docker build -t <image> [-f <Dockerfile>] <context>` records (the CI
 * analyzer) and Dockerfile records (this analyzer) meet only in reconcile. Image repository ->
 * what its Dockerfile's base runs; only images whose Dockerfile the repository holds.
 */
export function ciBuiltClasses(evidence: readonly Recorded[]): Map<string, ImageClass> {
  const bases = new Map<string, string>();
  for (const e of evidence) {
    const { dockerfile, base_image } = e.attributes;
    if (e.evidence_kind === 'dockerfile-declared' && typeof dockerfile === 'string')
      if (typeof base_image === 'string') bases.set(dockerfile, base_image);
  }
  const out = new Map<string, ImageClass>();
  for (const e of evidence) {
    const { context, dockerfile, repo } = e.attributes;
    if (e.evidence_kind !== 'image-build' || typeof repo !== 'string') continue;
    if (typeof context !== 'string') continue;
    const path =
      typeof dockerfile === 'string' ? joinPath('', dockerfile) : joinPath(context, 'Dockerfile');
    const base = path === null ? undefined : bases.get(path);
    const cls = base ? classifyImage(parseImageRef(base)) : null;
    if (cls && !out.has(repo.toLowerCase())) out.set(repo.toLowerCase(), cls);
  }
  return out;
}

/**
 * The folder a CI step builds each image repository from (`docker build -t <image> <context>`,
 * `docker/build-push-action` `context`/`file`): the Dockerfile's folder when named, else the
 * context. Null for a repository built from two folders (which one a deployment runs is not
 * said). Repositories still holding a variable (`${{ matrix.svc }}`) are left out.
 */
export function ciBuiltDirs(evidence: readonly Recorded[]): Map<string, string | null> {
  // A Dockerfile whose built folder is a build argument (`ARG APP`, `COPY ${APP} .`) builds
  // whichever program the build names: its folder is no one program's.
  const parameterized = new Set<string>();
  for (const e of evidence) {
    const { dockerfile, program_arg } = e.attributes;
    if (e.evidence_kind === 'dockerfile-declared' && typeof dockerfile === 'string')
      if (typeof program_arg === 'string') parameterized.add(dirname(dockerfile));
  }
  const out = new Map<string, string | null>();
  for (const e of evidence) {
    const { context, dockerfile, repo } = e.attributes;
    if (e.evidence_kind !== 'image-build' || typeof repo !== 'string') continue;
    if (typeof context !== 'string' || repo.includes('$') || context.includes('$')) continue;
    let dir: string | null;
    if (typeof dockerfile === 'string') {
      if (dockerfile.includes('$')) continue;
      const path = joinPath('', dockerfile);
      dir = path === null ? null : dirname(path);
    } else dir = joinPath(context, '.');
    if (dir === null) continue;
    const key = repo.toLowerCase();
    const prior = out.get(key);
    const own = !parameterized.has(dir) && (prior === undefined || prior === dir);
    out.set(key, own ? dir : null);
  }
  return out;
}
