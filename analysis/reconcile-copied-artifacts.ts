/**
 * A build module whose artifact another folder's image copies in (docs/decisions.md, "A module
 * whose archive another image copies in is part of that image", issue 23, session 16).
 *
 * A JVM module may build a runnable archive (a jar with a main class) that no deployment runs by
 * itself: another folder's Dockerfile copies the built file into its image (`COPY
 * target/jars/helper* /opt/helper.jar`) and starts it from its own `CMD`. The archive then runs
 * inside that image's container, as a part of that unit; the module is no unit of its own. The
 * Dockerfile names the file by the module's artifact name (a Maven `artifactId`, which is the
 * archive's base name unless `finalName` says otherwise), so the match is by that name. Pure.
 */
import { DEPLOYMENT_KINDS, type StoredEvidence } from './reconcile-model';
import { dirname, isWithin } from './shared/paths';

/** A copied archive of one Dockerfile: the folder it builds from and its file-name pattern. */
export interface CopiedArchive {
  /** The Dockerfile's folder (its build context). */
  dir: string;
  /** The last segment of the copied source, wildcards kept (`helper*`, `app-1.0.jar`). */
  name: string;
}

/** Every archive a Dockerfile of the repository copies in (`copied_files` of its records). */
export function copiedArchives(evidence: readonly StoredEvidence[]): CopiedArchive[] {
  const out: CopiedArchive[] = [];
  for (const e of evidence) {
    if (e.evidence_kind !== 'dockerfile-declared') continue;
    const files = Array.isArray(e.attributes.copied_files) ? e.attributes.copied_files : [];
    for (const f of files)
      if (typeof f === 'string')
        out.push({ dir: dirname(e.location.path), name: f.slice(f.lastIndexOf('/') + 1) });
  }
  return out;
}

/**
 * Whether a file-name pattern names an archive of the artifact `artifact`: its literal part up to
 * the first wildcard is the artifact's name, alone or followed by a version or extension
 * separator (`helper*`, `helper-*.jar`, `helper.jar`, `helper-1.0.jar`). A pattern that starts
 * with a wildcard (`*.jar`) names no particular artifact.
 */
export function namesArtifact(pattern: string, artifact: string): boolean {
  const wild = pattern.search(/[*?[]/);
  const literal = (wild < 0 ? pattern : pattern.slice(0, wild)).toLowerCase();
  const name = artifact.toLowerCase();
  if (name === '' || !literal.startsWith(name)) return false;
  const rest = literal.slice(name.length);
  if (wild >= 0) return rest === '' || /^[-_.]/.test(rest);
  return /^([-_.]\d[\w.-]*)?\.(jar|war|ear)$/.test(rest);
}

/**
 * A set that is only a JVM code unit (no Dockerfile of its own, no deployment) whose artifact a
 * Dockerfile in another folder copies into its image.
 */
export function isCopiedArchive(
  ev: readonly StoredEvidence[],
  archives: readonly CopiedArchive[],
): boolean {
  if (archives.length === 0) return false;
  if (ev.some((e) => DEPLOYMENT_KINDS.has(e.evidence_kind))) return false;
  if (ev.some((e) => e.evidence_kind === 'dockerfile-declared')) return false;
  const units = ev.filter((e) => e.evidence_kind === 'unit-declared');
  if (units.length === 0) return false;
  return units.every((u) => {
    const { dir, ecosystems } = u.attributes;
    if (typeof dir !== 'string' || !Array.isArray(ecosystems)) return false;
    if (!ecosystems.every((x) => x === 'maven' || x === 'gradle')) return false;
    const names = [u.attributes.manifest_name, u.attributes.name].filter(
      (n): n is string => typeof n === 'string' && n !== '',
    );
    return archives.some(
      (a) => !isWithin(a.dir, dir) && names.some((n) => namesArtifact(a.name, n)),
    );
  });
}
