/**
 * Names resolved within their deployment variant (docs/decisions.md, "Names resolve within their
 * variant"). A repository can hold several manifest folders of one system (a base folder and a
 * Cloud SQL or pooler alternative beside it), each declaring a ConfigMap, a Secret or a Service of
 * the same name with different contents. A reference from a workload resolves to the object of
 * that name nearest to the workload's own file: the one whose folder shares the longest leading
 * path with the workload's folder. When the nearest are in several folders, none of them the
 * workload's folder or one above it, and their contents differ, each is another variant's and
 * the reference resolves to nothing: a missing value, never a cross-wired one. Pure.
 */
import { dirname } from '../shared/paths';

/** Leading folder segments `a` and `b` share. */
function shared(a: string, b: string): number {
  const x = a === '' ? [] : a.split('/');
  const y = b === '' ? [] : b.split('/');
  let n = 0;
  while (n < x.length && n < y.length && x[n] === y[n]) n++;
  return n;
}

function depth(dir: string): number {
  return dir === '' ? 0 : dir.split('/').length;
}

/**
 * Of `candidates` (objects of one name, in declaration order), the one of the same variant as a
 * reference made from file `from`; the first one when `from` is null or only one is declared.
 * `same` says whether two candidates carry the same contents (then which one is taken is moot).
 */
export function nearestOf<T extends { file: { path: string } }>(
  candidates: T[],
  from: string | null,
  same: (a: T, b: T) => boolean = () => false,
): T | null {
  if (candidates.length <= 1 || from === null) return candidates[0] ?? null;
  const origin = dirname(from);
  const ranked = candidates.map((c) => ({ c, n: shared(dirname(c.file.path), origin) }));
  const best = Math.max(...ranked.map((r) => r.n));
  const nearest = ranked.filter((r) => r.n === best).map((r) => r.c);
  // The workload's own folder or one above it (a common base) is its own variant's.
  const own = nearest.find((c) => depth(dirname(c.file.path)) === best);
  if (own) return own;
  const folders = new Set(nearest.map((c) => dirname(c.file.path)));
  if (folders.size === 1) return nearest[0]!;
  return nearest.every((c) => same(c, nearest[0]!)) ? nearest[0]! : null;
}
