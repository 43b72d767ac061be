/**
 * A deployment started from JVM code with Testcontainers (docs/decisions.md, "issue 23, session
 * 13: Testcontainers launchers"). A launcher is the code a Gradle run task starts: the
 * `mainClass` of a `JavaExec` task or of the `application` plugin, found in a source set of the
 * build file's project, with the classes that main class reaches by name in that source set and
 * the subclasses of those (an abstract `ApplicationUnderTest` made by reflection runs its
 * `...UsingTestContainers` subclass). Ordinary integration tests run by no such task are no
 * deployment. In a launcher, each container statement with `.withNetworkAliases("name")` is a
 * deployment unit named by its first alias, read like a compose service:
 * - its image: a string passed to the constructor or factory (`new GenericContainer<>("redis:7")`,
 *   `DockerImageName.parse(..)`, `new MongoDBContainer("mongo:8")`), or a Dockerfile path (a
 *   string naming a `Dockerfile`, relative to the project directory the task runs in) whose
 *   folder is the unit built; a module class named for an engine (`KafkaContainer`) or the alias
 *   itself (`kafka`) types a container whose image the code does not show;
 * - `withEnv("K", "v")` values are environment entries resolved against the aliases;
 * - `withExposedPorts(8080)` its container port; `dependsOn(x)` start order;
 * - another container passed to a `with*` method (`.withDatabase(db)`, `.withKafka(kafka)`) is
 *   handed to it by a library helper whose settings are not in the repository: a weak
 *   connection (`via: container-argument`).
 * Records are cloud records of provider `testcontainers`, so reconcile treats them like any
 * deployment declaration. Pure.
 */
import { entityKey, type Evidence, type SourceFile } from '../evidence';
import { classifyImage, singlePort } from '../cloud/common';
import { envReferences, type HostResolver } from '../cloud/env';
import { evidence, type Span } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef, type ImageRef } from '../shared/images';
import { basename, dirname, isWithin, joinPath } from '../shared/paths';
import type { CodeModel } from './model';
import { closeParen, statements, stripComments } from './statements';

const BUILD_FILE = /(^|\/)build\.gradle(\.kts)?$/;
const MAIN_CLASS = /\b(?:mainClass|mainClassName)\s*(?:=|\.set\s*\()\s*["']([A-Za-z_][\w.$]*)["']/g;
const APPLICATION_PLUGIN =
  /\bid\s*\(?\s*["']application["']|apply\s+plugin\s*:\s*["']application["']|^\s*application\s*\{/m;
const MAIN_METHOD = /\bstatic\s+void\s+main\s*\(|\bfun\s+main\s*\(/;
/** Methods only a Testcontainers container has: a statement calling one builds a container. */
/** A container class named for a database of no one engine. */
const DATABASE_CLASS = /(Database|Db|DB)Container$/;
const CONTAINER_METHODS = new Set([
  'withNetworkAliases',
  'withNetwork',
  'withExposedPorts',
  'withReuse',
  'withStartupTimeout',
  'withLogConsumer',
  'waitingFor',
]);
/** `apiGatewayService` -> `api-gateway-service`. */
const kebab = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/_/g, '-');
const STRING = /"((?:[^"\\\n]|\\.)*)"/g;

/** A container statement of a launcher. */
interface Container {
  file: SourceFile;
  /** Offsets of the statement in the file. */
  start: number;
  end: number;
  variable: string | null;
  name: string;
  aliases: string[];
  className: string | null;
  image: ImageRef | null;
  dockerfile: string | null;
  env: Array<{ name: string; value: string; at: number }>;
  ports: string[];
  /** `[method, variable, offset]` of each call passing a variable. */
  handed: Array<[string, string, number]>;
}

/** Deployment records of every Testcontainers launcher a Gradle run task starts. */
export function testcontainersEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  for (const build of model.files) {
    if (!BUILD_FILE.test(build.path)) continue;
    if (!/\bJavaExec\b/.test(build.text) && !APPLICATION_PLUGIN.test(build.text)) continue;
    const project = dirname(build.path);
    for (const m of build.text.matchAll(MAIN_CLASS)) {
      const launcher = launcherFiles(model, project, m[1] ?? '');
      if (launcher.length === 0) continue;
      out.push(...launcherEvidence(launcher, project, build.path));
    }
  }
  return out;
}

/** The main class's file and what it reaches in its source set, or [] without the class. */
function launcherFiles(model: CodeModel, project: string, mainClass: string): SourceFile[] {
  const rel = mainClass.replace(/\$.*$/, '').replace(/\./g, '/');
  const tail = new RegExp(`^(src/[\\w-]+)/(?:java|kotlin)/${escape(rel)}\\.(?:java|kt)$`);
  const under = (f: SourceFile) => (project === '' ? f.path : f.path.slice(project.length + 1));
  const simple = basename(rel);
  const named = new RegExp(
    `^(src/[\\w-]+)/(?:java|kotlin)/(?:.+/)?${escape(simple)}\\.(?:java|kt)$`,
  );
  const own = model.files.filter((f) => isWithin(f.path, project));
  // The class by its full name, else (a package renamed since the build file was written) the
  // one class of that simple name in the project that has a main method.
  const bySimple = own.filter((f) => named.test(under(f)) && MAIN_METHOD.test(f.text));
  const main =
    own.find((f) => tail.test(under(f))) ?? (bySimple.length === 1 ? bySimple[0] : undefined);
  if (!main) return [];
  // The main class's source set: the classes it reaches are looked for there.
  const root = joinPath(project, named.exec(under(main))?.[1] ?? '') ?? project;
  const set = model.files.filter((f) => isWithin(f.path, root) && /\.(java|kt)$/.test(f.path));
  const className = (f: SourceFile) => basename(f.path).replace(/\.(java|kt)$/, '');
  const reached = new Set<SourceFile>([main]);
  for (let grew = true; grew;) {
    grew = false;
    const names = [...reached].map(className);
    for (const f of set) {
      if (reached.has(f)) continue;
      const own = className(f);
      const used = [...reached].some((r) => new RegExp(`\\b${escape(own)}\\b`).test(r.text));
      const extending = names.some((n) =>
        new RegExp(
          `\\b(extends|implements)\\s+[\\w.]*\\b${escape(n)}\\b|:\\s*${escape(n)}\\s*\\(`,
        ).test(f.text),
      );
      if (used || extending) {
        reached.add(f);
        grew = true;
      }
    }
  }
  return [...reached].filter((f) => /\btestcontainers\b/.test(f.text));
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The calls of an expression's chain, outside every parenthesis (`new X(a.b(c)).withEnv(..)` has
 * one, `withEnv`): `[method, arguments, end offset, start offset]`.
 */
function chainCalls(stmt: string, from: number): Array<[string, string, number, number]> {
  const out: Array<[string, string, number, number]> = [];
  const call = /^\.\s*(\w+)\s*(?:<[^()]*>)?\s*\(/;
  for (let i = from; i < stmt.length; i++) {
    const c = stmt[i];
    if (c === '"') {
      const end = /^"(?:[^"\\\n]|\\.)*"/.exec(stmt.slice(i));
      if (end) i += end[0].length - 1;
    } else if (c === '(') {
      const close = closeParen(stmt, i);
      if (close < 0) break;
      i = close - 1;
    } else if (c === '.') {
      const m = call.exec(stmt.slice(i));
      if (!m) continue;
      const open = i + m[0].length - 1;
      const close = closeParen(stmt, open);
      if (close < 0) break;
      out.push([m[1] ?? '', stmt.slice(open + 1, close - 1), close, i]);
      i = close - 1;
    }
  }
  return out;
}

const strings = (s: string) => [...s.matchAll(STRING)].map((m) => m[1] ?? '');

/** The container a statement declares, or null when it names no network alias. */
function containerOf(file: SourceFile, text: string, start: number, end: number): Container | null {
  const stmt = text.slice(start, end);
  const head =
    /^\s*(?:(?:private|public|protected|final|static|val|var)\s+)*(?:([A-Z][\w.]*)(?:<[^=]*>)?\s+)?(\w+)\s*(?::\s*([A-Z][\w.]*)[^=]*)?=(?!=)/.exec(
      stmt,
    );
  const expr = head ? head[0].length : 0;
  const calls = chainCalls(stmt, expr);
  const firstWith = calls.find(([method]) => /^(with|dependsOn)/.test(method))?.[3] ?? -1;
  if (!calls.some(([method]) => CONTAINER_METHODS.has(method))) return null;
  const aliasCall = calls.find(([method]) => method === 'withNetworkAliases');
  const aliases = aliasCall ? strings(aliasCall[1]) : [];
  // No alias: no other container reaches it by name; it is named after its variable.
  const name = (aliases[0] ?? kebab(head?.[2] ?? '')).trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(name)) return null;
  const construction = stmt.slice(expr, firstWith < 0 ? stmt.length : firstWith);
  const written = strings(construction);
  const dockerfile = written.find((s) => /^Dockerfile/.test(basename(s))) ?? null;
  const imageText = dockerfile
    ? null
    : (written.find((s) => /^[\w./-]+(:[\w.-]+)?$/.test(s) && /[:/]/.test(s)) ?? null);
  const created = /\bnew\s+([A-Z]\w*)/.exec(construction)?.[1] ?? null;
  const env: Container['env'] = [];
  const ports: string[] = [];
  const handed: Container['handed'] = [];
  for (const [method, args, close] of calls) {
    if (method === 'withEnv') {
      const [k, v] = strings(args);
      if (k !== undefined && v !== undefined && /^\s*"/.test(args))
        env.push({ name: k, value: v, at: start + close });
    } else if (method === 'withExposedPorts') {
      for (const p of args.split(',')) if (/^\s*\d+\s*$/.test(p)) ports.push(p.trim());
    } else if (/^(with|dependsOn)/.test(method)) {
      for (const a of args.split(',')) {
        const v = /^\s*([a-z_]\w*)\s*$/i.exec(a)?.[1];
        if (v) handed.push([method, v, start + close]);
      }
    }
  }
  return {
    file,
    start,
    end,
    variable: head?.[2] ?? null,
    name,
    aliases: aliases.slice(1).map((a) => a.toLowerCase()),
    className: created ?? head?.[1] ?? head?.[3] ?? null,
    image: imageText ? parseImageRef(imageText) : null,
    dockerfile,
    env,
    ports,
    handed,
  };
}

/** What a container runs: its image, else its module class (`KafkaContainer`), else its alias. */
function classOf(c: Container) {
  if (c.dockerfile) return null;
  if (c.image) return classifyImage(c.image);
  const engine = c.className?.replace(/Container$/, '').toLowerCase();
  return (
    (engine ? classifyImage(parseImageRef(engine)) : null) ?? classifyImage(parseImageRef(c.name))
  );
}

function launcherEvidence(files: SourceFile[], project: string, build: string): Evidence[] {
  const containers: Container[] = [];
  for (const file of files) {
    const text = stripComments(file.text);
    for (const st of statements(text)) {
      if (!/\.\s*(with|dependsOn)/.test(st.text)) continue;
      const c = containerOf(file, text, st.start, st.start + st.text.length);
      if (c) containers.push(c);
    }
  }
  const names = new Map<string, string>();
  for (const c of containers)
    for (const a of [c.name, ...c.aliases]) if (!names.has(a)) names.set(a, c.name);
  const resolver: HostResolver = (host) => {
    const n = names.get(host.toLowerCase());
    if (n) return { key: entityKey('service', n), name: n };
    return host.includes('.') || host.includes(':')
      ? null
      : { key: entityKey('service', host), name: host, via: 'unresolved-short-name' };
  };
  const byVariable = new Map(containers.filter((c) => c.variable).map((c) => [c.variable, c]));
  const out: Evidence[] = [];
  for (const c of containers) {
    const span = spanOf(c.file.text, c.start, c.end);
    const subject = entityKey('service', c.name);
    const emit = (
      at: Span,
      kind: string,
      summary: string,
      attributes: Record<string, unknown>,
      rel?: [string, string],
      who = subject,
    ) =>
      out.push(
        evidence(c.file, at, {
          source: 'cloud',
          provider: 'testcontainers',
          kind,
          subject: who,
          summary: `Testcontainers container ${c.name} ${summary}`,
          attributes: { launcher_build: build, ...attributes },
          ...(rel ? { relationship: rel[0], object: rel[1] } : {}),
        }),
      );
    const dockerfile = c.dockerfile ? joinPath(project, c.dockerfile) : null;
    const context = dockerfile ? dirname(dockerfile) : null;
    emit(span, 'service-declared', 'is declared', {
      image: c.image
        ? { raw: c.image.raw, repo: c.image.repo, tag: c.image.tag, digest: c.image.digest }
        : null,
      image_tag: c.image?.tag ?? null,
      build: context
        ? { context: context, context_dir: context, dockerfile: basename(dockerfile ?? '') }
        : null,
      build_context: context,
      container_class: c.className,
      container_port: singlePort(c.ports),
      aliases: c.aliases,
    });
    if (c.image)
      emit(span, 'image-reference', `runs image ${c.image.raw}`, imageAttributes(c.image), [
        'uses_image',
        imageKey(c.image) ?? '',
      ]);
    const cls = classOf(c);
    const database = !cls && !c.dockerfile && !c.image && DATABASE_CLASS.test(c.className ?? '');
    if (database)
      // `EventuateDatabaseContainer` made by a factory: a database, its engine chosen at run time.
      emit(
        span,
        'datastore-declared',
        `runs a database (${c.className ?? ''}; engine not in the code)`,
        { engine: null, engine_clue: c.className, service_key: subject },
        undefined,
        entityKey('datastore', c.name),
      );
    if (cls)
      emit(
        span,
        cls.kind === 'datastore' ? 'datastore-declared' : 'queue-declared',
        `runs a ${cls.engine} ${cls.kind}`,
        {
          engine: cls.engine,
          service_key: subject,
          ...(c.image
            ? { image: c.image.repo, tag: c.image.tag }
            : { engine_clue: c.className ?? c.name }),
        },
        undefined,
        entityKey(cls.kind, c.name),
      );
    for (const v of c.env) {
      const at = spanOf(c.file.text, v.at - 1, v.at - 1);
      for (const r of envReferences(v.name, v.value, resolver))
        emit(
          at,
          r.kind,
          r.summary,
          r.attributes,
          r.object && r.relationship ? [r.relationship, r.object] : undefined,
        );
    }
    for (const [method, variable, offset] of c.handed) {
      const other = byVariable.get(variable);
      if (!other || other === c) continue;
      const at = spanOf(c.file.text, offset - 1, offset - 1);
      const target = entityKey('service', other.name);
      if (method === 'dependsOn')
        emit(at, 'depends-on', `depends on ${other.name}`, { form: 'dependsOn' }, [
          'depends_on',
          target,
        ]);
      else
        emit(
          at,
          'container-reference',
          `is handed container ${other.name} (${method})`,
          { via: 'container-argument', method },
          ['connects_to', target],
        );
    }
  }
  return out;
}

function spanOf(text: string, start: number, end: number): Span {
  const line = (o: number) => text.slice(0, o).split('\n').length;
  // The statement's first non-blank line.
  const lead = /^\s*/.exec(text.slice(start))?.[0].length ?? 0;
  return { start: line(start + lead), end: line(Math.max(start + lead, end)) };
}
