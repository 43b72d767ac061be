/**
 * Gradle sub-projects that are libraries although a source mentions an entry point
 * (classify.ts, after classify-jvm.ts; docs/decisions.md, "Gradle library sub-projects"). In a
 * Gradle multi-project build (a settings file that `include`s projects) a sub-project runs only
 * through a runnable build (the Spring Boot / application plugins..., directly or through a
 * convention plugin of `buildSrc/` or an included build) or a `main` of its main source set.
 * Two things that do not run it: sources of the other source sets (`src/test`, `src/contractTest`,
 * `src/integrationTest`...: a test's `@SpringBootApplication` or `@EnableAutoConfiguration`
 * starts a test context, not the module), and `@EnableAutoConfiguration` on a configuration class
 * without a `main` (a module a Spring Boot application imports). A Dockerfile (checked by the
 * caller) or a deployment that runs it still makes it a service.
 */
import type { SourceFile } from '../evidence';
import { basename, dirname } from '../shared/paths';
import { ENTRY_POINT, RUNNABLE_BUILD } from './classify-jvm';
import type { Unit } from './model';

const JVM_SOURCE = /\.(java|kt|groovy|scala)$/;

/** The settings file (`settings.gradle[.kts]`) including projects, at or above the unit. */
function gradleSettingsDir(unit: Unit, textOf: (path: string) => string): string | null {
  for (let dir = unit.dir; ; dir = dirname(dir)) {
    const prefix = dir === '' ? '' : `${dir}/`;
    for (const name of ['settings.gradle', 'settings.gradle.kts'])
      if (/^\s*include\b/m.test(textOf(`${prefix}${name}`))) return dir;
    if (dir === '') return null;
  }
}

/** Plugins a build script applies: `apply plugin: X` / `'x'`, `id 'x'` / `id("x")`, `plugins { x }`. */
function appliedPlugins(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\bapply\s*\(?\s*plugin\s*[:=]\s*['"]?([\w.-]+)/g))
    out.push(m[1] ?? '');
  for (const m of text.matchAll(/\bid\s*\(?\s*['"]([\w.-]+)['"]/g)) out.push(m[1] ?? '');
  // Kotlin DSL precompiled script plugins: a bare or back-quoted identifier line in `plugins {}`.
  const block = /\bplugins\s*\{([^}]*)\}/.exec(text)?.[1] ?? '';
  for (const m of block.matchAll(/^\s*`?([\w.-]+)`?\s*$/gm)) out.push(m[1] ?? '');
  return out.filter(Boolean);
}

/** Gradle's core plugins, applied by a dotless id, none of which makes a runnable artifact. */
const CORE_PLUGIN =
  /^(java|java-library|java-platform|java-test-fixtures|jvm-test-suite|groovy|groovy-base|scala|base|idea|eclipse|maven-publish|ivy-publish|signing|jacoco|checkstyle|pmd|codenarc|antlr|distribution|version-catalog|project-report|build-dashboard|kotlin|kotlin-spring|kotlin-jpa|kotlin-kapt)$/;

/**
 * Whether an applied plugin may make the sub-project runnable: a convention plugin the build
 * defines (a precompiled script plugin `<id>.gradle[.kts]`, or a `Plugin<Project>` class) that
 * applies a runnable plugin itself, or one the build defines where we cannot read it (a class by
 * its simple name, as `buildSrc/` classes are applied; a dotless id that is no core plugin).
 * A dotted id or class name defined nowhere in the repository is a published plugin, judged by
 * RUNNABLE_BUILD alone.
 */
function pluginMayRun(plugin: string, files: SourceFile[]): boolean {
  const simple = plugin.split('.').pop() ?? plugin;
  const definitions = files.filter((f) => {
    const base = basename(f.path);
    return (
      base === `${plugin}.gradle` ||
      base === `${plugin}.gradle.kts` ||
      (/\.(groovy|java|kt)$/.test(base) &&
        new RegExp(`\\bclass\\s+${simple}\\b[^{]*\\bPlugin\\s*<`).test(f.text))
    );
  });
  if (definitions.length > 0) return definitions.some((f) => RUNNABLE_BUILD.test(f.text));
  if (plugin.includes('.')) return false;
  return /^[A-Z]/.test(plugin) || !CORE_PLUGIN.test(plugin);
}

/** A source of a source set other than `main` (`src/test/`, `src/contractTest/`...). */
function inOtherSourceSet(path: string, unitDir: string): boolean {
  const rel = unitDir === '' ? path : path.slice(unitDir.length + 1);
  const m = /^src\/([^/]+)\//.exec(rel);
  return m !== null && m[1] !== 'main';
}

/**
 * Why a Gradle sub-project is a library (see the header); null when it may run or is not a
 * Gradle-only sub-project of a multi-project build.
 */
export function gradleLibraryReason(
  unit: Unit,
  textOf: (path: string) => string,
  owned: SourceFile[],
  repoFiles: Iterable<SourceFile>,
): string | null {
  const own = unit.manifests.filter((m) => dirname(m.path) === unit.dir);
  if (own.length === 0 || !own.every((m) => m.kind === 'build.gradle')) return null;
  const settings = gradleSettingsDir(unit, textOf);
  // The root project of the build is its aggregator or its program: not judged here.
  if (settings === null || settings === unit.dir) return null;
  const scripts = own.map((m) => textOf(m.path));
  if (scripts.some((t) => RUNNABLE_BUILD.test(t))) return null;
  const plugins = scripts.flatMap(appliedPlugins);
  if (plugins.length > 0) {
    const buildLogic = [...repoFiles].filter(
      (f) =>
        /\.(gradle|kts)$/.test(f.path) ||
        (/\.(groovy|java|kt)$/.test(f.path) && f.text.includes('Plugin')),
    );
    if (plugins.some((p) => pluginMayRun(p, buildLogic))) return null;
  }
  const sources = owned.filter(
    (f) => JVM_SOURCE.test(f.path) && !inOtherSourceSet(f.path, unit.dir),
  );
  if (sources.length === 0) return null;
  const entry = sources.find((f) =>
    ENTRY_POINT.test(f.text.replace(/@EnableAutoConfiguration\b/g, '')),
  );
  if (entry) return null;
  return `${own[0]?.path ?? ''} is a Gradle sub-project library: no runnable plugin, no main in its main source set (test source sets and @EnableAutoConfiguration do not run it)`;
}
