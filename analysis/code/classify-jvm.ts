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

/**
 * Why a JVM unit is a library (build logic, a module of classes, an aggregator); null when it may
 * run (or is not a JVM-only unit).
 */
export function jvmLibraryReason(
  unit: Unit,
  textOf: (path: string) => string,
  owned: SourceFile[],
): string | null {
  const own = unit.manifests.filter((m) => dirname(m.path) === unit.dir);
  if (own.length === 0 || !own.every((m) => m.kind === 'pom.xml' || m.kind === 'build.gradle'))
    return null;
  // Only a module of a multi-module build: a lone module in a repository is the program.
  if (!inMultiModuleBuild(unit, textOf)) return null;
  const runnable = own.find((m) => RUNNABLE_BUILD.test(textOf(m.path)));
  if (runnable) return null;
  const sources = owned.filter((f) => JVM_SOURCE.test(f.path));
  if (sources.some((f) => ENTRY_POINT.test(f.text))) return null;
  const build = own[0]?.path ?? '';
  if (sources.length === 0)
    return `${build} builds nothing that runs (no sources of its own, no application plugin: an aggregator or build module)`;
  return `${build} builds a library: no application plugin, no main class`;
}
