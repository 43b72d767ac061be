/**
 * Unit classification: what a code unit is, from its own files. Only a deployable service becomes
 * a `service` entity by itself; the other classes stay evidence unless a deployment declaration
 * (a compose service, a Kubernetes workload) builds or runs the unit (reconcile decides that).
 *
 * The first rule that matches decides, in this order (each with the reason it gives):
 * - orchestrator: a project referencing `Aspire.Hosting*` or the Aspire AppHost SDK;
 * - test: a test project (`*.Tests`, `*.UnitTests`, `*-e2e`, a `tests`/`e2e` folder, a
 *   project referencing Microsoft.NET.Test.Sdk or marked IsTestProject);
 * - client: a mobile or desktop app (MAUI, WPF, WinForms, Blazor WebAssembly, React Native,
 *   Expo, Electron, Capacitor/Ionic) or a browser SPA without a server and without a Dockerfile;
 * - tool: a unit in a tooling folder (`tools`, `scripts`, `hack`, `eng`) without a Dockerfile,
 *   a .NET tool (PackAsTool), or an npm package with `bin` and no start script;
 * - job: a unit named for a one-shot task (migrations, seeding, db init);
 * - library: a .NET class library (plain SDK, no Exe output, no Program.cs/Main), a Go module
 *   without `package main`, a Cargo library without a binary, an npm package published as a
 *   library (exports/types/peerDependencies, no start script, not private); none with a Dockerfile;
 * - service: everything else (a Dockerfile, a web/worker SDK, a start script, or by default).
 */
import type { SourceFile } from '../evidence';
import { basename, dirname } from '../shared/paths';
import { classifyClient } from './clients';
import type { Unit } from './model';

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
  /(^|[-_.])(tests?|unittests?|integrationtests?|functionaltests?|e2e|e2etests?|specs?|testing)$/i;
const TEST_DIR = /^(tests?|__tests__|e2e|integration-tests?|test-?e2e)$/i;
const TOOL_DIR = /^(tools?|scripts?|hack|eng)$/i;
const JOB_NAME =
  /(^|[-_.])(migrat(e|es|ion|ions|or|ionservice|ionsservice)|seed(s|er|ing|-?data)?|db-?init|init-?db|db-?setup)$/i;
const MOBILE_NPM =
  /^(react-native|expo|electron|@capacitor\/core|@ionic\/(angular|react|vue)|nativescript)$/;
const SPA_NPM = /^(react|react-dom|vue|@angular\/core|svelte|solid-js|preact)$/;
const SERVER_NPM =
  /^(express|fastify|koa|@nestjs\/core|next|nuxt|@remix-run\/(node|serve)|@hapi\/hapi|hapi|restify|@sveltejs\/kit|@sveltejs\/adapter-node|astro|hono|socket\.io|ws|@grpc\/grpc-js)$/;

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
  const spa = deps.find((d) => SPA_NPM.test(d));
  if (spa && !hasDockerfile && !deps.some((d) => SERVER_NPM.test(d)))
    return is('client', `${npm?.path} is a browser app (${spa}) with no server and no Dockerfile`);
  // Tooling.
  const toolDir = segments.find((s) => TOOL_DIR.test(s));
  if (toolDir && !hasDockerfile) return is('tool', `lies in a tooling folder (${toolDir}/)`);
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
      const plain = /Sdk\s*=\s*"Microsoft\.NET\.Sdk"/i.test(text);
      const exe = /<OutputType>\s*(Win)?Exe/i.test(text);
      if ((/<OutputType>\s*Library/i.test(text) || (plain && !exe)) && !hasMain)
        return is('library', `${m.path} is a class library (no executable output, no Program.cs)`);
    }
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
    if (
      pkg &&
      pkg.private !== true &&
      !scripts.some((s) => /^(start|serve|dev)$/.test(s)) &&
      ['exports', 'types', 'typings', 'peerDependencies', 'publishConfig'].some((k) => k in pkg)
    )
      return is(
        'library',
        `${npm?.path} is a published package (exports/types) with no start script`,
      );
  }
  // Deployable services.
  if (hasDockerfile) return is('service', `builds an image (${unit.dockerfiles[0]})`);
  for (const { m, text } of csprojs) {
    if (/Sdk\s*=\s*"Microsoft\.NET\.Sdk\.(Web|Worker)"/i.test(text))
      return is('service', `${m.path} uses the ASP.NET / worker SDK`);
    if (/<OutputType>\s*Exe/i.test(text)) return is('service', `${m.path} builds an executable`);
  }
  if (scripts.includes('start')) return is('service', `${npm?.path} has a start script`);
  return is('service', 'a unit with a manifest and no sign of another class');
}
