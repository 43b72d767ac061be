/**
 * The address variables a deployment's program reads, for the configuration-indirection rule
 * (analysis/reconcile-addresses.ts):
 *
 * - A compose service that builds no code of its own but starts in a folder of the repository
 *   (`working_dir: /internal/trainer` under the bind mount `./internal:/internal`) runs the code
 *   unit of that folder: the unit's reads are its reads.
 * - A unit's reads include those of the libraries it imports (another unit's package), credited
 *   per function for Go: a read inside an exported function (`go_function`, see
 *   analysis/code/go-functions.ts) counts only for units whose non-test code selects that function
 *   (`client.NewUsersClient`, the import's `uses`; an import selecting nothing, `dir.*`, selects
 *   every function); any other read of the library counts for every
 *   unit importing it. Direct imports only; a test's reads and imports are not the program's.
 */
import { keyKind } from './evidence';
import { builtDir } from './reconcile-identity';
import { dirname, normalizeDir } from './shared/paths';
import type { StoredEvidence } from './reconcile-model';

/** Code units by their folder (representative keys). */
function unitsByDir(evidence: StoredEvidence[], rep: (key: string) => string): Map<string, string> {
  const units = new Map<string, string>();
  for (const e of evidence)
    if (e.evidence_kind === 'unit-declared' && typeof e.attributes.dir === 'string') {
      const dir = normalizeDir(e.attributes.dir);
      if (dir !== null) units.set(dir, rep(e.subject_key));
    }
  return units;
}

/**
 * Service -> the unit (representative key) whose folder it builds, for services kept apart from
 * that unit: two services of one compose project never merge, so when several build one folder
 * (one image, run with different `entrypoint`s) the unit joins one of them and the others are
 * entities of their own. Each still runs the unit's code (compose `build:` is the image's
 * source), so the unit's reads are theirs. Not a service running one Go program of the unit
 * (`runs_program`: its own code is re-subjected to it, reconcile-programs.ts), nor one whose
 * declarations build two different units.
 */
export function builtUnits(
  evidence: StoredEvidence[],
  rep: (key: string) => string,
): Map<string, string> {
  const units = unitsByDir(evidence, rep);
  const found = new Map<string, Set<string>>();
  const programs = new Set<string>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'service-declared' || keyKind(e.subject_key) !== 'service') continue;
    const service = rep(e.subject_key);
    if (typeof e.attributes.runs_program === 'string') programs.add(service);
    const built = builtDir(e);
    const unit = built === null ? undefined : units.get(built);
    if (unit === undefined || unit === service) continue;
    found.set(service, (found.get(service) ?? new Set()).add(unit));
  }
  const out = new Map<string, string>();
  for (const [service, set] of found)
    if (set.size === 1 && !programs.has(service)) out.set(service, [...set][0]!);
  return out;
}

/** Service -> the unit (representative key) whose folder its `working_dir` names through a bind mount. */
function runDirUnits(
  evidence: StoredEvidence[],
  rep: (key: string) => string,
): Map<string, string> {
  const units = unitsByDir(evidence, rep);
  const mounts = new Map<string, { host: string; target: string }[]>();
  for (const e of evidence) {
    const a = e.attributes;
    if (e.evidence_kind !== 'volume-mount' || a.type !== 'bind') continue;
    if (typeof a.host_path !== 'string' || typeof a.target !== 'string') continue;
    const list = mounts.get(e.subject_key) ?? [];
    list.push({ host: a.host_path, target: a.target.replace(/\/+$/, '') });
    mounts.set(e.subject_key, list);
  }
  const out = new Map<string, string>();
  for (const e of evidence) {
    const wd = e.attributes.working_dir;
    if (e.evidence_kind !== 'service-declared' || typeof wd !== 'string' || !wd.startsWith('/'))
      continue;
    const dir = wd.replace(/\/+$/, '');
    // The deepest mount holding the folder.
    const m = (mounts.get(e.subject_key) ?? [])
      .filter((x) => x.target !== '' && (dir === x.target || dir.startsWith(`${x.target}/`)))
      .sort((a, b) => b.target.length - a.target.length)[0];
    if (!m) continue;
    const repoDir = normalizeDir(`${m.host}${dir.slice(m.target.length)}`);
    const unit = repoDir === null ? undefined : units.get(repoDir);
    if (unit !== undefined) out.set(rep(e.subject_key), unit);
  }
  return out;
}

/** Unit -> the variables its code reads, with its libraries' reads credited as above. */
function unitReads(
  evidence: StoredEvidence[],
  rep: (key: string) => string,
): Map<string, Set<string>> {
  const own = new Map<string, Set<string>>();
  // Library reads: unit -> [variable, `dir.Function` or null].
  const lib = new Map<string, [string, { dir: string; fn: string } | null][]>();
  for (const e of evidence) {
    if (e.source_type !== 'code' || e.evidence_kind !== 'env-read') continue;
    const v = e.attributes.variable;
    if (typeof v !== 'string' || e.attributes.source === 'env-file') continue;
    const r = rep(e.subject_key);
    own.set(r, (own.get(r) ?? new Set()).add(v));
    if (e.attributes.in_test === true) continue;
    const fn = e.attributes.go_function;
    const list = lib.get(r) ?? [];
    const dir = dirname(e.location.path);
    list.push([v, typeof fn === 'string' ? { dir, fn: `${dir}.${fn}` } : null]);
    lib.set(r, list);
  }
  const uses = new Map<string, Set<string>>();
  const imports = new Map<string, Set<string>>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'import' || !e.object_key || e.attributes.in_test === true) continue;
    const from = rep(e.subject_key);
    const to = rep(e.object_key);
    if (from === to) continue;
    imports.set(from, (imports.get(from) ?? new Set()).add(to));
    const u = uses.get(from) ?? new Set<string>();
    for (const name of Array.isArray(e.attributes.uses) ? e.attributes.uses : [])
      u.add(String(name));
    uses.set(from, u);
  }
  const out = new Map<string, Set<string>>();
  for (const [unit, vars] of own) out.set(unit, new Set(vars));
  for (const [unit, libs] of imports)
    for (const l of libs)
      for (const [v, fn] of lib.get(l) ?? [])
        if (fn === null || uses.get(unit)?.has(fn.fn) || uses.get(unit)?.has(`${fn.dir}.*`))
          out.set(unit, (out.get(unit) ?? new Set()).add(v));
  return out;
}

/**
 * Entities with code (representative keys) and what each reads: units, compose services
 * running a unit's folder, and compose services building a unit they are kept apart from.
 */
export function programReads(
  evidence: StoredEvidence[],
  rep: (key: string) => string,
): { coded: Set<string>; reads: Map<string, Set<string>> } {
  const coded = new Set<string>();
  for (const e of evidence)
    if (e.source_type === 'code' && e.evidence_kind === 'unit-declared')
      coded.add(rep(e.subject_key));
  const reads = unitReads(evidence, rep);
  for (const [service, unit] of [...runDirUnits(evidence, rep), ...builtUnits(evidence, rep)]) {
    if (coded.has(service) || !coded.has(unit)) continue;
    coded.add(service);
    const r = reads.get(unit);
    if (r) reads.set(service, r);
  }
  return { coded, reads };
}
