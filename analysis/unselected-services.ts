/**
 * Kubernetes Services that select nothing (docs/decisions.md, "A Service that selects no pod of
 * the repository and that nothing addresses is no deployable"). A Service exposes the Pods its
 * selector matches; it runs nothing itself. A Service written as a plain manifest (its selector
 * read as written, not through our approximate Helm rendering) whose selector matches no
 * workload of the manifests analysed with it, and whose name no other record of the repository
 * uses (no host, alias, declaration or edge), exposes Pods the repository does not deploy that
 * way: a NodePort opened onto a chart's Pods for local debugging, a kustomize component's patch.
 * Its record stays evidence (its exposure is still cited) but shapes no entity. Linear in the
 * records. Pure and deterministic.
 */
import { keyName, normalizeName, type Evidence } from './evidence';

type Ev = Evidence & { id: string };

/** A plain manifest's Service record whose selector matched no workload of its manifests. */
function selectsNothing(e: Ev): boolean {
  const a = e.attributes;
  return (
    e.evidence_kind === 'service-exposed' &&
    e.provider === 'kubernetes' &&
    a.selected_workload === null &&
    a.rendered_from === undefined &&
    typeof a.selector === 'object' &&
    a.selector !== null &&
    Object.keys(a.selector).length > 0
  );
}

/** Evidence without the records of Services that select nothing and that nothing addresses. */
export function withoutUnselectedServices<T extends Ev>(evidence: T[]): T[] {
  if (!evidence.some(selectsNothing)) return evidence;
  // Every name another record uses: subjects, objects and declared aliases.
  const used = new Set<string>();
  for (const e of evidence) {
    if (selectsNothing(e)) continue;
    used.add(keyName(e.subject_key));
    if (e.object_key) used.add(keyName(e.object_key));
    const aliases = e.attributes.aliases;
    if (Array.isArray(aliases)) for (const x of aliases) used.add(normalizeName(String(x)));
  }
  return evidence.filter((e) => !selectsNothing(e) || used.has(keyName(e.subject_key)));
}
