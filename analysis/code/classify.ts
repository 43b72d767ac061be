/**
 * Unit classification: what a code unit is, from its own files. Only a deployable service becomes
 * a `service` entity by itself; the other classes stay evidence unless a deployment declaration
 * (a compose service, a Kubernetes workload) builds or runs the unit (reconcile decides that).
 *
 * The first rule that matches decides, in this order (each with the reason it gives):
 * - orchestrator: a project referencing `Aspire.Hosting*` or the Aspire AppHost SDK;
 * - test: a test project (`*.Tests`, `*.UnitTests`, `*-e2e`, load/smoke/UI test suites, a
 *   `tests`/`e2e`/`cypress`/`playwright` folder, a project referencing Microsoft.NET.Test.Sdk or
 *   marked IsTestProject, an npm package of test runners and browser drivers only);
 * - library (generated): a generated-code folder (`gen`, `generated`, `pb`...) or a unit whose
 *   sources are all generated (protobuf / gRPC stubs, generator headers); tool: such a folder
 *   holding no source (the generator's manifest and image);
 * - library (UI): a UI component library (Storybook, or named `ui`/`components`/`design-system`)
 *   with a browser framework and no server, no start script, no Dockerfile;
 * - client: a mobile or desktop app (MAUI, WPF, WinForms, Blazor WebAssembly, React Native,
 *   Expo, Electron, Capacitor/Ionic, a Tauri app: classify-cargo.ts) or a browser SPA without
 *   a server and without a Dockerfile,
 *   or a browser bundle (an npm package built by `ng build`/`vite build`/webpack/parcel and
 *   served only by the bundler's dev server or preview, no start script, no server dependency);
 * - tool: a unit in a tooling folder (`tools`, `scripts`, `hack`, `eng`) or a documentation site
 *   (`docs`, `documentation`) without a Dockerfile, a Go module without Go sources (bingo's
 *   `.bingo/` pinning build tools), a .NET tool (PackAsTool), a cargo-xtask package or a Rust
 *   command-line program with no runtime, server or client dependency (classify-cargo.ts), or
 *   an npm package with `bin` and no start script;
 * - job: a unit named for a one-shot task (migrations, seeding, db init, fix / backfill /
 *   repair / cleanup / one-off);
 * - library: a .NET class library (plain SDK, no Exe output, no Program.cs/Main) or SQL database
 *   project (MSBuild.Sdk.SqlProj, Microsoft.Build.Sql: a dacpac), a Go module
 *   without `package main`, a Cargo library without a binary, an npm package published as a
 *   library (exports/types/peerDependencies; private: exports/types) whose start/serve/dev
 *   scripts at most rebuild it (`tsc --watch`), an npm package with no source of its own (type
 *   declarations `.d.ts` aside), no
 *   dependency and no start script (shared configuration, a root running its members' tasks),
 *   a Maven/Gradle module with no application plugin and no entry point (classify-jvm.ts), an
 *   npm package nothing runs (dependencies and scripts that only lint/format/test/build it, or
 *   a `main` entry and no script; no bin, no server framework or datastore/broker client, no
 *   code that listens); none with a Dockerfile;
 * - service: everything else (a Dockerfile, a web/worker SDK, a start script, or by default).
 */
import type { SourceFile } from '../evidence';
import { basename, dirname } from '../shared/paths';
import { classifyClient } from './clients';
import { jvmLibraryReason } from './classify-jvm';
import { gradleLibraryReason } from './classify-gradle';
import {
  cargoCommandLineToolReason,
  cargoDesktopAppReason,
  cargoToolReason,
} from './classify-cargo';
import type { Unit } from './model';

/** The reason a unit is classed a service when nothing else decides (rules that revisit that default match it). */
export const DEFAULT_SERVICE_REASON = 'a unit with a manifest and no sign of another class';

/** A project file of a .NET Aspire AppHost (references Aspire.Hosting or the AppHost SDK). */
export function isAspireHost(csproj: string): boolean {
  return (
    /Include\s*=\s*"Aspire\.Hosting/i.test(csproj) ||
    /Sdk\s*=\s*"Aspire\.AppHost\.Sdk/i.test(csproj) ||
    /<Sdk\s+Name\s*=\s*"Aspire\.AppHost\.Sdk/i.test(csproj) ||
    /<IsAspireHost>\s*true/i.test(csproj)
  );
}

type UnitClass = 'service' | 'library' | 'test' | 'client' | 'tool' | 'orchestrator' | 'job';

interface UnitClassification {
  unit_class: UnitClass;
  class_reason: string;
}

const TEST_NAME =
  /(^|[-_.])(tests?|unittests?|integrationtests?|functionaltests?|e2e|e2etests?|specs?|testing|(load|perf|performance|smoke|acceptance|contract|ui|api)-?tests?|cypress|playwright|loadtest(s|ing)?|test-?suites?)$/i;
const TEST_DIR =
  /^(tests?|__tests__|e2e|integration-tests?|test-?e2e|cypress|playwright|k6|load-?tests?|perf-?tests?|test-?suites?)$/i;
/** npm test runners and browser drivers: a package depending on nothing else is a test suite. */
const TEST_NPM =
  /^(@playwright\/test|playwright|cypress|puppeteer|selenium-webdriver|webdriverio|@wdio\/.+|jest|vitest|mocha|chai|ava|@testing-library\/.+|k6|artillery|supertest|@types\/.+|typescript|ts-node|tsx|eslint.*|prettier|dotenv)$/;
/** JVM browser drivers and UI-test frameworks: what makes a module a UI test suite. */
const BROWSER_JVM =
  /^(org\.seleniumhq\.selenium:.+|io\.github\.bonigarcia:webdrivermanager|com\.codeborne:selenide.*|com\.microsoft\.playwright:.+|net\.serenity-bdd:.+)$/;
/** JVM test runners, assertions and test-only helpers. */
const TEST_JVM =
  /^(io\.cucumber:.+|org\.testng:.+|junit:junit|org\.junit(\.[\w-]+)*:.+|io\.rest-assured:.+|org\.assertj:.+|org\.hamcrest:.+|io\.qameta\.allure:.+|org\.mockito:.+|org\.projectlombok:lombok|org\.springframework\.boot:spring-boot-starter-test|org\.slf4j:.+|ch\.qos\.logback:.+)$/;

/**
 * A Maven/Gradle module of browser drivers and test runners only (Selenium or Playwright with
 * Cucumber / TestNG / JUnit), besides modules of its own build (its parent's group): a UI test
 * suite, whatever its sources' `main` says. A service using a browser (a crawler) also depends
 * on its framework, so it never matches.
 */
function jvmTestSuiteReason(
  own: Unit['manifests'],
  textOf: (path: string) => string,
): string | null {
  if (own.length === 0 || !own.every((m) => m.kind === 'pom.xml' || m.kind === 'build.gradle'))
    return null;
  const deps = own.flatMap((m) => m.dependencies).filter((d) => d.attributes.managed !== true);
  if (!deps.some((d) => BROWSER_JVM.test(d.name))) return null;
  // The groups of the build itself (the project's and its parent's), read before the dependencies.
  const groups = new Set<string>();
  for (const m of own) {
    const head = textOf(m.path).split(/<dependencies>/)[0] ?? '';
    for (const g of head.matchAll(/<groupId>\s*([\w.-]+)\s*<\/groupId>/g)) groups.add(g[1] ?? '');
    for (const g of head.matchAll(/^\s*group\s*=?\s*['"]([\w.-]+)['"]/gm)) groups.add(g[1] ?? '');
  }
  const inBuild = (name: string) => groups.has(name.split(':')[0] ?? '');
  if (!deps.every((d) => BROWSER_JVM.test(d.name) || TEST_JVM.test(d.name) || inBuild(d.name)))
    return null;
  return `${own[0]?.path ?? ''} depends only on browser drivers and test runners (a UI test suite)`;
}

/** Generated code: protobuf / gRPC / OpenAPI output, marked by name or by the generator's header. */
const GENERATED_DIR = /^(gen|generated|genproto|pb|protogen|proto-gen|__generated__|autogen)$/i;
const GENERATED_FILE =
  /(\.pb\.go|_pb2(_grpc)?\.pyi?|_pb\.(js|ts|d\.ts)|_grpc_pb\.(js|ts)|\.pb\.(cc|h)|Grpc\.cs)$/;
const GENERATED_HEADER =
  /^[^\n]{0,10}(Code generated .* DO NOT EDIT|<auto-generated|@generated|Generated by the protocol buffer compiler)/m;
/** TypeScript declaration files: types only, no emitted JavaScript (no program). */
const DECLARATION_FILE = /\.d\.[cm]?ts$/;

/** UI component libraries: a component-library name or Storybook, with no server. */
const UI_LIBRARY_NAME =
  /(^|[-_./@])(ui|ui-?kit|components?|design-?system|widgets|storybook|shared-ui|ui-components?)$/i;
const STORYBOOK_NPM = /^(@storybook\/.+|storybook)$/;
/** Tooling folders, and the CI configuration folders whose packages are the pipeline's helpers. */
const TOOL_DIR = /^(tools?|scripts?|hack|eng|\.github|\.gitlab|\.circleci|\.buildkite)$/i;
const DOCS_NAME = /^(docs?|documentation|docs?-?site|site-?docs|docusaurus|mkdocs)$/i;
const JOB_NAME =
  /(^|[-_.])(migrat(e|es|ion|ions|or|ionservice|ionsservice)|seed(s|er|ing|-?data)?|db-?init|init-?db|db-?setup|backfills?|fix(es|er|up)?|repair|cleanup|one-?off)$|^(fix|fixup|backfill|repair|cleanup|one-?off)([-_.]|$)/i;
const MOBILE_NPM =
  /^(react-native|expo|electron|@capacitor\/core|@ionic\/(angular|react|vue)|nativescript)$/;
const SPA_NPM = /^(react|react-dom|vue|@angular\/core|svelte|solid-js|preact)$/;
const SERVER_NPM =
  /^(express|fastify|koa|@nestjs\/core|next|nuxt|@remix-run\/(node|serve)|@hapi\/hapi|hapi|restify|@sveltejs\/kit|@sveltejs\/adapter-node|astro|hono|socket\.io|ws|@grpc\/grpc-js)$/;

/** A script that rebuilds a package on change (`tsc --watch`, `tsup --watch`, `rollup -w`). */
export const WATCH_BUILD =
  /^\s*(npx\s+)?(tsc|tsup|rollup|babel|swc|esbuild|webpack|unbuild|microbundle|vite\s+build)\b[^&|;]*\s(--watch|-w)\b/;

/**
 * A browser bundler's build, and its development server or preview (`ng serve`, `vite`, `vite
 * preview`, `webpack serve`, `parcel`): what serves a browser bundle while it is developed.
 */
const BUNDLER_BUILD = /^\s*(npx\s+)?(ng\s+build|vite\s+build|webpack\b|parcel\s+build)/;
const BUNDLER_SERVE =
  /^\s*(npx\s+)?(ng\s+serve|vite(\s+(dev|serve|preview))?(\s+--?[\w-]+(=\S+)?)*\s*$|webpack(-dev-server|\s+serve)\b|parcel(\s+serve)?(\s|$))/;

/** Code that accepts connections (`app.listen(`, `http.createServer(`, `Bun.serve(`...). */
const LISTENS =
  /\.(listen|createServer|serve)\s*\(|\bserve\s*\(\s*\{|\bexport\s+default\s+\{\s*(async\s+)?fetch\b/;

/** A name for a one-shot task: migrations, seeding, database init (`db-migrate`, `seed-data`). */
export function isJobName(name: string): boolean {
  return JOB_NAME.test(name);
}

function json(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function keysOf(v: unknown): string[] {
  return v && typeof v === 'object' ? Object.keys(v) : [];
}

/** Classifies one unit from its manifests (read through `fileByPath`) and the files it owns. */
export function classifyUnit(
  unit: Unit,
  fileByPath: Map<string, SourceFile>,
  owned: SourceFile[],
): UnitClassification {
  const own = unit.manifests.filter((m) => dirname(m.path) === unit.dir);
  const textOf = (path: string) => fileByPath.get(path)?.text ?? '';
  const csprojs = own.filter((m) => m.kind === 'csproj').map((m) => ({ m, text: textOf(m.path) }));
  const npm = own.find((m) => m.kind === 'package.json');
  const pkg = npm ? json(textOf(npm.path)) : null;
  const scripts = keysOf(pkg?.scripts);
  const deps = [...keysOf(pkg?.dependencies), ...keysOf(pkg?.devDependencies)];
  const hasDockerfile = unit.dockerfiles.length > 0;
  const dirBase = unit.dir === '' ? '' : basename(unit.dir);
  const segments = unit.dir.split('/').filter(Boolean);
  const names = [
    unit.name,
    unit.manifestName ?? '',
    dirBase,
    ...csprojs.map((c) => basename(c.m.path).replace(/\.csproj$/i, '')),
  ].filter(Boolean);
  const is = (unit_class: UnitClass, class_reason: string): UnitClassification => ({
    unit_class,
    class_reason,
  });

  // Orchestrator: the project that starts the others (.NET Aspire AppHost).
  for (const { m, text } of csprojs) {
    if (isAspireHost(text))
      return is(
        'orchestrator',
        `${m.path} references Aspire.Hosting (an AppHost that orchestrates other projects)`,
      );
  }
  // Tests.
  for (const { m, text } of csprojs) {
    if (
      /Include\s*=\s*"Microsoft\.NET\.Test\.Sdk"/i.test(text) ||
      /<IsTestProject>\s*true/i.test(text)
    )
      return is('test', `${m.path} references Microsoft.NET.Test.Sdk (a test project)`);
  }
  const testName = names.find((n) => TEST_NAME.test(n));
  if (testName) return is('test', `named like a test project (${testName})`);
  const testDir = segments.find((s) => TEST_DIR.test(s));
  if (testDir) return is('test', `lies in a test folder (${testDir}/)`);
  const runtimeDeps = keysOf(pkg?.dependencies);
  // (A Dockerfile does not make it a service: it is the suite's runner image.)
  if (
    pkg &&
    deps.some((d) =>
      /^(@playwright\/test|playwright|cypress|puppeteer|selenium-webdriver|webdriverio|k6|artillery)$/.test(
        d,
      ),
    ) &&
    deps.every((d) => TEST_NPM.test(d)) &&
    runtimeDeps.every((d) => TEST_NPM.test(d))
  )
    return is(
      'test',
      `${npm?.path} depends only on test runners and browser drivers (a test suite)`,
    );
  const jvmSuite = jvmTestSuiteReason(own, textOf);
  if (jvmSuite) return is('test', jvmSuite);
  // Generated code (protobuf / gRPC stubs): a folder named for it (its Dockerfile, if any, is
  // the generator's image), or a unit whose sources are all generated.
  const code = owned.filter((f) => /\.(go|py|pyi|[cm]?[jt]sx?|cs|java|kt|rs|cc|h)$/.test(f.path));
  const genDir = segments.find((s) => GENERATED_DIR.test(s));
  // A unit with no sources of its own there is not generated code (a generator tool named gen).
  if (genDir !== undefined && code.length > 0)
    return is('library', `lies in a generated-code folder (${genDir}/)`);
  // Without sources there, it is the generator: its manifest lists the generator's tools.
  if (genDir !== undefined)
    return is('tool', `generates the code of its folder (${genDir}/) and holds none`);
  if (
    !hasDockerfile &&
    code.length > 0 &&
    code.every((f) => GENERATED_FILE.test(f.path) || GENERATED_HEADER.test(f.text.slice(0, 400)))
  )
    return is('library', 'holds only generated code (protobuf / gRPC stubs, generator headers)');
  // UI component libraries: imported by apps, never run on their own.
  const storybook = deps.find((d) => STORYBOOK_NPM.test(d));
  const uiName = names.find((n) => UI_LIBRARY_NAME.test(n));
  if (
    pkg &&
    !hasDockerfile &&
    (storybook !== undefined || uiName !== undefined) &&
    deps.some((d) => SPA_NPM.test(d)) &&
    !deps.some((d) => SERVER_NPM.test(d)) &&
    // A start script that only serves the component catalogue (Storybook) runs no product.
    (!scripts.includes('start') ||
      /storybook/.test(String((pkg.scripts as Record<string, unknown>).start)))
  )
    return is(
      'library',
      `${npm?.path} is a UI component library (${storybook ?? uiName}) with no server`,
    );
  // Client apps.
  for (const { m, text } of csprojs) {
    const tf = /<TargetFrameworks?>([^<]*)</i.exec(text)?.[1] ?? '';
    if (/<UseMaui>\s*true/i.test(text) || /-(android|ios|maccatalyst)\b/i.test(tf))
      return is('client', `${m.path} is a mobile app (MAUI / mobile target framework)`);
    if (/<Use(WPF|WindowsForms)>\s*true/i.test(text))
      return is('client', `${m.path} is a desktop app (WPF / Windows Forms)`);
    if (/Sdk\s*=\s*"Microsoft\.NET\.Sdk\.BlazorWebAssembly"/i.test(text))
      return is('client', `${m.path} is a Blazor WebAssembly app (runs in the browser)`);
  }
  const mobile = deps.find((d) => MOBILE_NPM.test(d));
  if (mobile) return is('client', `${npm?.path} depends on ${mobile} (a mobile or desktop app)`);
  const cargos = own.filter((m) => m.kind === 'Cargo.toml');
  const tauri = cargos
    .map((m) => cargoDesktopAppReason(m.path, m.dependencies, owned))
    .find((r) => r !== null);
  if (tauri) return is('client', tauri);
  const spa = deps.find((d) => SPA_NPM.test(d));
  if (spa && !hasDockerfile && !deps.some((d) => SERVER_NPM.test(d)))
    return is('client', `${npm?.path} is a browser app (${spa}) with no server and no Dockerfile`);
  // A browser bundle: built by a browser bundler and served only by its development server or
  // preview (`ng serve`, `vite preview`), no start script, no server dependency, no Dockerfile (a
  // plugin or demo page loaded in a browser; its dependencies may live in the workspace root).
  if (pkg && !hasDockerfile && !deps.some((d) => SERVER_NPM.test(d))) {
    const script = (n: string) => String((pkg.scripts as Record<string, unknown>)[n] ?? '');
    const serves = scripts.filter((n) => /^(start|serve|dev|preview)$/.test(n));
    const bundler = scripts.map(script).find((c) => BUNDLER_BUILD.test(c));
    if (
      bundler !== undefined &&
      serves.length > 0 &&
      !serves.includes('start') &&
      serves.every((n) => BUNDLER_SERVE.test(script(n)))
    )
      return is(
        'client',
        `${npm?.path} is a browser bundle (${bundler.trim().split(/\s+/).slice(0, 2).join(' ')}) served only by a bundler's development server`,
      );
  }
  // Tooling.
  const toolDir = segments.find((s) => TOOL_DIR.test(s));
  if (toolDir && !hasDockerfile) return is('tool', `lies in a tooling folder (${toolDir}/)`);
  // A documentation site (Docusaurus, MkDocs, a static site generator): built into pages, never
  // part of the running system unless a deployment runs it (then reconcile makes it a service).
  const docsName = [dirBase, unit.name].find((n) => DOCS_NAME.test(n));
  if (docsName && !hasDockerfile) return is('tool', `a documentation site (${docsName})`);
  // A Go module without Go sources (bingo's `.bingo/`: a placeholder go.mod beside one `*.mod`
  // per pinned build tool) pins tools; nothing runs it.
  const goMod = own.find((m) => m.kind === 'go.mod');
  if (
    goMod &&
    !hasDockerfile &&
    own.every((m) => m.kind === 'go.mod') &&
    !owned.some((f) => f.path.endsWith('.go'))
  )
    return is('tool', `${goMod.path} is a Go module with no Go sources (it pins build tools)`);
  const cargoTool = own
    .filter((m) => m.kind === 'Cargo.toml')
    .map((m) => cargoToolReason(m.path, textOf(m.path)))
    .find((r) => r !== null);
  if (cargoTool && !hasDockerfile) return is('tool', cargoTool);
  const cargoCli = cargos
    .map((m) =>
      cargoCommandLineToolReason(
        m.path,
        m.dependencies,
        owned,
        (d) => !!classifyClient('cargo', d),
      ),
    )
    .find((r) => r !== null);
  if (cargoCli && !hasDockerfile) return is('tool', cargoCli);
  for (const { m, text } of csprojs)
    if (/<PackAsTool>\s*true/i.test(text))
      return is('tool', `${m.path} is a .NET tool (PackAsTool)`);
  if (pkg && pkg.bin !== undefined && !scripts.includes('start') && !hasDockerfile)
    return is('tool', `${npm?.path} declares a command (bin) and no start script`);
  // A script package: its code runs and exits (it declares dependencies, none a server framework
  // or a datastore/broker client that a worker would poll; no code listens), and no Dockerfile
  // packages it. Without dependencies there is too little to judge: the default stands.
  const sources = owned.filter((f) => /\.[cm]?[jt]sx?$/.test(f.path));
  if (
    pkg &&
    !hasDockerfile &&
    sources.length > 0 &&
    deps.length > 0 &&
    !deps.some((d) => SERVER_NPM.test(d) || classifyClient('npm', d) !== null) &&
    !sources.some((f) => LISTENS.test(f.text))
  )
    return is(
      'tool',
      `${npm?.path} runs a script: its dependencies hold no server framework and no datastore or broker client, and no code listens`,
    );
  // One-shot jobs.
  const jobName = names.find(isJobName);
  if (jobName) return is('job', `named for a one-shot task (${jobName})`);
  // Libraries.
  if (!hasDockerfile) {
    const hasMain = owned.some(
      (f) =>
        /(^|\/)Program\.cs$/i.test(f.path) ||
        (/\.cs$/i.test(f.path) && /\bstatic\s+(async\s+)?[\w<>]+\s+Main\s*\(/.test(f.text)),
    );
    for (const { m, text } of csprojs) {
      // A SQL database project builds a schema package (dacpac) a deployment step applies.
      if (/Sdk\s*=\s*"(MSBuild\.Sdk\.SqlProj|Microsoft\.Build\.Sql)\b/i.test(text))
        return is('library', `${m.path} is a database schema project (dacpac), no program`);
      // The plain SDK, or the Razor SDK of a Razor class library (components, pages).
      const plain = /Sdk\s*=\s*"Microsoft\.NET\.Sdk(\.Razor)?"/i.test(text);
      const exe = /<OutputType>\s*(Win)?Exe/i.test(text);
      if ((/<OutputType>\s*Library/i.test(text) || (plain && !exe)) && !hasMain)
        return is('library', `${m.path} is a class library (no executable output, no Program.cs)`);
    }
    const jvm = jvmLibraryReason(unit, textOf, owned, fileByPath);
    if (jvm) return is('library', jvm);
    const gradle = gradleLibraryReason(unit, textOf, owned, fileByPath.values());
    if (gradle) return is('library', gradle);
    const goFiles = owned.filter((f) => f.path.endsWith('.go'));
    if (
      unit.goModule &&
      goFiles.length > 0 &&
      !goFiles.some((f) => /^\s*package\s+main\b/m.test(f.text))
    )
      return is('library', `Go module ${unit.goModule} has no package main`);
    const cargo = own.find((m) => m.kind === 'Cargo.toml');
    if (cargo) {
      const text = textOf(cargo.path);
      const bin =
        /^\s*\[\[bin\]\]/m.test(text) || owned.some((f) => /(^|\/)src\/main\.rs$/.test(f.path));
      if (
        !bin &&
        (/^\s*\[lib\]/m.test(text) || owned.some((f) => /(^|\/)src\/lib\.rs$/.test(f.path)))
      )
        return is('library', `${cargo.path} builds a library and no binary`);
    }
    // A start/serve/dev script that only rebuilds the package (`tsc --watch`) runs nothing.
    const runs = scripts.filter(
      (s) =>
        /^(start|serve|dev)$/.test(s) &&
        !WATCH_BUILD.test(String((pkg?.scripts as Record<string, unknown>)[s])),
    );
    if (
      pkg &&
      runs.length === 0 &&
      // A private package is no published one, but one built to be imported by its workspace.
      (pkg.private !== true
        ? ['exports', 'types', 'typings', 'peerDependencies', 'publishConfig']
        : ['exports', 'types', 'typings']
      ).some((k) => k in pkg)
    )
      return is(
        'library',
        `${npm?.path} is a package built to be imported (exports/types) with no start script`,
      );
    // Nothing to run: no source of its own, no dependency, no start script (a shared
    // configuration package, a repository root whose scripts run its members' tasks). A
    // TypeScript declaration file (`.d.ts`) holds only types and emits no JavaScript: no program.
    if (
      pkg &&
      own.every((m) => m.kind === 'package.json') &&
      code.every((f) => DECLARATION_FILE.test(f.path)) &&
      deps.length === 0 &&
      runs.length === 0
    )
      return is(
        'library',
        `${npm?.path} holds nothing to run: no source of its own, no dependency, no start script`,
      );
  }
  // A manifest that only holds dependencies: no name (no package anyone imports or runs), no
  // script, no entry point and no source of its own (a repository root pinning one front-end
  // package for the member apps). Nothing runs it unless a deployment does.
  if (
    pkg &&
    !hasDockerfile &&
    pkg.name === undefined &&
    own.every((m) => m.kind === 'package.json') &&
    code.length === 0 &&
    scripts.length === 0 &&
    !['main', 'bin', 'exports'].some((k) => k in pkg)
  )
    return is(
      'library',
      `${npm?.path} only holds dependencies: no name, no script, no entry point, no source of its own`,
    );
  // Nothing runs it: dependencies and scripts that only lint, format, test or build it (none
  // starts, serves or runs it in development), or an entry point (`main`/`module`) and no script
  // at all; no command
  // (bin), no server framework and no datastore or broker client among its dependencies, no code
  // that listens (a shared or vendored package others import).
  if (
    pkg &&
    !hasDockerfile &&
    // With scripts, dependencies say it is code to run or to import; with none, too little to
    // judge (the default stands), unless a `main` entry says it is imported.
    (scripts.length > 0 ? deps.length > 0 : 'main' in pkg || 'module' in pkg) &&
    !scripts.some(
      (n) =>
        /^(start|serve|dev)$/.test(n) &&
        !WATCH_BUILD.test(String((pkg.scripts as Record<string, unknown>)[n])),
    ) &&
    !('bin' in pkg) &&
    !runtimeDeps.some((d) => SERVER_NPM.test(d) || classifyClient('npm', d) !== null) &&
    !sources.some((f) => LISTENS.test(f.text))
  )
    return is(
      'library',
      `${npm?.path} is only built, tested or imported: no start, serve or dev script, no command, no server or datastore dependency, no code that listens`,
    );
  // Deployable services.
  if (hasDockerfile) return is('service', `builds an image (${unit.dockerfiles[0]})`);
  for (const { m, text } of csprojs) {
    if (/Sdk\s*=\s*"Microsoft\.NET\.Sdk\.(Web|Worker)"/i.test(text))
      return is('service', `${m.path} uses the ASP.NET / worker SDK`);
    if (/<OutputType>\s*Exe/i.test(text)) return is('service', `${m.path} builds an executable`);
  }
  if (scripts.includes('start')) return is('service', `${npm?.path} has a start script`);
  return is('service', DEFAULT_SERVICE_REASON);
}
