/**
 * containers-non-root on the effective configuration: who a container runs as once everything
 * that decides it is applied, the way the kubelet and the container runtime decide it.
 *
 * - The image's user: the Dockerfile's last `USER` in the final stage's lineage (build stages do
 *   not count); without one, the base image's own default (distroless `nonroot` tags, .NET
 *   `chiseled` images, Chainguard images run as non-root; anything else runs as root).
 * - The runtime's override: Kubernetes `securityContext` (pod and container already merged by the
 *   analyzer, the container winning), `runAsNonRoot: true` or a non-zero `runAsUser`; compose
 *   `user:`. An explicit override wins over the image.
 * - A Dockerfile fails only when some deployment of it (or, with none found, the image alone)
 *   leaves it running as root; a deployment that sets nothing inherits the image's verdict and is
 *   not judged twice. Dockerfiles for tests, code generation and development containers are never
 *   deployed and are out of scope (dockerfileScope); so are those whose content says they run no
 *   service (an artifact carrier FROM scratch, a test runner) when no deployment builds or runs
 *   them (dockerfileContentScope).
 */
import { parseImageRef } from '../shared/images';
import { basename, dirname } from '../shared/paths';
import { uniqueSorted } from '../shared/text';
import { isRecord } from '../shared/values';
import { NO_VARIABLES, expandVariables, isDynamic } from '../shared/variables';
import type { StoredEvidence } from '../reconcile';
import { bool, containers, ofKind, onEvidence, type Check, type Context } from './check';

type User = 'root' | 'non-root' | 'unknown';

const TEST_DIRS = /(^|\/)(tests?|e2e|integration-tests?|cypress|__tests__)(\/|$)/i;
const CODEGEN_DIRS = /(^|\/)(genproto|codegen|generated|protoc?-gen[\w-]*)(\/|$)/i;
const DEV_DIRS = /(^|\/)\.devcontainer(\/|$)/i;
/** `Dockerfile.test`, `test.Dockerfile`, `Dockerfile-e2e`: the variant names its purpose. */
const VARIANT = /^(?:(?:Dockerfile|Containerfile)[.-](.+)|(.+)[.-](?:Dockerfile|Containerfile))$/i;
const TEST_VARIANTS = /^(tests?|e2e|cypress|integration|ci)$/i;
const DEV_VARIANTS = /^(dev|debug|devcontainer|local)$/i;

/**
 * Why a Dockerfile is not a deployed artifact (null: it is): end-to-end and test images, code
 * generation images and development containers build tools, not services.
 */
export function dockerfileScope(path: string): string | null {
  const dir = dirname(path);
  const variant = VARIANT.exec(basename(path));
  const name = (variant?.[1] ?? variant?.[2] ?? '').toLowerCase();
  if (TEST_DIRS.test(dir) || TEST_VARIANTS.test(name)) return 'a test image';
  if (CODEGEN_DIRS.test(dir)) return 'a code-generation image';
  if (DEV_DIRS.test(dir) || DEV_VARIANTS.test(name)) return 'a development or debug image';
  return null;
}

/** A program the final image runs, as tokens: ENTRYPOINT (exec or shell form), else CMD. */
function programTokens(d: StoredEvidence): string[] {
  const written = [d.attributes.entrypoint, d.attributes.cmd].find(
    (v): v is string => typeof v === 'string' && v.trim() !== '',
  );
  if (!written) return [];
  if (written.trim().startsWith('[')) {
    try {
      const list: unknown = JSON.parse(written);
      if (Array.isArray(list)) return list.filter((x): x is string => typeof x === 'string');
    } catch {
      // not JSON: the shell form below
    }
  }
  return written.split(/\s+/).filter(Boolean);
}

/** Launchers in front of the program they start (`npx dredd`, `python -m pytest`, `sh -c`). */
const LAUNCHERS = /^(node|npx|python[\d.]*|-m|-c|sh|bash|exec|bundle|ruby|dotnet)$/;
/** Test runners and API contract checkers: an image whose program is one of them runs tests. */
const TEST_RUNNERS =
  /^(dredd|cypress|newman|pytest|py\.test|jest|mocha|vitest|playwright|robot|behave|cucumber(-js)?|karma|testcafe|codeceptjs|bats|schemathesis|hurl)$/i;
/** Build tools whose `test` subcommand runs a test suite (`npm test`, `go test ./...`). */
const TEST_SUBCOMMAND = /^(npm|yarn|pnpm|go|mvn|mvnw|gradle|gradlew|cargo|make)$/;
/** Packages and archives: a file no container can execute (a scratch image holding one runs nothing). */
const PACKAGE_FILE = /\.(apk|aab|ipa|zip|tar|tgz|gz|whl|deb|rpm|msi|nupkg|vsix|jar|war)$/i;

/**
 * Why a Dockerfile's own content says it builds no service (null: it may): an image `FROM
 * scratch` whose program is none or a package file (an artifact carrier, exported with `docker
 * build --output`), or an image whose program is a test runner. Only for Dockerfiles no
 * deployment builds or runs (dockerfileNotDeployed).
 */
export function dockerfileContentScope(d: StoredEvidence): string | null {
  const tokens = programTokens(d);
  const program = tokens.map((t) => basename(t));
  if (
    d.attributes.base_image === 'scratch' &&
    (tokens.length === 0 || PACKAGE_FILE.test(tokens[0]!))
  )
    return 'an artifact carrier: FROM scratch, it holds build outputs and runs no program';
  const i = program.findIndex((t) => !LAUNCHERS.test(t));
  const first = i >= 0 ? program[i]! : '';
  if (TEST_RUNNERS.test(first)) return `a test runner image (it runs ${first})`;
  const sub = program.slice(i + 1).find((t) => t !== 'run' && !t.startsWith('-'));
  if (TEST_SUBCOMMAND.test(first) && sub === 'test')
    return `a test runner image (it runs ${first} test)`;
  return null;
}

/**
 * Whether a deployment in the repository builds or runs the Dockerfile: a compose service of a
 * deployed (not test) compose file builds it, or the graph placed it on an entity that a compose
 * service, a Kubernetes workload or an Aspire resource runs.
 */
function deployedDockerfile(ctx: Context, d: StoredEvidence): boolean {
  for (const e of ofKind(ctx, 'service-declared')) {
    if (e.provider !== 'docker-compose' || composeScope(e.location.path) !== null) continue;
    const b = e.attributes.build;
    if (!isRecord(b) || typeof b.context_dir !== 'string') continue;
    const file = typeof b.dockerfile === 'string' ? b.dockerfile : 'Dockerfile';
    if ((b.context_dir ? `${b.context_dir}/${file}` : file) === d.location.path) return true;
  }
  const key = ctx.entityOf.get(d.id);
  const entity = key ? ctx.entities.find((x) => x.canonical_key === key) : undefined;
  return (entity?.evidence_ids ?? []).some((id) => {
    const x = ctx.byId.get(id);
    if (!x) return false;
    if (x.evidence_kind === 'workload-declared') return true;
    return x.evidence_kind === 'service-declared' && composeScope(x.location.path) === null;
  });
}

/** Why a Dockerfile is out of containers-non-root's scope (its path, or its content when nothing deploys it). */
function scopeOf(ctx: Context, d: StoredEvidence | undefined, path: string): string | null {
  const byPath = dockerfileScope(path);
  if (byPath || !d) return byPath;
  const byContent = dockerfileContentScope(d);
  return byContent && !deployedDockerfile(ctx, d)
    ? `${byContent}, and no deployment runs it`
    : null;
}

/** `docker-compose.test.yml`, `compose.tests.yaml`, `docker-compose-e2e.yml`: the variant names its purpose. */
const COMPOSE_VARIANT = /^(?:docker-)?compose[.-](.+)\.ya?ml$/i;

/**
 * Why a compose file is not a deployment (null: it is): a test file (the variant or the folder
 * says so) starts throwaway containers for a test run, never a service anyone deploys.
 */
export function composeScope(path: string): string | null {
  const name = (COMPOSE_VARIANT.exec(basename(path))?.[1] ?? '').toLowerCase();
  if (TEST_DIRS.test(dirname(path)) || TEST_VARIANTS.test(name)) return 'a test compose file';
  return null;
}

/** A user as written (`root`, `0`, `1000:1000`, `${UID:-1000}`): root, non-root or unknown. */
export function userOf(written: string): User {
  const v = expandVariables(written.trim(), NO_VARIABLES);
  if (v === '' || isDynamic(v)) return 'unknown';
  const name = v.split(':')[0] ?? '';
  return name === 'root' || name === '0' ? 'root' : 'non-root';
}

/**
 * Published images whose own Dockerfile ends with a non-root USER (their documentation says so):
 * Grafana (472), Prometheus and its exporters (nobody), k6 (k6), NGINX's unprivileged build
 * (101), Bitnami images (1001). Repository paths without registry, as parseImageRef gives them.
 */
const NON_ROOT_IMAGES =
  /^(grafana\/grafana(-oss|-enterprise)?|grafana\/k6|prom\/(prometheus|alertmanager|node-exporter|pushgateway)|nginxinc\/nginx-unprivileged|bitnami\/[\w.-]+)$/;

/** Base images whose default user is not root (so a Dockerfile without USER is not root). */
export function imageDefaultUser(image: string): User {
  const ref = parseImageRef(image);
  if (!ref || ref.unresolved) return 'unknown';
  const tag = ref.tag ?? '';
  if (/(^|\/)distroless\//.test(ref.repo) && /(^|-)nonroot$/.test(tag)) return 'non-root';
  if (/^mcr\.microsoft\.com\/dotnet\//.test(ref.repo) && /chiseled/.test(tag)) return 'non-root';
  if (/^cgr\.dev\/chainguard\//.test(ref.repo) && !/-dev$|^dev$/.test(tag)) return 'non-root';
  if (NON_ROOT_IMAGES.test(ref.repo)) return 'non-root';
  return 'root';
}

/** How a Kubernetes container's or compose service's runtime settings decide its user. */
function runtimeUser(e: StoredEvidence, c: Record<string, unknown>): User | null {
  if (e.evidence_kind === 'service-declared')
    return typeof c.user === 'string' && c.user !== '' ? userOf(c.user) : null;
  const nonRoot = bool(c.run_as_non_root);
  const uid = typeof c.run_as_user === 'number' ? c.run_as_user : null;
  if (uid === 0) return 'root';
  if (nonRoot === true || (uid !== null && uid > 0)) return 'non-root';
  if (nonRoot === false) return 'root';
  return null;
}

interface Image {
  e: StoredEvidence;
  user: User;
  why: string;
  entity: string | null;
  service: string;
}

/** The user each deployed Dockerfile's image runs as, by Dockerfile path. */
function images(ctx: Context): Map<string, Image> {
  const declared = new Map(ofKind(ctx, 'dockerfile-declared').map((e) => [e.location.path, e]));
  const out = new Map<string, Image>();
  for (const e of ofKind(ctx, 'runs-as-root', 'user-declared')) {
    if (e.provider !== 'dockerfile') continue;
    if (scopeOf(ctx, declared.get(e.location.path), e.location.path) !== null) continue;
    const written = typeof e.attributes.user === 'string' ? e.attributes.user : null;
    const base = declared.get(e.location.path)?.attributes.base_image;
    let user: User;
    let why: string;
    if (written !== null) {
      user = userOf(written);
      why = `USER ${written}`;
    } else if (typeof base === 'string' && imageDefaultUser(base) === 'non-root') {
      user = 'non-root';
      why = `no USER, and its base image ${base} runs as non-root`;
    } else {
      user = 'root';
      why = 'no USER instruction';
    }
    out.set(e.location.path, {
      e,
      user,
      why,
      entity: ctx.entityOf.get(e.id) ?? null,
      service: e.subject_key.slice(e.subject_key.indexOf(':') + 1),
    });
  }
  return out;
}

/** The Dockerfile a runtime container runs: compose `build:`, else the same entity's image. */
function imageOf(
  all: Map<string, Image>,
  ctx: Context,
  e: StoredEvidence,
  c: Record<string, unknown>,
  siblings: number,
): Image | null {
  const build = c.build;
  if (e.evidence_kind === 'service-declared' && build && typeof build === 'object') {
    const b = build as Record<string, unknown>;
    if (typeof b.context_dir === 'string') {
      const file = typeof b.dockerfile === 'string' ? b.dockerfile : 'Dockerfile';
      const found = all.get(b.context_dir ? `${b.context_dir}/${file}` : file);
      if (found) return found;
    }
  }
  // A deployment the graph did not place (a variant that is not the primary one) runs the image
  // the graph placed on the service it declares (the key the Dockerfile's evidence carries too).
  const entity = ctx.entityOf.get(e.id);
  const repo = typeof c.repo === 'string' ? c.repo : '';
  for (const img of all.values()) {
    const same = entity
      ? img.entity === entity
      : img.entity !== null && img.e.subject_key === e.subject_key;
    if (!same) continue;
    // In a pod of several containers only the one running this service's image is its image.
    if (siblings <= 1 || basename(repo).includes(img.service)) return img;
  }
  return null;
}

/** containers-non-root checks on the effective user of every deployed image and container. */
export function containersNonRoot(ctx: Context): Check[] {
  const out: Check[] = [];
  const all = images(ctx);
  const deployments = new Map<string, Array<{ user: User | null; label: string; id: string }>>();
  const list = containers(ctx);
  const siblings = new Map<string, number>();
  for (const { e } of list) siblings.set(e.id, (siblings.get(e.id) ?? 0) + 1);
  for (const { e, c, name, label } of list) {
    if (dockerfileScope(e.location.path) !== null) continue;
    const user = runtimeUser(e, c);
    const img = imageOf(all, ctx, e, c, siblings.get(e.id) ?? 1);
    if (img) {
      const mine = deployments.get(img.e.location.path) ?? [];
      mine.push({ user, label, id: e.id });
      deployments.set(img.e.location.path, mine);
    }
    // A container that sets nothing runs as its image's user: the image's check judges it.
    if (user === null && img) continue;
    const written = isRecord(c.image) ? c.image.raw : c.image;
    const imageDefault =
      user === null && typeof written === 'string' ? imageDefaultUser(written) : null;
    // A compose service that sets no user and runs an image built elsewhere is judged by that
    // image's own Dockerfile, which is not here: nothing to say (as for any third-party image).
    if (user === null && e.evidence_kind === 'service-declared' && imageDefault !== 'non-root')
      continue;
    const verdict =
      user === 'root'
        ? 'fail'
        : user === 'non-root' || imageDefault === 'non-root'
          ? 'pass'
          : 'unknown';
    out.push(
      onEvidence(ctx, e, {
        requirement: 'runtime-non-root',
        verdict,
        title:
          verdict === 'fail'
            ? e.evidence_kind === 'service-declared'
              ? `${label} runs as user ${String(c.user)}`
              : `${label} may run as root (runAsNonRoot false or runAsUser 0)`
            : verdict === 'pass'
              ? `${label} runs as non-root${user === null ? ` (image ${String(written)})` : ''}`
              : `${label} does not set ${e.evidence_kind === 'service-declared' ? 'user' : 'runAsNonRoot or runAsUser'} and its image's user is unknown`,
        facts: {
          user: c.user ?? null,
          run_as_non_root: bool(c.run_as_non_root),
          run_as_user: typeof c.run_as_user === 'number' ? c.run_as_user : null,
          image_default: imageDefault,
        },
        discriminator: name,
      }),
    );
  }
  for (const img of [...all.values()]) {
    const runs = deployments.get(img.e.location.path) ?? [];
    const asRoot = runs.filter(
      (r) => r.user === 'root' || (r.user === null && img.user === 'root'),
    );
    const overridden = img.user === 'root' && runs.length > 0 && runs.every((r) => r.user !== null);
    const verdict =
      img.user === 'unknown' && runs.every((r) => r.user === null)
        ? 'unknown'
        : (img.user === 'root' && runs.length === 0) || asRoot.some((r) => r.user === null)
          ? 'fail'
          : 'pass';
    out.push(
      onEvidence(ctx, img.e, {
        requirement: 'dockerfile-non-root-user',
        verdict,
        title:
          verdict === 'fail'
            ? `${img.e.location.path} runs as root (${img.why})${runs.length ? `, and ${uniqueSorted(asRoot.filter((r) => r.user === null).map((r) => r.label)).join(', ')} does not override it` : ''}`
            : overridden
              ? `${img.e.location.path} has ${img.why}, but every deployment of it sets its own user`
              : verdict === 'unknown'
                ? `${img.e.location.path} runs as a user set at build time (${img.why})`
                : `${img.e.location.path} runs as non-root (${img.why})`,
        facts: { image_user: img.user, why: img.why, deployments: runs.map((r) => r.user) },
        discriminator: 'user',
        extra: runs.map((r) => r.id),
      }),
    );
  }
  return out;
}

/** The Dockerfiles left out of containers-non-root, for the assessment's applicability. */
export function outOfScopeDockerfiles(ctx: Context): string[] {
  return uniqueSorted(
    ofKind(ctx, 'dockerfile-declared')
      .map((e) => {
        const why = scopeOf(ctx, e, e.location.path);
        return why ? `${e.location.path} (${why})` : null;
      })
      .filter((x): x is string => x !== null),
  );
}
