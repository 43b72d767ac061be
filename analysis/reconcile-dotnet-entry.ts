/**
 * .NET images built from a folder above their project (docs/decisions.md, "A Dockerfile running
 * `dotnet <Assembly>.dll` builds that project", issue 23, session 16).
 *
 * The .NET container recipe Visual Studio and the .NET docs generate publishes one project and
 * ends `ENTRYPOINT ["dotnet", "<Assembly>.dll"]`; the Dockerfile often sits in the service's folder
 * above the `.Api` project (`src/Services/Orders/Dockerfile` building
 * `src/Services/Orders/Acme.Orders.Api/Acme.Orders.Api.csproj`), built from the repository root,
 * and its final stage copies only the published output (`COPY --from=publish`), so neither its
 * folder nor a copied folder names the project. The assembly does: by default MSBuild names it
 * after the project file (`$(MSBuildProjectName)`). A Dockerfile whose final program is `dotnet
 * X.dll` builds the one .NET project named `X`. Pure.
 */
import type { StoredEvidence } from './reconcile-model';
import { dirname } from './shared/paths';

/** The assembly a Dockerfile's ENTRYPOINT/CMD runs with `dotnet` (`dotnet Acme.Api.dll`), or null. */
export function dotnetAssembly(program: unknown): string | null {
  if (typeof program !== 'string') return null;
  // Exec form (`["dotnet", "Acme.Api.dll"]`) or shell form (`dotnet Acme.Api.dll --urls ...`).
  const words = program
    .replace(/[[\]",]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
  const at = words.findIndex((w) => /(^|\/)dotnet$/.test(w));
  if (at < 0) return null;
  const m = /^(?:.*\/)?([A-Za-z_][\w.-]*)\.dll$/.exec(words[at + 1] ?? '');
  return m ? m[1]! : null;
}

/**
 * Per Dockerfile folder, the .NET code unit its `dotnet X.dll` program runs: the one `nuget` unit
 * whose project file is named `X` (case-insensitive). A name two projects share, or a folder
 * whose Dockerfiles run different assemblies, names none.
 */
export function dotnetEntryUnits(evidence: readonly StoredEvidence[]): Map<string, string> {
  const byProject = new Map<string, string[]>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'unit-declared') continue;
    const { manifest_name: name, ecosystems } = e.attributes;
    if (typeof name !== 'string' || !Array.isArray(ecosystems) || !ecosystems.includes('nuget'))
      continue;
    const k = name.toLowerCase();
    byProject.set(k, [...new Set([...(byProject.get(k) ?? []), e.subject_key])]);
  }
  const found = new Map<string, Set<string>>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'dockerfile-declared' || typeof e.attributes.dockerfile !== 'string')
      continue;
    const assembly =
      dotnetAssembly(e.attributes.entrypoint) ?? dotnetAssembly(e.attributes.cmd) ?? null;
    const units = assembly === null ? undefined : byProject.get(assembly.toLowerCase());
    if (units?.length !== 1) continue;
    const dir = dirname(e.attributes.dockerfile);
    found.set(dir, (found.get(dir) ?? new Set()).add(units[0]!));
  }
  const out = new Map<string, string>();
  for (const [dir, units] of found) if (units.size === 1) out.set(dir, [...units][0]!);
  return out;
}
