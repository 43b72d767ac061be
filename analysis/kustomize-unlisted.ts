/**
 * Manifests a kustomization leaves out (docs/decisions.md, "Manifests a kustomization leaves
 * out"): a kustomization that lists the files of a folder one by one (`resources:
 * [./deployments/a.yaml, ...]`) assembles those files, not the folder. A Kubernetes manifest in
 * such a folder that no kustomization lists (as a resource, base, component or patch), and that
 * no deploy record applies by path (`kubectl apply -f`, a pipeline's or Skaffold's `manifests`),
 * is deployed by nothing here: its records stay evidence but shape no entity or edge. A folder
 * no kustomization enumerates file by file (listed whole, or not at all) is not judged, nor are
 * charts' rendered templates. Pure and deterministic.
 */
import type { Evidence } from './evidence';
import { dirname, isWithin, joinPath, normalizeDir } from './shared/paths';

type Ev = Evidence & { id: string };

const MANIFEST = /\.(ya?ml|json)$/i;
/** A remote resource (`github.com/...?ref=`, `https://...`): nothing of this repository. */
const REMOTE = /^[a-z][\w+.-]*:\/\/|^(github|gitlab)\.com\/|\?ref=/i;

const stringsOf = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** The manifest files no kustomization or deploy record takes, of folders a kustomization enumerates. */
export function unlistedManifests(evidence: Ev[]): Set<string> {
  const listed = new Set<string>();
  const enumerated = new Set<string>();
  const applied: string[] = [];
  for (const e of evidence) {
    const a = e.attributes;
    if (e.evidence_kind === 'kustomization-declared' && typeof a.dir === 'string') {
      const dir = a.dir === '.' ? '' : a.dir;
      const entries = [
        ...stringsOf(a.resources),
        ...stringsOf(a.bases),
        ...stringsOf(a.components),
      ];
      for (const r of [...entries, ...stringsOf(a.patch_files)]) {
        if (REMOTE.test(r) || !MANIFEST.test(r)) continue;
        const p = joinPath(dir, r);
        if (p === null) continue;
        listed.add(p);
        if (entries.includes(r)) enumerated.add(dirname(p));
      }
    }
    for (const m of stringsOf(a.manifests)) {
      const p = normalizeDir((m.split(/[*?{[]/)[0] ?? '').replace(/\/$/, ''));
      if (p !== null) applied.push(p);
    }
  }
  const out = new Set<string>();
  if (enumerated.size === 0) return out;
  for (const e of evidence) {
    const path = e.location.path;
    if (e.provider !== 'kubernetes' || e.attributes.rendered_from !== undefined) continue;
    if (!enumerated.has(dirname(path)) || listed.has(path) || out.has(path)) continue;
    if (applied.some((p) => isWithin(path, p))) continue;
    out.add(path);
  }
  return out;
}
