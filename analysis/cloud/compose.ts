/**
 * docker-compose files: services, their images, ports, volumes, dependencies, and the
 * environment values that point at other services or hold literal secrets.
 */
import type { AnalyzerGap, AnalyzerOutput, Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { related, type Span } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef, type ImageRef } from '../shared/images';
import { dirname, isWithin, joinPath } from '../shared/paths';
import { asArray, asString, isRecord } from '../shared/values';
import { compareStrings } from '../shared/text';
import type { PathItem } from '../shared/yaml';
import {
  classifyDeclared,
  classifyImage,
  isServerSetting,
  singlePort,
  storeDeclared,
} from './common';
import { builtEngines, type BuiltEngine } from './built-images';
import { composeFacts, enginesByImage, type PeerClass } from './compose-image-peers';
import { locate, readComposeFiles, type ComposeFile } from './compose-merge';
import { commandAddresses } from './compose-command';
import {
  engineNamedReference,
  storeNameReference,
  storeServiceNames,
  storesByEngine,
} from './compose-store-names';
import { mountRecords, type EnvTemplateVars } from './compose-mounts';
import { isEnvTemplate } from './env-templates';
import {
  documentedReferences,
  projectEnvTemplate,
  type ProjectEnvTemplate,
} from './compose-env-template';
import { envReferences, type EnvFinding, type HostResolver } from './env';
import { chosenEngine, excludedByEngineChoice } from './engine-choice';
import { storeIgnores } from './store-image-env';
import {
  envFilePrograms,
  foreignFrameworkVariables,
  mountedConfigText,
  programOf,
} from './compose-env-sharing';
import { connectorEvidence } from './kafka-connectors';
import {
  buildContext,
  cite,
  credentialVariables,
  dependencies,
  environment,
  hasHealthcheck,
  interpolate,
  parseDotenv,
  parsePort,
  envTemplateOf,
  resourceLimits,
  serviceHostNames,
  type EnvVar,
} from './compose-values';

export { interpolate, parseDotenv };

/**
 * Analyzes compose files; hosts resolve against services of every compose file in the same
 * directory. `envFiles` are `.env` files: Compose reads the one in a compose file's directory (the
 * project directory) to interpolate `${VAR}` and to give `- VAR` entries without a value their
 * value, so references are resolved the way `docker compose up` would resolve them.
 */
export function analyzeCompose(
  files: SourceFile[],
  envFiles: SourceFile[] = [],
  otherFiles: SourceFile[] = [],
): AnalyzerOutput {
  const byPath = new Map([...otherFiles, ...envFiles].map((f) => [f.path, f]));
  // `include`d files, `extends` applied (compose-merge.ts); files read to nothing are gaps.
  const { parsed, gaps } = readComposeFiles(files, byPath);
  const built = builtEngines(parsed, byPath);
  // Per env file, the programs of the containers it is given to (compose-env-sharing.ts).
  const sharers = envFilePrograms(parsed, (cf) => {
    const dotenv = envFiles.find((f) => dirname(f.path) === dirname(cf.file.path));
    return dotenv ? parseDotenv(dotenv.text) : new Map<string, string>();
  });
  const evidence: Evidence[] = [];
  for (const cf of parsed) {
    const siblings = parsed.filter((o) => dirname(o.file.path) === dirname(cf.file.path));
    const dotenv = envFiles.find((f) => dirname(f.path) === dirname(cf.file.path));
    const vars = dotenv ? parseDotenv(dotenv.text) : new Map<string, string>();
    const resolver = composeResolver(siblings, vars);
    // No `.env`: the committed template beside the compose file (`env.example`, `.env.sample`).
    const template = dotenv
      ? undefined
      : otherFiles
          .filter((f) => dirname(f.path) === dirname(cf.file.path) && isEnvTemplate(f.path))
          .sort((a, b) => compareStrings(a.path, b.path))[0];
    const documented = dotenv ? null : projectEnvTemplate(cf.file, otherFiles);
    const serviceNames = new Set(siblings.flatMap((o) => Object.keys(o.services)));
    // Once per file, not per service: 10,000 services would make it quadratic (issue 24).
    const stores = storeServiceNames(siblings, vars);
    const byEngine = storesByEngine(stores);
    const peers = enginesByImage(siblings, vars);
    for (const [name, svc] of Object.entries(cf.services)) {
      if (isRecord(svc))
        evidence.push(
          ...serviceEvidence(
            { cf, name, svc },
            {
              resolver,
              vars,
              template: template
                ? {
                    path: template.path,
                    vars: parseDotenv(template.text),
                    holds: (p) =>
                      p !== null && [...byPath.keys()].some((k) => k === p || isWithin(k, p)),
                  }
                : null,
              documented,
              serviceNames,
              stores,
              byEngine,
              files: byPath,
              built,
              peers,
              sharers,
            },
          ),
        );
    }
  }
  // Connectors registered with the project's Kafka Connect worker (kafka-connectors.ts).
  const projectOf = (cf: ComposeFile) => {
    const dotenv = envFiles.find((f) => dirname(f.path) === dirname(cf.file.path));
    return composeResolver(
      parsed.filter((o) => dirname(o.file.path) === dirname(cf.file.path)),
      dotenv ? parseDotenv(dotenv.text) : new Map<string, string>(),
    );
  };
  for (const e of connectorEvidence(parsed, otherFiles, projectOf)) evidence.push(e);
  return { evidence, gaps: [...gaps, ...missingEnvFiles(parsed, byPath, envFiles)] };
}

/**
 * `env_file` entries naming a file the repository does not hold (`.env`, made by the user from a
 * committed `.env.example`): every setting of the services reading it is unknown; the audit says
 * so (a gap that keeps the snapshot from `complete`), even when the template's values naming the
 * project's services were taken (envFileEvidence). `required: false` entries are optional.
 */
function missingEnvFiles(
  parsed: ComposeFile[],
  byPath: Map<string, SourceFile>,
  envFiles: SourceFile[],
): AnalyzerGap[] {
  const known = new Set([...byPath.keys(), ...envFiles.map((f) => f.path)]);
  const missing = new Map<string, { compose: string; services: string[] }>();
  for (const cf of parsed) {
    for (const [name, svc] of Object.entries(cf.services)) {
      if (!isRecord(svc)) continue;
      const list = typeof svc.env_file === 'string' ? [svc.env_file] : asArray(svc.env_file);
      for (const entry of list) {
        if (isRecord(entry) && (entry.required === false || entry.required === 'false')) continue;
        const written = isRecord(entry) ? asString(entry.path) : asString(entry);
        if (!written || written.includes('$')) continue;
        const path = joinPath(dirname(cf.file.path), written);
        if (path === null || known.has(path)) continue;
        const m = missing.get(path) ?? { compose: cf.file.path, services: [] };
        m.services.push(name);
        missing.set(path, m);
      }
    }
  }
  return [...missing].map(([path, m]) => {
    const template = envTemplateOf(path, byPath)?.path;
    return {
      path: m.compose,
      reason: 'compose_env_file_missing',
      message: `env_file ${path} of ${m.services.sort().join(', ')} is not among the repository's files read${template ? ` (the template ${template} is: only the services its values name were taken, as documented values, weaker)` : ''}: the settings it gives are unknown`,
    };
  });
}

/** Service names, `hostname`, `container_name` and network aliases -> service (serviceHostNames). */
function composeResolver(files: ComposeFile[], vars: Map<string, string>): HostResolver {
  const names = serviceHostNames(files.map((f) => ({ services: f.services, vars })));
  return (host) => {
    const service = names.get(host);
    if (service) return { key: entityKey('service', service), name: service };
    // A single-label name resolves only through Docker's DNS: a container these files do not
    // declare (another compose project, a shared network), never an Internet host.
    return host.includes('.') || host.includes(':')
      ? null
      : { key: entityKey('service', host), name: host, via: 'unresolved-short-name' };
  };
}

/** One service of a compose file. */
interface ComposeService {
  cf: ComposeFile;
  name: string;
  svc: Record<string, unknown>;
}

interface ProjectContext {
  /** Hosts resolved against the services of every compose file of the project. */
  resolver: HostResolver;
  /** Variables of the project's `.env` file. */
  vars: Map<string, string>;
  /** Without a `.env`: the committed template beside the compose file (mount paths only). */
  template: EnvTemplateVars | null;
  /** Without a `.env`: the project's env template, for environment values (compose-env-template.ts). */
  documented: ProjectEnvTemplate | null;
  /** Service names of every compose file of the project. */
  serviceNames: Set<string>;
  /** Services of the project running a datastore or broker image, with its engine (compose-store-names.ts). */
  stores: ReadonlyMap<string, string>;
  /** Those services by engine. */
  byEngine: ReadonlyMap<string, string[]>;
  /** Files of the repository by path, for `env_file`. */
  files: Map<string, SourceFile>;
  /** What an image this service only pulls runs, from the folder that builds it. */
  built: BuiltEngine;
  /** Per unknown image the project's services pull, the engine one of them declares it runs. */
  peers: ReadonlyMap<string, PeerClass>;
  /** Per env file path, the programs of the containers given it (compose-env-sharing.ts). */
  sharers: ReadonlyMap<string, ReadonlySet<string>>;
}

const EMPTY_NAMES: ReadonlySet<string> = new Set();
const NAMES_OF = new WeakMap<object, ReadonlySet<string>>();
/** A compose file's service names, lower-cased, computed once per file. */
function serviceNamesOf(services: Record<string, unknown>): ReadonlySet<string> {
  let names = NAMES_OF.get(services);
  if (!names) {
    names = new Set(Object.keys(services).map((s) => s.toLowerCase()));
    NAMES_OF.set(services, names);
  }
  return names;
}

/** A compose `entrypoint`/`command` as its words (`orders`, `["./orders", "-v"]`), or null. */
function commandWords(v: unknown): string[] | null {
  if (typeof v === 'string') return v.trim() === '' ? null : v.trim().split(/\s+/);
  if (Array.isArray(v) && v.length > 0) return v.map((w) => String(w));
  return null;
}

function serviceEvidence(service: ComposeService, project: ProjectContext): Evidence[] {
  const { cf, name, svc } = service;
  const subject = entityKey('service', name);
  // A value inherited through `extends` is cited where its base writes it.
  const inherits = cf.bases.has(name);
  const where = (...p: PathItem[]): [SourceFile, Span] => {
    const w = inherits ? locate(cf, name, p) : { cf, name, path: p };
    return [w.cf.file, w.cf.doc.span(['services', w.name, ...w.path])];
  };
  const out: Evidence[] = [];
  const emit = (
    path: PathItem[],
    kind: string,
    summary: string,
    attributes: Record<string, unknown>,
    rel: [string, string | null] | null = null,
  ) =>
    out.push(
      cite(...where(...path), {
        kind,
        subject,
        summary,
        attributes,
        ...related(rel),
      }),
    );

  const imageSpec = asString(svc.image);
  // `${VAR}` in the image is interpolated from the project's .env file like Compose does.
  const imageRaw = imageSpec === null ? null : interpolate(imageSpec, project.vars);
  const image = imageRaw ? parseImageRef(imageRaw) : null;
  // Compose interpolates `${POSTGRES_PORT:-5432}:5432` from the project's .env before reading it.
  const ports = asArray(svc.ports).map((p) =>
    parsePort(typeof p === 'string' ? interpolate(p, project.vars) : p),
  );
  const deploy = isRecord(svc.deploy) ? svc.deploy : {};
  const limits = resourceLimits(svc, deploy);
  const build = buildContext(cf.file.path, svc.build, project.vars);
  emit([], 'service-declared', `compose service ${name} is declared`, {
    image: image
      ? { raw: image.raw, repo: image.repo, tag: image.tag, digest: image.digest }
      : null,
    // Top-level copies of the fields the reconciler matches and compares on.
    image_tag: image?.tag ?? null,
    build,
    build_context: build?.context_dir ?? null,
    ports: ports.filter((p) => p !== null),
    // The one port the container listens on, when the mappings name exactly one.
    container_port: singlePort(ports.map((p) => p?.target.split('-')[0] ?? null)),
    replicas:
      typeof deploy.replicas === 'number'
        ? deploy.replicas
        : typeof svc.scale === 'number'
          ? svc.scale
          : null,
    privileged: svc.privileged === true,
    read_only: svc.read_only === true,
    cap_add: asArray(svc.cap_add).map(String),
    resource_limits: limits,
    resource_limits_set: limits !== null,
    healthcheck: hasHealthcheck(svc.healthcheck),
    restart: asString(svc.restart),
    network_mode: asString(svc.network_mode),
    // The name other containers reach it by besides its service name (a Helm copy may use it).
    hostname: asString(svc.hostname),
    user: asString(svc.user),
    // The project variables its login variables take (names only): a store and its users share them.
    credential_variables: credentialVariables(environment(svc.environment)),
    env_files: asArray(typeof svc.env_file === 'string' ? [svc.env_file] : svc.env_file).map((e) =>
      isRecord(e) ? String(e.path) : String(e),
    ),
    // Started only with one of these profiles enabled (`--profile`); still part of the system.
    profiles: asArray(svc.profiles).map(String),
    // What the container runs: one image built once may run a different program per service.
    entrypoint: commandWords(svc.entrypoint),
    command: commandWords(svc.command),
    // The folder it starts in: under a bind mount of the repository, the code it runs.
    working_dir: asString(svc.working_dir),
    ...(inherits
      ? {
          extends: (cf.bases.get(name) ?? []).map((b) => b.name),
          // The files its bases are written in: read with this file's project, whatever their name.
          extends_files: [...new Set((cf.bases.get(name) ?? []).map((b) => b.cf.file.path))],
        }
      : {}),
    ...(cf.included_by !== undefined ? { included_by: cf.included_by } : {}),
  });

  if (image) {
    // An image this repository builds (a tag of its own) is named by the service when the
    // service is named after a well-known engine (`kafka` built from the project's Dockerfile).
    // An image of no well-known engine that the repository does not build (`acme/user-db`) is
    // typed by what the service's own declaration says it runs (classifyDeclared).
    // With no clue of its own, another service of the project running the very same image may
    // tell it (compose-image-peers.ts: one image, one engine).
    const declared =
      svc.build === undefined
        ? (classifyDeclared(composeFacts(svc, project.vars)) ??
          project.peers.get(image.raw) ??
          null)
        : null;
    // An image the repository builds elsewhere (a dev compose file, Skaffold) is what its
    // Dockerfile is built FROM (`acme/user-db` from `user-db/Dockerfile`, FROM mongo).
    const fromBuild =
      svc.build === undefined ? project.built(image, name, dirname(cf.file.path)) : null;
    const cls =
      classifyImage(image) ??
      (svc.build !== undefined ? classifyImage(parseImageRef(name)) : null) ??
      fromBuild ??
      declared;
    const clue = cls === declared ? declared?.clue : cls === fromBuild ? fromBuild?.clue : null;
    emit(
      ['image'],
      'image-reference',
      `compose service ${name} runs image ${image.raw}`,
      imageAttributes(image),
      ['uses_image', imageKey(image)],
    );
    if (cls)
      out.push(
        cite(...where(), storeDeclared(cls, clue, image, subject, `compose service ${name}`, name)),
      );
  }

  for (const [written, path, attrs] of dependencies(svc)) {
    // `depends_on: [${DB_HOST:-postgresql}]`: Compose interpolates the name like any value.
    const dep = interpolate(written, project.vars);
    emit(path, 'depends-on', `compose service ${name} depends on ${dep}`, attrs, [
      'depends_on',
      entityKey('service', dep),
    ]);
    // A legacy `links:` entry exists to let the container reach the linked one by name (a
    // network path it opens, unlike `depends_on`'s start order): a connection, weakly held.
    if (attrs.form === 'links')
      emit(path, 'link-reference', `compose service ${name} links to ${dep} to reach it`, attrs, [
        'connects_to',
        entityKey('service', dep),
      ]);
  }

  ports.forEach((p, i) => {
    if (!p) return;
    const where = p.public ? 'publicly' : 'on loopback';
    emit(
      ['ports', i],
      'port-exposed',
      `compose service ${name} publishes ${p.mapping} ${where}`,
      p,
    );
  });
  asArray(svc.expose).forEach((p, i) => {
    emit(
      ['expose', i],
      'port-exposed',
      `compose service ${name} exposes port ${String(p)} to other services`,
      {
        mapping: String(p),
        target: String(p),
        published: null,
        public: false,
        internal: true,
      },
    );
  });

  // Mounts, with what reconcile needs to give a mounted settings file to this container.
  const program =
    image?.repo ?? (typeof build?.context_dir === 'string' ? `build:${build.context_dir}` : null);
  const top = isRecord(cf.doc.value) ? cf.doc.value : {};
  const mounts = mountRecords(
    cf.file.path,
    name,
    svc,
    top,
    project.vars,
    program,
    project.template,
  );
  const mounted = mounts
    .map((m) => m.attributes.host_path)
    .filter((p): p is string => typeof p === 'string');
  for (const m of mounts)
    emit(
      m.path,
      'volume-mount',
      m.summary,
      m.attributes,
      m.volume ? ['mounts', entityKey('volume', m.volume)] : null,
    );

  const ownEngine = image ? classifyImage(image)?.engine : undefined;
  // The services it waits for (`depends_on`, interpolated): a port variable naming one is its use.
  const awaited = new Set(dependencies(svc).map(([d]) => interpolate(d, project.vars)));
  const chosen = chosenEngine(environment(svc.environment), project.vars);
  // Only a service that chooses an engine needs its file's service names (linear in the file).
  const own = chosen === null ? EMPTY_NAMES : serviceNamesOf(cf.services);
  for (const env of environment(svc.environment)) {
    for (const r of environmentFindings(env, project, name, awaited)) {
      // A database image's own server setting (`MARIADB_HOST: paperless`) is no call it makes.
      if (r.kind === 'env-reference' && ownEngine && isServerSetting(ownEngine, env.name)) continue;
      // `POSTGRES_SERVER` beside `DB_ENGINE: sqlite` (engine-choice.ts).
      if (excludedByEngineChoice(chosen, env.name, r.attributes.host, own)) continue;
      out.push(
        cite(...where('environment', env.key), {
          kind: r.kind,
          subject,
          summary: `compose service ${name} ${r.summary}`,
          attributes: r.attributes,
          relationship: r.relationship,
          object: r.object,
        }),
      );
    }
  }
  // Addresses the container is started with (`--rpc-host=taskbroker:50051`).
  for (const a of commandAddresses(svc.command, project.resolver)) {
    if (a.key === subject) continue;
    emit(
      ['command'],
      'command-reference',
      `compose service ${name} is started with ${a.option}=${a.value} -> service ${a.name}`,
      { option: a.option, host: a.host, port: a.port, source: 'command' },
      ['connects_to', a.key],
    );
  }
  out.push(...envFileEvidence(service, project, ownEngine, image, mounted));
  return out;
}

/**
 * `env_file:` (a path, a list of paths or of `{path, required}`), relative to the compose file:
 * its variables reach the container like `environment:` ones, which win over them. The service
 * receives every variable of the file whether its code reads it or not (`received: 'bulk'`).
 */
function envFileEvidence(
  service: ComposeService,
  project: ProjectContext,
  ownEngine?: string,
  image: ImageRef | null = null,
  mounted: string[] = [],
): Evidence[] {
  const { cf, name, svc } = service;
  const program = programOf(image, buildContext(cf.file.path, svc.build, project.vars));
  let config: string | null = null;
  const mountedConfig = () => (config ??= mountedConfigText(mounted, project.files));
  const out: Evidence[] = [];
  const set = new Set(environment(svc.environment).map((e) => e.name));
  const list = typeof svc.env_file === 'string' ? [svc.env_file] : asArray(svc.env_file);
  list.forEach((entry, i) => {
    const written = isRecord(entry) ? asString(entry.path) : asString(entry);
    if (!written) return;
    const path = joinPath(dirname(cf.file.path), interpolate(written, project.vars));
    if (path === null) return;
    // Absent (`.env`, made by the user): its committed template documents the values.
    const template = project.files.has(path) ? undefined : envTemplateOf(path, project.files);
    const file = project.files.get(path) ?? template;
    if (!file) return;
    const span = cf.doc.span(
      typeof svc.env_file === 'string'
        ? ['services', name, 'env_file']
        : ['services', name, 'env_file', i],
    );
    const values = parseDotenv(file.text);
    // A third-party image given the application's env file: the framework's variables are not its.
    const foreign = foreignFrameworkVariables({
      pulled: svc.build === undefined,
      program,
      sharers: project.sharers.get(path) ?? new Set(),
      variables: [...values.keys()],
      config: mountedConfig,
    });
    for (const [variable, value] of values) {
      if (
        set.has(variable) ||
        storeIgnores(ownEngine, image, svc.build !== undefined, variable) ||
        foreign(variable)
      )
        continue;
      for (const r of envReferences(variable, value, project.resolver, 'env_file')) {
        if (r.kind !== 'env-reference') continue;
        // A template's other values are examples (a sample DSN, example.com): only a value naming
        // one of the project's own services is its documented wiring.
        if (
          template &&
          (typeof r.attributes.host !== 'string' || r.attributes.resolution === 'external')
        )
          continue;
        out.push(
          cite(cf.file, span, {
            kind: r.kind,
            subject: entityKey('service', name),
            summary: `compose service ${name} ${r.summary} (via env_file ${template ? `${path}, absent: the value its template ${file.path} documents` : file.path})`,
            attributes: {
              ...r.attributes,
              env_file: path,
              received: 'bulk',
              ...(template ? { documented_by: file.path } : {}),
            },
            relationship: r.relationship,
            object: r.object,
          }),
        );
      }
    }
  });
  return out;
}

/**
 * Findings for one environment entry. Secrets are judged on the value as written (a `${VAR}` is
 * no literal); hosts on the value Compose would pass: interpolated from the project's .env file,
 * and for `- VAR` without a value, the .env file's VAR. A variable whose value stays unknown but
 * whose name names a service of the project (`KAFKA_SERVICE_ADDR` -> `kafka`) still points at it;
 * one whose name names an engine (`ELASTICSEARCH_HOST`) at the project's one store of that engine.
 * A port variable naming a service the container depends on (`awaited`) is a call to it.
 */
function environmentFindings(
  env: EnvVar,
  project: ProjectContext,
  self: string,
  awaited: Set<string>,
): EnvFinding[] {
  const { resolver } = project;
  const written = envReferences(env.name, env.value, resolver);
  const raw = asString(env.value);
  const passed = raw === null && env.value === null ? (project.vars.get(env.name) ?? null) : null;
  const resolved = raw !== null ? interpolate(raw, project.vars) : passed;
  let out = written;
  if (resolved !== null && resolved !== raw) {
    const from = raw === null ? 'dotenv-passthrough' : 'dotenv-interpolation';
    out = [
      ...written.filter((f) => f.kind !== 'env-reference'),
      ...envReferences(env.name, resolved, resolver)
        .filter((f) => f.kind === 'env-reference')
        .map((f) => ({ ...f, attributes: { ...f.attributes, interpolated: from } })),
    ];
  }
  if (out.some((f) => f.kind === 'env-reference')) return out;
  const store =
    resolved === null ? null : storeNameReference(env.name, resolved, raw, project.stores);
  if (store) return [...out, store];
  // A port variable of a service it waits for, whatever its value (a port alone names no host).
  const port = dependedPortReference(env.name, self, awaited, project.serviceNames);
  if (port) return [...out, port];
  if (resolved !== null && !resolved.includes('$')) return out;
  // No `.env`: the value the project's env template documents.
  const documented =
    resolved !== null && project.documented
      ? documentedReferences(env.name, resolved, project.documented, resolver)
      : null;
  if (documented) return [...out, ...documented];
  const named = serviceNamedBy(env.name, project.serviceNames);
  if (!named) {
    // The prefix names an engine (`ELASTICSEARCH_HOST`): the project's one store of it.
    const engine = engineNamedReference(env.name, self, project.byEngine);
    return engine ? [...out, engine] : out;
  }
  return [
    ...out,
    {
      kind: 'env-reference',
      relationship: 'connects_to',
      object: entityKey('service', named),
      summary: `reads ${env.name} (value not in the repository) -> service ${named} named by the variable`,
      attributes: { variable: env.name, source: 'environment', resolution: 'variable-name' },
    },
  ];
}

const ADDRESS_SUFFIX = /_(ADDR|ADDRESS|URL|URI|HOST|HOSTNAME|ENDPOINT)$/;

/** `KAFKA_SERVICE_ADDR`, `GRAFANA_SERVICE_HOST`, `USER_DB_URL` -> the service the prefix names. */
function serviceNamedBy(variable: string, services: Set<string>): string | null {
  if (!ADDRESS_SUFFIX.test(variable)) return null;
  return servicePrefixed(variable.replace(ADDRESS_SUFFIX, ''), services);
}

const PORT_SUFFIX = /_PORT$/;

/**
 * A port variable naming a service the container waits for (docs/decisions.md, "The port of a
 * service a container waits for"): `APP_SERVER_PORT` given to a service that
 * `depends_on: app-server`. The container is told the port of the service it waits for:
 * it calls it there (the host being the service's name or an image default). A port variable
 * naming a service it does not wait for (an environment block shared by every container) says
 * nothing.
 */
function dependedPortReference(
  variable: string,
  self: string,
  awaited: Set<string>,
  services: Set<string>,
): EnvFinding | null {
  if (awaited.size === 0 || !PORT_SUFFIX.test(variable)) return null;
  const named = servicePrefixed(variable.replace(PORT_SUFFIX, ''), services);
  if (!named || named === self || !awaited.has(named)) return null;
  return {
    kind: 'env-reference',
    relationship: 'connects_to',
    object: entityKey('service', named),
    summary: `is given ${variable}, the port of service ${named} it depends on -> service ${named}`,
    attributes: { variable, source: 'environment', resolution: 'depended-port-variable' },
  };
}

/** The service a variable's prefix names (`KAFKA_SERVICE` -> `kafka`, `APP_SERVER` -> `app-server`). */
function servicePrefixed(prefix: string, services: Set<string>): string | null {
  const candidates = [prefix, prefix.replace(/_SERVICE$/, '')];
  for (const c of candidates) {
    const lower = c.toLowerCase();
    for (const name of [lower.replace(/_/g, '-'), lower, lower.replace(/_/g, '')]) {
      if (services.has(name)) return name;
    }
  }
  return null;
}
