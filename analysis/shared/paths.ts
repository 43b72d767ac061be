/**
 * Repository-relative paths: always `/`-separated, no leading `/`, and `''` is the repository
 * root. Not `node:path`: analyzers read paths from an archive, not from this machine's disk.
 */
import { compareStrings } from './text';

/** `a/b/c.ts` -> `a/b`; a file at the root -> `''`. */
export function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** `a/b/c.ts` -> `c.ts`. */
export function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The last segment without its extension: `.github/workflows/ci.yml` -> `ci`, `.env` -> `.env`. */
export function stem(path: string): string {
  const last = basename(path);
  const dot = last.lastIndexOf('.');
  return dot > 0 ? last.slice(0, dot) : last;
}

/**
 * `\`, `.`, empty segments and `..` resolved; `''` for the root itself; null when the path
 * climbs out of the repository.
 */
export function normalizeDir(p: string): string | null {
  const out: string[] = [];
  for (const seg of p.replace(/\\/g, '/').split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return null;
      out.pop();
      continue;
    }
    out.push(seg);
  }
  return out.join('/');
}

/** Like normalizeDir, for a file: the root is no file, so it is null too. */
export function normalizePath(p: string): string | null {
  const dir = normalizeDir(p);
  return dir === '' ? null : dir;
}

/** `rel` resolved against `dir`; null when it climbs out of the repository. */
export function joinPath(dir: string, rel: string): string | null {
  return normalizeDir(dir === '' ? rel : `${dir}/${rel}`);
}

/** `path` is `dir` or inside it (`''` contains everything). */
export function isWithin(path: string, dir: string): boolean {
  return dir === '' || path === dir || path.startsWith(`${dir}/`);
}

/** `path` relative to `dir`, which must contain it. */
export function relativeTo(path: string, dir: string): string {
  if (dir === '') return path;
  return path === dir ? '' : path.slice(dir.length + 1);
}

/** A copy ordered by path, the order every analyzer reads files in. */
export function sortByPath<T extends { path: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => compareStrings(a.path, b.path));
}

/** Extensions that make a `Dockerfile.<x>` a file about Dockerfiles rather than one. */
const NOT_DOCKERFILE_EXT =
  /\.(dockerignore|ts|tsx|mts|cts|js|jsx|mjs|cjs|go|py|rb|rs|java|kt|cs|md|txt|json|ya?ml|toml|sh|snap|lock|orig|bak)$/i;

/**
 * `Dockerfile`, `dockerfile`, `Containerfile`, `Dockerfile.prod`, `Dockerfile-dev`,
 * `api.Dockerfile`; not `Dockerfile.md`, `Dockerfile.dockerignore` or `dockerfile.ts`.
 */
export function isDockerfile(path: string): boolean {
  const base = basename(path);
  if (/^(dockerfile|containerfile)$/i.test(base) || /\.dockerfile$/i.test(base)) return true;
  return /^(Dockerfile|Containerfile)[.-][\w.-]+$/.test(base) && !NOT_DOCKERFILE_EXT.test(base);
}

/** Where a CODEOWNERS file may stand, in the order the forges look for it. */
export const CODEOWNERS_PATHS: readonly string[] = [
  '.github/CODEOWNERS',
  'CODEOWNERS',
  'docs/CODEOWNERS',
];
