/**
 * .NET projects the deployment does not run (docs/decisions.md, "A .NET project no deployment
 * runs, beside a deployment that runs others of the solution, is no service", issue 23, session 16).
 *
 * A .NET solution holds every project of the system: the hosts the deployment runs, and others
 * (a service still being written, a BFF or UI run from the IDE, a sample host). The code analyzer
 * classes every project using the web or worker SDK as a service, because alone it cannot tell
 * which are deployed. When the repository's deployment (a compose service, a workload, an Aspire
 * or Tye resource) runs at least one project of the solution, the deployed projects are known:
 * those the deployment builds or runs. A service project no deployment runs is then no entity of
 * the deployed graph; its records stay evidence. Without any deployed project (a solution run
 * from the IDE, a deployment of other languages only) nothing changes. Pure.
 */
import { DEPLOYMENT_KINDS, type StoredEvidence } from './reconcile-model';

const isDotnetUnit = (e: StoredEvidence) =>
  e.evidence_kind === 'unit-declared' &&
  Array.isArray(e.attributes.ecosystems) &&
  e.attributes.ecosystems.includes('nuget');

/**
 * Of merged sets (by representative, with their evidence), those made only of .NET service
 * projects that no deployment runs, when some deployment runs another .NET project. Sets that
 * also hold a declared datastore/queue/bucket, or a unit of another ecosystem, are kept.
 */
export function unrunDotnetProjects(
  sets: ReadonlyMap<string, { ev: readonly StoredEvidence[] }>,
): Set<string> {
  const out = new Set<string>();
  const deployedProject = [...sets.values()].some(
    ({ ev }) => ev.some(isDotnetUnit) && ev.some((e) => DEPLOYMENT_KINDS.has(e.evidence_kind)),
  );
  if (!deployedProject) return out;
  for (const [r, { ev }] of sets) {
    const units = ev.filter((e) => e.evidence_kind === 'unit-declared');
    if (units.length === 0 || !units.every(isDotnetUnit)) continue;
    if (!units.every((e) => (e.attributes.unit_class ?? 'service') === 'service')) continue;
    if (
      ev.some(
        (e) =>
          DEPLOYMENT_KINDS.has(e.evidence_kind) ||
          /^(datastore|queue|bucket)-declared$/.test(e.evidence_kind),
      )
    )
      continue;
    out.add(r);
  }
  return out;
}
