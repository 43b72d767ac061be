/**
 * One image, many programs: a unit holding several Go main packages (analysis/code/programs.ts)
 * built once and run by several compose services, each with its own `entrypoint` (or `command`)
 * naming one program (`entrypoint: orders`). The code of a program (its folder and the unit's
 * packages only it imports) is that service's code, so its records (connections, configuration
 * keys read, registry names) take the service as their subject instead of the whole unit.
 * Such a service is not the unit itself (no `build` identity joins them: `runs_program` on its
 * declaration), and a unit whose every building service runs one of its programs is no entity by
 * itself (`programs_run` on its declaration).
 * A folder imported by several of the deployed programs (a shared client) stays the unit's; the
 * connections of a folder only programs no deployment runs hold (a load generator beside the
 * services) stay evidence, without the relationship.
 *
 * Also here: a `config-key-read` (analysis/code/config-keys.ts) connects only to a host some
 * deployment declares; otherwise it stays evidence, without the relationship. A connection found
 * on a configuration line whose key code reads is no connection of the whole unit: the reads say
 * which program connects, so that record stays evidence too.
 */
import { keyKind, keyName, normalizeName } from './evidence';
import { builtDir } from './reconcile-identity';
import { DEPLOYMENT_KINDS, type StoredEvidence } from './reconcile-model';
import { basename, dirname, normalizeDir } from './shared/paths';

/** Interpreters and shells: the program they run is in their arguments, not read here. */
const WRAPPERS = /^(sh|bash|ash|dash|zsh|env|tini|dumb-init|exec|su-exec|gosu)$/;

/** The program an entrypoint (else command) starts: `./orders` -> orders; compose or container. */
export function programRun(e: StoredEvidence): string | null {
  for (const field of ['entrypoint', 'command']) {
    const words = e.attributes[field];
    if (!Array.isArray(words) || words.length === 0) continue;
    const first = basename(String(words[0]).trim());
    if (first === '' || WRAPPERS.test(first)) return null;
    return normalizeName(first) || null;
  }
  return null;
}

interface Program {
  unit: string;
  program: string;
  dirs: string[];
}

/** Code records re-subjected to the deployment that runs their program (see the module comment). */
export function assignPrograms(evidence: StoredEvidence[]): StoredEvidence[] {
  const unitDirs = new Map<string, string>();
  const programs = new Map<string, Program>();
  const declared = new Set<string>();
  for (const e of evidence) {
    if (e.evidence_kind === 'unit-declared' && typeof e.attributes.dir === 'string') {
      const dir = normalizeDir(e.attributes.dir);
      if (dir !== null) unitDirs.set(dir, e.subject_key);
    }
    if (e.evidence_kind === 'program-declared' && Array.isArray(e.attributes.dirs)) {
      const program = String(e.attributes.program);
      programs.set(`${e.subject_key}\u0000${program}`, {
        unit: e.subject_key,
        program,
        dirs: e.attributes.dirs.map(String),
      });
    }
    if (DEPLOYMENT_KINDS.has(e.evidence_kind)) declared.add(keyName(e.subject_key));
  }
  // Each program run by exactly one deployment key: program -> that key.
  const runners = new Map<string, Set<string>>();
  // Declarations of services that run a program, and units built by any other service.
  const runs = new Map<string, string>();
  const builtWhole = new Set<string>();
  if (programs.size > 0) {
    for (const e of evidence) {
      if (e.evidence_kind !== 'service-declared' || keyKind(e.subject_key) !== 'service') continue;
      const built = builtDir(e);
      const unit = built === null ? undefined : unitDirs.get(built);
      const program = programRun(e);
      if (!unit) continue;
      if (!program || !programs.has(`${unit}\u0000${program}`)) {
        builtWhole.add(unit);
        continue;
      }
      const id = `${unit}\u0000${program}`;
      runners.set(id, (runners.get(id) ?? new Set()).add(e.subject_key));
      runs.set(e.id, program);
    }
  }
  // Kubernetes workloads running the unit's image with a `command` naming a program, for the
  // programs no compose service runs. The unit's image: one a compose service builds from it,
  // or one named like it (`acme/shop` for unit shop).
  if (programs.size > 0) {
    const imageUnits = new Map<string, string>();
    for (const e of evidence) {
      const built = e.evidence_kind === 'service-declared' ? builtDir(e) : null;
      const unit = built === null ? undefined : unitDirs.get(built);
      const image = e.attributes.image as { repo?: unknown } | null | undefined;
      if (unit && typeof image?.repo === 'string') imageUnits.set(image.repo.toLowerCase(), unit);
    }
    const unitByName = new Map([...unitDirs.values()].map((u) => [keyName(u), u]));
    const unitOfImage = (repo: string) =>
      imageUnits.get(repo.toLowerCase()) ??
      unitByName.get(normalizeName(repo.split('/').pop() ?? ''));
    const k8s = new Map<string, Array<{ id: string; key: string }>>();
    for (const e of evidence) {
      if (e.evidence_kind !== 'workload-declared' || keyKind(e.subject_key) !== 'service') continue;
      const containers = Array.isArray(e.attributes.containers) ? e.attributes.containers : [];
      for (const c of containers as Array<Record<string, unknown> | null>) {
        const unit = typeof c?.repo === 'string' ? unitOfImage(c.repo) : undefined;
        if (!unit) continue;
        const program = programRun({ ...e, attributes: { command: c?.command } });
        const id = `${unit}\u0000${program}`;
        if (!program || !programs.has(id)) builtWhole.add(unit);
        else if (!runners.has(id))
          k8s.set(id, [...(k8s.get(id) ?? []), { id: e.id, key: e.subject_key }]);
        break;
      }
    }
    for (const [id, list] of k8s) {
      runners.set(id, new Set(list.map((x) => x.key)));
      for (const x of list) runs.set(x.id, programs.get(id)!.program);
    }
  }
  // Folder -> the deployment of the one deployed program that runs it.
  const owners = new Map<string, Set<string>>();
  for (const [id, keys] of runners) {
    if (keys.size !== 1) continue;
    const p = programs.get(id) as Program;
    for (const dir of p.dirs) {
      const k = `${p.unit}\u0000${dir}`;
      owners.set(k, (owners.get(k) ?? new Set()).add([...keys][0]!));
    }
  }
  // Folders only programs no deployment runs hold, in a unit some of whose programs are run
  // (a load generator, a migration tool beside the services): their connections are no one's.
  const deployedUnits = new Set([...runners.keys()].map((id) => id.split('\u0000')[0]!));
  const idle = new Set<string>();
  for (const [id, p] of programs) {
    if (runners.has(id) || !deployedUnits.has(p.unit)) continue;
    for (const dir of p.dirs) {
      const k = `${p.unit}\u0000${dir}`;
      if (!owners.has(k)) idle.add(k);
    }
  }
  // Configuration lines whose keys code reads: those reads say who connects, not the file.
  const readLines = new Set<string>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'config-key-read') continue;
    readLines.add(`${String(e.attributes.config_path)}:${String(e.attributes.config_line)}`);
    const copies = e.attributes.config_copies;
    for (const c of Array.isArray(copies) ? copies : []) readLines.add(String(c));
  }
  return evidence.map((e) => {
    let out = e;
    // The service runs one program, not the whole unit; a unit whose every service runs one of
    // its programs is no deployable by itself (reconcile-identity.ts).
    const program = runs.get(e.id);
    if (program) return { ...e, attributes: { ...e.attributes, runs_program: program } };
    if (
      e.evidence_kind === 'unit-declared' &&
      deployedUnits.has(e.subject_key) &&
      !builtWhole.has(e.subject_key)
    ) {
      const run = [...programs.values()].filter(
        (p) => p.unit === e.subject_key && runners.has(`${p.unit}\u0000${p.program}`),
      );
      return { ...e, attributes: { ...e.attributes, programs_run: run.map((p) => p.program) } };
    }
    if (
      e.source_type === 'code' &&
      e.object_key !== null &&
      readLines.has(`${e.location.path}:${e.location.start_line}`)
    )
      return { ...e, relationship_kind: null, object_key: null };
    if (e.source_type === 'code' && owners.size > 0 && /\.go$/.test(e.location.path)) {
      const found = owners.get(`${e.subject_key}\u0000${dirname(e.location.path)}`);
      if (found && found.size === 1) {
        const runner = [...found][0]!;
        out = { ...e, subject_key: runner, attributes: { ...e.attributes, unit: e.subject_key } };
      } else if (
        e.object_key !== null &&
        idle.has(`${e.subject_key}\u0000${dirname(e.location.path)}`)
      )
        return {
          ...e,
          relationship_kind: null,
          object_key: null,
          attributes: { ...e.attributes, not_run: true },
        };
    }
    if (
      out.evidence_kind === 'config-key-read' &&
      out.object_key !== null &&
      !declared.has(keyName(out.object_key))
    )
      out = { ...out, relationship_kind: null, object_key: null };
    return out;
  });
}
