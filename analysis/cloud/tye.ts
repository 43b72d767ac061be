/**
 * Microsoft Tye's `tye.yaml` (docs/decisions.md, "issue 23, session 13: tye.yaml"): what `tye run`
 * starts, read like compose services. Each service is a deployable named by its tye name: a
 * `project` (a .csproj) is built from the project's folder, a `dockerFile` from its
 * `dockerFileContext` (else the Dockerfile's folder), an `image` is pulled (a datastore image is
 * a store, as in compose). `env` (`KEY=VALUE` strings or `name`/`value` records) is read like
 * compose `environment`. Tye runs projects on the host and publishes every binding's `port` on
 * it, so `http://localhost:5002` (or `host.docker.internal`, from a container) reaches the
 * service binding port 5002. Never throws; a file that does not parse is a gap.
 */
import { entityKey, type AnalyzerOutput, type Evidence, type SourceFile } from '../evidence';
import { evidence as cite, related } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { basename, dirname, joinPath } from '../shared/paths';
import { asArray, asString, isRecord } from '../shared/values';
import { parseYamlDocuments, type PathItem, type YamlDoc } from '../shared/yaml';
import { classifyImage, isServerSetting, redact, singlePort, storeDeclared } from './common';
import { isSecretName } from '../shared/secrets';
import { envReferences, type HostResolver } from './env';

export const PROVIDER = 'tye';
const TYE = /^tye([.-][\w-]+)?\.ya?ml$/i;
/** Hosts at which a service `tye run` starts is reached on its binding's port. */
const HOST_ADDRESSES = new Set(['localhost', '127.0.0.1', 'host.docker.internal', '0.0.0.0']);

/** Ports of the host addresses a value names (`http://localhost:5002`, `host.docker.internal:5003`). */
function hostAddressPorts(value: string): string[] {
  const out = new Set<string>();
  for (const m of value.matchAll(
    /(?:^|[\s/@=,;])(?:localhost|127\.0\.0\.1|host\.docker\.internal|0\.0\.0\.0):(\d{1,5})\b/gi,
  ))
    out.add(m[1]!);
  return [...out];
}

/** `tye.yaml`, `tye.dev.yaml`: Tye's application description. */
export function isTye(path: string): boolean {
  return TYE.test(basename(path));
}

interface TyeService {
  name: string;
  index: number;
  svc: Record<string, unknown>;
  ports: string[];
}

/** One `env` entry: `KEY=VALUE`, or `{ name, value }`. */
function envEntries(env: unknown): Array<{ name: string; value: string | null; index: number }> {
  const out: Array<{ name: string; value: string | null; index: number }> = [];
  asArray(env).forEach((entry, index) => {
    if (isRecord(entry)) {
      const name = asString(entry.name);
      const v = entry.value;
      if (name) out.push({ name, value: v === undefined || v === null ? null : String(v), index });
      return;
    }
    const s = asString(entry);
    if (!s) return;
    const eq = s.indexOf('=');
    const name = (eq < 0 ? s : s.slice(0, eq)).trim();
    let value = eq < 0 ? null : s.slice(eq + 1).trim();
    if (value && value.length > 1 && /^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    if (/^[A-Za-z_][\w.:-]*$/.test(name)) out.push({ name, value, index });
  });
  return out;
}

/** The services of one tye document; entries without a name are skipped. */
function services(value: Record<string, unknown>): TyeService[] {
  const out: TyeService[] = [];
  asArray(value.services).forEach((svc, index) => {
    if (!isRecord(svc)) return;
    const name = asString(svc.name)?.trim().toLowerCase();
    if (!name || !/^[a-z0-9][a-z0-9._-]*$/.test(name)) return;
    const ports = asArray(svc.bindings)
      .filter(isRecord)
      .map((b) => (b.port === undefined || b.port === null ? null : String(b.port)))
      .filter((p): p is string => p !== null && /^\d+$/.test(p));
    out.push({ name, index, svc, ports });
  });
  return out;
}

/**
 * Tye's names resolve to their services; a host address (`localhost`, `host.docker.internal`)
 * resolves by port to the one service binding it. Other single-label names are unresolved, as
 * in compose.
 */
function resolverOf(list: TyeService[]): (host: string, port: string | null) => string | null {
  const names = new Set(list.map((s) => s.name));
  return (host, port) => {
    const h = host.toLowerCase();
    if (names.has(h)) return h;
    if (HOST_ADDRESSES.has(h) && port) {
      const bound = list.filter((s) => s.ports.includes(port));
      if (bound.length === 1) return bound[0]!.name;
    }
    return null;
  };
}

/** Reads every tye file: services, images, bindings and environment. */
export function analyzeTye(files: SourceFile[]): AnalyzerOutput {
  const evidence: Evidence[] = [];
  const gaps: AnalyzerOutput['gaps'] = [];
  for (const file of files) {
    const y = parseYamlDocuments(file);
    for (const message of y.errors)
      gaps.push({ path: file.path, reason: 'yaml_parse_error', message });
    for (const doc of y.docs) {
      if (!isRecord(doc.value) || !Array.isArray(doc.value.services)) continue;
      const list = services(doc.value);
      const resolve = resolverOf(list);
      for (const s of list) evidence.push(...serviceEvidence(file, doc, s, resolve));
    }
  }
  return { evidence, gaps };
}

function serviceEvidence(
  file: SourceFile,
  doc: YamlDoc,
  s: TyeService,
  resolve: (host: string, port: string | null) => string | null,
): Evidence[] {
  const { name, svc } = s;
  const subject = entityKey('service', name);
  const out: Evidence[] = [];
  const at = (...p: PathItem[]) => doc.span(['services', s.index, ...p]);
  const emit = (
    path: PathItem[],
    kind: string,
    summary: string,
    attributes: Record<string, unknown>,
    rel: [string, string | null] | null = null,
    subj = subject,
  ) =>
    out.push(
      cite(file, at(...path), {
        source: 'cloud',
        provider: PROVIDER,
        kind,
        subject: subj,
        summary,
        attributes,
        ...related(rel),
      }),
    );
  const base = dirname(file.path);
  const project = asString(svc.project);
  const dockerFile = asString(svc.dockerFile);
  const projectPath = project ? joinPath(base, project) : null;
  const dockerPath = dockerFile ? joinPath(base, dockerFile) : null;
  const contextWritten = asString(svc.dockerFileContext);
  // The folder the service is built from: the project's, or the Docker build's context.
  const context = projectPath
    ? dirname(projectPath)
    : dockerPath
      ? contextWritten
        ? joinPath(base, contextWritten)
        : dirname(dockerPath)
      : null;
  const imageSpec = asString(svc.image);
  const image = imageSpec ? parseImageRef(imageSpec) : null;
  const replicas = typeof svc.replicas === 'number' ? svc.replicas : null;
  emit([], 'service-declared', `tye service ${name} is declared`, {
    image: image
      ? { raw: image.raw, repo: image.repo, tag: image.tag, digest: image.digest }
      : null,
    image_tag: image?.tag ?? null,
    project: projectPath,
    build: dockerPath ? { context_dir: context, dockerfile_path: dockerPath } : null,
    build_context: context,
    ports: s.ports,
    container_port: singlePort(
      asArray(svc.bindings)
        .filter(isRecord)
        .map(
          (b) =>
            asString(b.containerPort) ??
            (typeof b.containerPort === 'number' ? String(b.containerPort) : null),
        ),
    ),
    replicas,
    executable: asString(svc.executable),
  });
  if (image) {
    emit(
      ['image'],
      'image-reference',
      `tye service ${name} runs image ${image.raw}`,
      imageAttributes(image),
      ['uses_image', imageKey(image)],
    );
    const cls = classifyImage(image);
    if (cls) {
      const store = storeDeclared(cls, null, image, subject, `tye service ${name}`, name);
      emit([], store.kind, store.summary, store.attributes, null, store.subject);
    }
  }
  s.ports.forEach((port) =>
    emit(['bindings'], 'port-exposed', `tye service ${name} binds port ${port} on the host`, {
      mapping: port,
      target: port,
      published: port,
      public: false,
    }),
  );
  const ownEngine = image ? classifyImage(image)?.engine : undefined;
  const hostResolver: HostResolver = (host) => {
    const n = resolve(host, null);
    return n ? { key: entityKey('service', n), name: n } : null;
  };
  for (const env of envEntries(svc.env)) {
    // A database image's own server setting (`POSTGRES_HOST`) is no call it makes.
    const own = ownEngine !== undefined && isServerSetting(ownEngine, env.name);
    for (const f of envReferences(env.name, env.value, hostResolver)) {
      if (f.object === subject || (own && f.kind === 'env-reference')) continue;
      emit(
        ['env', env.index],
        f.kind,
        `tye service ${name} ${f.summary}`,
        f.attributes,
        f.relationship ? [f.relationship, f.object] : null,
      );
    }
    // The common readers drop host addresses (`localhost:5002`); under tye they name a binding.
    if (own || env.value === null || isSecretName(env.name)) continue;
    for (const port of hostAddressPorts(env.value)) {
      const target = resolve('localhost', port);
      if (!target || target === name) continue;
      emit(
        ['env', env.index],
        'env-reference',
        `tye service ${name} reads ${env.name}=${redact(env.value)} -> service ${target} (its binding port ${port} on the host)`,
        {
          variable: env.name,
          value: redact(env.value),
          source: 'environment',
          port,
          resolution: 'tye-binding-port',
        },
        ['connects_to', entityKey('service', target)],
      );
    }
  }
  return out;
}
