/**
 * Deployable units: directories holding a build manifest and/or a Dockerfile.
 *
 * - A workspace root (package.json with `workspaces`, a directory with pnpm-workspace.yaml, a
 *   Cargo virtual manifest, a Maven aggregator POM) is not a unit by itself; its members are.
 *   It still is one when it also holds a Dockerfile or another manifest.
 * - Name: the manifest's own name (package.json name without scope, go.mod module's last path
 *   element without a `/vN` suffix, pyproject/poetry name, Cargo package name, POM artifactId,
 *   csproj file name, setup.py name), else the directory's base name ('root' at the top).
 * - Two units with the same name are both renamed after their directory path
 *   (`apps/api` -> `apps-api`), the plain name kept in `aliases`; but one application of a Go
 *   module named for its path (go-apps.ts) keeps its name, the others being renamed.
 * - A package whose start script starts its members' (`pnpm -r run start`) and the one package
 *   below it with a start script that runs a program: that member takes the package's name as
 *   an alias (it is what the package's image runs).
 * - Each unit is classified (analysis/code/classify.ts: service, library, test, client, tool,
 *   orchestrator, job) with the reason, as `unit_class` / `class_reason` on its evidence.
 * - Lockfiles count from the unit's directory and from the workspace root it belongs to.
 * - A folder of Go `package main` sources that no go.mod covers is a unit too (go-loose.ts).
 */
import picomatch from 'picomatch';
import {
  entityKey,
  normalizeName,
  type AnalyzerGap,
  type Evidence,
  type SourceFile,
} from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, isWithin, relativeTo, isDockerfile } from '../shared/paths';
import { uniqueSorted } from '../shared/text';
import { asArray, isRecord } from '../shared/values';
import { parseYamlDocuments } from '../shared/yaml';
import { classifyUnit, WATCH_BUILD } from './classify';
import { goApps } from './go-apps';
import { looseGoMains } from './go-loose';
import { lockStatus } from './lockfiles';
import { isLockfile, manifestKindOf, parseManifest } from './manifests';
import type { CodeModel, Ecosystem, ManifestKind, ParsedManifest, Unit } from './model';

/** Manifests whose name, in this order, names the unit. */
const NAME_PRIORITY: ManifestKind[] = [
  'package.json',
  'pyproject.toml',
  'Cargo.toml',
  'go.mod',
  'pom.xml',
  'csproj',
  'setup.py',
];

/** The unit name a manifest's own name gives (`@acme/api` -> api, `example.com/x/shop/v2` -> shop). */
export function unitNameFromManifest(m: ParsedManifest): string | null {
  if (!m.name) return null;
  let name = m.name.trim();
  if (m.kind === 'package.json') name = name.replace(/^@[^/]+\//, '');
  if (m.kind === 'go.mod') {
    const parts = name.split('/').filter(Boolean);
    let last = parts.pop() ?? '';
    if (/^v\d+$/.test(last) && parts.length > 0) last = parts.pop() ?? last;
    name = last;
  }
  return normalizeName(name) || null;
}

function pythonIdentifier(name: string): string | null {
  const id = name.trim().toLowerCase().replace(/[-.]+/g, '_');
  return /^[a-z_][a-z0-9_]*$/.test(id) ? id : null;
}

function firstCodeLine(text: string): number {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  return i < 0 ? 1 : i + 1;
}

interface DirInfo {
  manifests: ParsedManifest[];
  dockerfiles: string[];
  lockfiles: string[];
  pnpmWorkspace: string[] | null;
}

export interface UnitDetection {
  model: CodeModel;
  evidence: Evidence[];
  gaps: AnalyzerGap[];
}

function matchesMember(rel: string, members: string[]): boolean {
  const positive = members
    .filter((g) => !g.startsWith('!'))
    .map((g) => g.replace(/^\.\//, '').replace(/\/+$/, ''));
  const negative = members
    .filter((g) => g.startsWith('!'))
    .map((g) => g.slice(1).replace(/^\.\//, '').replace(/\/+$/, ''));
  if (positive.length === 0) return false;
  try {
    if (!picomatch(positive, { dot: false })(rel)) return false;
    return negative.length === 0 || !picomatch(negative)(rel);
  } catch {
    return false;
  }
}

/** A start script that runs its workspace members' start scripts (`pnpm -r run start`). */
const RECURSIVE_START =
  /(\s(-r|--recursive|--workspaces|-ws)\b|\blerna\s+run\b|\bturbo\s+(run\s+)?start\b|\bworkspaces\s+foreach\b)[^&|;]*\bstart\b|\bstart\b[^&|;]*\s(--workspaces|-ws)\b/;

function npmScripts(u: Unit, fileByPath: Map<string, SourceFile>): Record<string, unknown> {
  const m = u.manifests.find((x) => x.kind === 'package.json' && dirname(x.path) === u.dir);
  const text = m ? fileByPath.get(m.path)?.text : undefined;
  if (!text) return {};
  try {
    const pkg: unknown = JSON.parse(text);
    return isRecord(pkg) && isRecord(pkg.scripts) ? pkg.scripts : {};
  } catch {
    return {};
  }
}

/**
 * A package whose start script starts its members' start scripts (`pnpm -r run start`) runs the
 * one package below it whose own start script runs a program (not a watch build): that member
 * is the package's program, and takes the package's name as an alias (reconcile merges them).
 * Several such members (a monorepo root starting many apps): none does.
 */
function programOfRecursiveStart(units: Unit[], fileByPath: Map<string, SourceFile>): void {
  for (const root of units) {
    const start = npmScripts(root, fileByPath).start;
    if (typeof start !== 'string' || !RECURSIVE_START.test(start)) continue;
    const programs = units.filter((u) => {
      if (u === root || !isWithin(u.dir, root.dir)) return false;
      const own = npmScripts(u, fileByPath).start;
      return typeof own === 'string' && own.trim() !== '' && !WATCH_BUILD.test(own);
    });
    if (programs.length !== 1) continue;
    const program = programs[0]!;
    if (!program.aliases.includes(root.name)) program.aliases.push(root.name);
  }
}

/** Finds the units of `files` (already normalized, de-duplicated and filtered). */
export function detectUnits(files: SourceFile[]): UnitDetection {
  const gaps: AnalyzerGap[] = [];
  const fileByPath = new Map(files.map((f) => [f.path, f]));
  const dirs = new Map<string, DirInfo>();
  const info = (dir: string): DirInfo => {
    let d = dirs.get(dir);
    if (!d) {
      d = { manifests: [], dockerfiles: [], lockfiles: [], pnpmWorkspace: null };
      dirs.set(dir, d);
    }
    return d;
  };
  const parsed = new Map<string, ParsedManifest>();
  const parse = (file: SourceFile, kind: ManifestKind): ParsedManifest => {
    let m = parsed.get(file.path);
    if (!m) {
      m = parseManifest(file, kind);
      parsed.set(file.path, m);
      gaps.push(...m.gaps);
    }
    return m;
  };

  for (const file of files) {
    const dir = dirname(file.path);
    const kind = manifestKindOf(file.path, file.text);
    if (kind) info(dir).manifests.push(parse(file, kind));
    else if (isDockerfile(file.path)) info(dir).dockerfiles.push(file.path);
    else if (isLockfile(file.path)) info(dir).lockfiles.push(file.path);
    else if (basename(file.path) === 'pnpm-workspace.yaml') {
      const y = parseYamlDocuments(file);
      if (y.errors.length > 0) {
        gaps.push({
          path: file.path,
          reason: 'manifest_parse_error',
          message: 'pnpm-workspace.yaml is not valid YAML',
        });
      }
      const value = y.docs[0]?.value;
      const pk = isRecord(value) ? value.packages : undefined;
      info(dir).pnpmWorkspace = asArray(pk).filter((x): x is string => typeof x === 'string');
    }
  }

  // Workspace roots and their member globs.
  const workspaceRoots = new Map<string, string[]>();
  for (const [dir, d] of dirs) {
    const members: string[] = [];
    let isRoot = false;
    for (const m of d.manifests) {
      if (m.workspaceRoot || m.workspaceMembers.length > 0) {
        isRoot = true;
        members.push(...m.workspaceMembers);
      }
    }
    if (d.pnpmWorkspace) {
      isRoot = true;
      members.push(...d.pnpmWorkspace);
    }
    if (isRoot) workspaceRoots.set(dir, members);
  }

  // Unit directories.
  const unitDirs: string[] = [];
  for (const [dir, d] of dirs) {
    const aggregatorOnly = (m: ParsedManifest): boolean =>
      m.workspaceRoot || (m.kind === 'package.json' && d.pnpmWorkspace !== null);
    if (d.dockerfiles.length > 0 || d.manifests.some((m) => !aggregatorOnly(m))) unitDirs.push(dir);
  }
  // Go programs no go.mod covers are units of their folder (go-loose.ts).
  const goModDirs = new Set(
    [...dirs].filter(([, d]) => d.manifests.some((m) => m.kind === 'go.mod')).map(([dir]) => dir),
  );
  const looseGo = looseGoMains(files, goModDirs);
  for (const dir of looseGo.keys()) if (!unitDirs.includes(dir)) unitDirs.push(dir);
  // Applications of a mono-repo Go module are units of their folder (go-apps.ts).
  const goModules = new Map<string, string>();
  for (const [dir, d] of dirs)
    for (const m of d.manifests)
      if (m.kind === 'go.mod' && m.goModule) goModules.set(dir, m.goModule);
  const apps = goApps(files, goModules);
  for (const dir of apps.keys()) if (!unitDirs.includes(dir)) unitDirs.push(dir);
  unitDirs.sort();

  const units: Unit[] = [];
  for (const dir of unitDirs) {
    const d = dirs.get(dir) ?? info(dir);
    const manifests = [...d.manifests].sort((a, b) => (a.path < b.path ? -1 : 1));
    // Requirement files included with -r (recursively), wherever they live.
    const seen = new Set(manifests.map((m) => m.path));
    const queue = [...manifests];
    while (queue.length > 0) {
      const m = queue.shift() as ParsedManifest;
      for (const inc of m.includes) {
        if (seen.has(inc)) continue;
        seen.add(inc);
        const file = fileByPath.get(inc);
        if (!file) {
          gaps.push({
            path: m.path,
            reason: 'include_not_found',
            message: `included requirements file ${inc} is not in the sources`,
          });
          continue;
        }
        const included = parse(file, 'requirements.txt');
        for (const dep of included.dependencies) dep.attributes.included_from ??= m.path;
        manifests.push(included);
        queue.push(included);
      }
    }

    let workspaceRootDir: string | null = null;
    for (const [root, members] of workspaceRoots) {
      if (root === dir || !isWithin(dir, root)) continue;
      if (!matchesMember(relativeTo(dir, root), members)) continue;
      if (workspaceRootDir === null || root.length > workspaceRootDir.length)
        workspaceRootDir = root;
    }

    let primary: ParsedManifest | null = null;
    for (const kind of NAME_PRIORITY) {
      primary =
        manifests.find(
          (m) => m.kind === kind && dirname(m.path) === dir && unitNameFromManifest(m),
        ) ?? null;
      if (primary) break;
    }
    const dirName = dir === '' ? 'root' : normalizeName(basename(dir)) || 'root';
    const app = apps.get(dir);
    const name = (primary && unitNameFromManifest(primary)) ?? app?.name ?? dirName;
    const aliasSet = new Set<string>([app ? app.name : dirName]);
    for (const m of manifests) {
      const n = unitNameFromManifest(m);
      if (n && dirname(m.path) === dir) aliasSet.add(n);
      if (m.kind === 'package.json' && m.name?.startsWith('@')) aliasSet.add(normalizeName(m.name));
    }
    aliasSet.delete('');
    const lockfiles = [...d.lockfiles];
    if (workspaceRootDir !== null) lockfiles.push(...(dirs.get(workspaceRootDir)?.lockfiles ?? []));
    const npm = manifests.find((m) => m.kind === 'package.json' && dirname(m.path) === dir);
    const goMod = manifests.find((m) => m.kind === 'go.mod' && dirname(m.path) === dir);
    const pythonNames = new Set<string>();
    const hasPython = manifests.some((m) => m.ecosystem === 'pypi');
    if (hasPython || d.dockerfiles.length > 0) {
      const id = dir === '' ? null : pythonIdentifier(basename(dir));
      if (id) pythonNames.add(id);
      for (const m of manifests) {
        if (m.ecosystem === 'pypi' && m.name) {
          const pid = pythonIdentifier(m.name);
          if (pid) pythonNames.add(pid);
        }
      }
    }
    const citeManifest = primary ?? manifests.find((m) => dirname(m.path) === dir) ?? null;
    const dockerfile = [...d.dockerfiles].sort()[0];
    let citation: Unit['citation'];
    if (citeManifest) {
      citation = {
        path: citeManifest.path,
        line: citeManifest.nameLine ?? 1,
        provider: citeManifest.provider,
      };
    } else if (!dockerfile && (looseGo.has(dir) || app)) {
      const main = (looseGo.get(dir) ?? app) as { path: string; line: number };
      citation = { path: main.path, line: main.line, provider: 'go-source' };
    } else {
      const text = fileByPath.get(dockerfile ?? '')?.text ?? '';
      citation = { path: dockerfile ?? '', line: firstCodeLine(text), provider: 'dockerfile' };
    }
    units.push({
      key: entityKey('service', name),
      name,
      dir,
      manifestName: primary?.name ?? null,
      manifests,
      dockerfiles: [...d.dockerfiles].sort(),
      lockfiles: uniqueSorted(lockfiles),
      ecosystems: uniqueSorted([
        ...manifests.map((m) => m.ecosystem),
        ...(looseGo.has(dir) || app ? ['go'] : []),
      ]) as Ecosystem[],
      aliases: [...aliasSet],
      npmName: npm?.name ?? null,
      goModule: goMod?.goModule ?? app?.goModule ?? null,
      pythonNames: uniqueSorted(pythonNames),
      workspaceRootDir,
      citation,
    });
  }

  // Name collisions: rename every colliding unit after its directory path.
  const byName = new Map<string, Unit[]>();
  for (const u of units) byName.set(u.name, [...(byName.get(u.name) ?? []), u]);
  for (const group of byName.values()) {
    if (group.length < 2) continue;
    // An application named for its path below its module's applications (go-apps.ts) already
    // is; when it is the only one of the group, the others are renamed and it keeps its name,
    // which then is no alias of theirs.
    const pathNamed = group.filter((u) => apps.get(u.dir)?.name === u.name);
    const kept = pathNamed.length === 1 ? pathNamed[0] : undefined;
    for (const u of group) {
      if (u === kept) continue;
      const renamed = u.dir === '' ? 'root' : normalizeName(u.dir.replace(/\//g, '-')) || 'root';
      if (kept) u.aliases = u.aliases.filter((a) => a !== kept.name);
      else u.aliases.push(u.name);
      u.name = renamed;
      u.key = entityKey('service', renamed);
    }
  }
  for (const u of units) {
    const rest = uniqueSorted(u.aliases.filter((a) => a !== u.name));
    u.aliases = [u.name, ...rest];
  }
  programOfRecursiveStart(units, fileByPath);

  const unitByDir = new Map(units.map((u) => [u.dir, u]));
  const ownerOf = (path: string): Unit | null => {
    let p = path;
    for (;;) {
      const u = unitByDir.get(p);
      if (u) return u;
      if (p === '') return null;
      p = dirname(p);
    }
  };
  const filesByUnit = new Map<string, SourceFile[]>();
  for (const u of units) filesByUnit.set(u.key, []);
  for (const f of files) {
    const u = ownerOf(dirname(f.path));
    if (u) filesByUnit.get(u.key)?.push(f);
  }

  const model: CodeModel = { files, fileByPath, units, unitByDir, filesByUnit, ownerOf };
  const out: Evidence[] = [];
  const allLockfiles = files.map((f) => f.path).filter(isLockfile);
  for (const u of units) {
    const file = fileByPath.get(u.citation.path);
    if (!file) continue;
    const lock = lockStatus(u.manifests, u.lockfiles, allLockfiles, fileByPath);
    const where = u.dir === '' ? 'the repository root' : u.dir;
    // What the unit is (service, library, test...): only a service is an entity by itself.
    const cls = classifyUnit(u, fileByPath, filesByUnit.get(u.key) ?? []);
    u.unitClass = cls.unit_class;
    out.push(
      evidence(
        file,
        { start: u.citation.line, end: u.citation.line },
        {
          source: 'code',
          provider: u.citation.provider,
          kind: 'unit-declared',
          subject: u.key,
          summary: `unit ${u.name} declared in ${where} (${[...u.ecosystems, ...(u.dockerfiles.length > 0 ? ['Dockerfile'] : [])].join(', ')})`,
          attributes: {
            name: u.name,
            dir: u.dir === '' ? '.' : u.dir,
            ecosystems: u.ecosystems,
            manifests: u.manifests.map((m) => m.path),
            manifest_name: u.manifestName,
            dockerfiles: u.dockerfiles,
            has_dockerfile: u.dockerfiles.length > 0,
            aliases: u.aliases,
            lockfiles: lock.lockfiles,
            lockfile_present: lock.present,
            ...(lock.not_applicable ? { lockfile_not_applicable: lock.not_applicable } : {}),
            unit_class: cls.unit_class,
            class_reason: cls.class_reason,
            ...(u.npmName ? { npm_name: u.npmName } : {}),
            ...(u.goModule ? { go_module: u.goModule } : {}),
            ...(u.workspaceRootDir !== null
              ? { workspace_root: u.workspaceRootDir === '' ? '.' : u.workspaceRootDir }
              : {}),
          },
        },
      ),
    );
  }
  return { model, evidence: out, gaps };
}
