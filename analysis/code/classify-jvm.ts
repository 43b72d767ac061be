/**
 * JVM build modules that run nothing (classify.ts, "library"): in a Maven or Gradle
 * multi-project (and only there: a lone module is the program) most modules are libraries
 * (`*-api`, `*-contracts`, `common`), build logic (`buildSrc`), test utilities, or the
 * aggregator at the root. A module is a library when its build applies nothing that makes a
 * runnable artifact (the Spring Boot, application, Quarkus, Micronaut, Ktor, Jib or war plugins,
 * a `Main-Class`, a `mainClass`) and none of its sources is an entry point (a `main` method,
 * `@SpringBootApplication`, `@QuarkusMain`, a serverless handler). A Dockerfile (checked by the
 * caller) or a deployment that runs it still makes it a service.
 */
import type { SourceFile } from '../evidence';
import { dirname } from '../shared/paths';
import type { Unit } from './model';

/** Build declarations that produce a runnable artifact. */
export const RUNNABLE_BUILD =
  /org\.springframework\.boot['"]|spring-boot-maven-plugin|\bbootJar\b|\bbootRun\b|\bid\s*\(?\s*['"]application['"]|apply\s+plugin\s*:\s*['"]application['"]|^\s*application\s*(\{|$)|mainClass(Name)?\b|<mainClass>|Main-Class|io\.quarkus|quarkus-maven-plugin|io\.micronaut\.application|micronaut-maven-plugin|io\.ktor\.plugin|\bjib\b|jib-maven-plugin|apply\s+plugin\s*:\s*['"]war['"]|\bid\s*\(?\s*['"]war['"]|<packaging>\s*war\s*<|exec-maven-plugin|azure-functions|aws-lambda|shadowJar|com\.github\.johnrengelman\.shadow|maven-shade-plugin|maven-assembly-plugin|com\.palantir\.docker|com\.bmuschko\.docker|docker-maven-plugin|dockerfile-maven-plugin/im;

/** Sources that are an entry point of a runnable program. */
export const ENTRY_POINT =
  /\bstatic\s+(public\s+)?void\s+main\s*\(|\bfun\s+main\s*\(|\bdef\s+main\s*\(|@SpringBootApplication|@EnableAutoConfiguration|@QuarkusMain|@MicronautApplication|\bimplements\s+[\w.<>, ]*\bRequest(Stream)?Handler\b|@FunctionName\b|\bextends\s+(AbstractVerticle|Application)\b|\bobject\s+\w+\s+extends\s+App\b/;

const JVM_SOURCE = /\.(java|kt|groovy|scala)$/;

/**
 * The unit belongs to a multi-module build: a member of a Maven aggregator, or under (or at) a
 * Gradle settings file that includes projects.
 */
function inMultiModuleBuild(unit: Unit, textOf: (path: string) => string): boolean {
  if (unit.workspaceRootDir !== null) return true;
  for (let dir = unit.dir; ; dir = dirname(dir)) {
    const prefix = dir === '' ? '' : `${dir}/`;
    for (const name of ['settings.gradle', 'settings.gradle.kts'])
      if (/^\s*include\b/m.test(textOf(`${prefix}${name}`))) return true;
    if (dir === '') return false;
  }
}

/** `groupId:artifactId` of each pom.xml's own coordinates (the parent's group by default). */
function pomCoordinates(text: string): { group: string | null; artifact: string | null } {
  const head =
    text
      .replace(/<parent>[\s\S]*?<\/parent>/, '')
      .split(/<(dependencies|build|dependencyManagement|profiles)>/)[0] ?? '';
  const parentGroup = /<parent>[\s\S]*?<groupId>\s*([^<\s]+)\s*<\/groupId>/.exec(text)?.[1] ?? null;
  return {
    group: /<groupId>\s*([^<\s]+)\s*<\/groupId>/.exec(head)?.[1] ?? parentGroup,
    artifact: /<artifactId>\s*([^<\s]+)\s*<\/artifactId>/.exec(head)?.[1] ?? null,
  };
}

/** Per repository (file map): every pom.xml's declared dependency coordinates -> its path. */
const DEPENDENTS = new WeakMap<Map<string, SourceFile>, Map<string, string>>();

/**
 * The pom.xml of another Maven build of the repository that declares the unit's own pom.xml
 * (`groupId:artifactId`) as a dependency, as `path:line`-less `path`; null when none does.
 */
function mavenDependent(
  unit: Unit,
  textOf: (path: string) => string,
  fileByPath: Map<string, SourceFile>,
): string | null {
  const pom = unit.manifests.find((m) => m.kind === 'pom.xml' && dirname(m.path) === unit.dir);
  if (!pom) return null;
  const { group, artifact } = pomCoordinates(textOf(pom.path));
  if (group === null || artifact === null) return null;
  let index = DEPENDENTS.get(fileByPath);
  if (!index) {
    index = new Map();
    for (const [path, file] of fileByPath) {
      if (!/(^|\/)pom\.xml$/.test(path)) continue;
      for (const d of file.text.matchAll(/<dependency>([\s\S]*?)<\/dependency>/g)) {
        const g = /<groupId>\s*([^<\s]+)\s*<\/groupId>/.exec(d[1] ?? '')?.[1];
        const a = /<artifactId>\s*([^<\s]+)\s*<\/artifactId>/.exec(d[1] ?? '')?.[1];
        if (g && a && !index.has(`${g}:${a}\u0000${path}`))
          index.set(`${g}:${a}\u0000${path}`, path);
      }
    }
    DEPENDENTS.set(fileByPath, index);
  }
  for (const [key, path] of index)
    if (key.startsWith(`${group}:${artifact}\u0000`) && path !== pom.path) return path;
  return null;
}

/**
 * Why a JVM unit is a library (build logic, a module of classes, an aggregator); null when it may
 * run (or is not a JVM-only unit).
 */
export function jvmLibraryReason(
  unit: Unit,
  textOf: (path: string) => string,
  owned: SourceFile[],
  fileByPath?: Map<string, SourceFile>,
): string | null {
  const own = unit.manifests.filter((m) => dirname(m.path) === unit.dir);
  if (own.length === 0 || !own.every((m) => m.kind === 'pom.xml' || m.kind === 'build.gradle'))
    return null;
  const sources = owned.filter((f) => JVM_SOURCE.test(f.path));
  const build = own[0]?.path ?? '';
  // A Maven module another build of the repository depends on (separate Maven projects, no
  // aggregator): its plugins may be copied boilerplate, only an entry point makes it run.
  const dependent = fileByPath ? mavenDependent(unit, textOf, fileByPath) : null;
  if (dependent !== null && sources.length > 0 && !sources.some((f) => ENTRY_POINT.test(f.text)))
    return `${build} builds a library ${dependent} depends on (no main class)`;
  // Only a module of a multi-module build: a lone module in a repository is the program.
  if (!inMultiModuleBuild(unit, textOf)) return null;
  const runnable = own.find((m) => RUNNABLE_BUILD.test(textOf(m.path)));
  if (runnable) return null;
  if (sources.some((f) => ENTRY_POINT.test(f.text))) return null;
  if (sources.length === 0)
    return `${build} builds nothing that runs (no sources of its own, no application plugin: an aggregator or build module)`;
  return `${build} builds a library: no application plugin, no main class`;
}
