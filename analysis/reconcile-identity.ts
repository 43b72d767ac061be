/**
 * Identity resolution: the union-find that merges the names of one deployable (never two
 * deployables a provider declares apart), and each merged set's kind or its absence (a library,
 * a placeholder, an image recipe, a one-shot job, a datastore built FROM an engine image).
 */
import { classifyImage } from './cloud/common';
import { ciBuiltClasses } from './cloud/built-images';
import { isJobName } from './code/classify';
import { keyKind, keyName } from './evidence';
import { DEPLOYMENT_KINDS, KIND_RANK, type StoredEvidence } from './reconcile-model';
import { parseImageRef } from './shared/images';
import { dirname, joinPath, normalizeDir } from './shared/paths';
import { isPlaceholderName } from './shared/placeholders';
import { copiedArchives, isCopiedArchive } from './reconcile-copied-artifacts';
import {
  baseOnlyDockerfiles,
  deploysPrebuiltServices,
  isBaseImage,
  isUnrunImage,
} from './reconcile-unrun-images';
import { unrunDotnetProjects } from './reconcile-unrun-projects';

export class UnionFind {
  private parent = new Map<string, string>();
  /** Per set (by representative): the deployables it holds, by the provider declaring them. */
  private deployed = new Map<string, Map<string, Set<string>>>();
  private declared = new Set<string>();
  /**
   * Keys named only for a Dockerfile's final stage (`deps`, `runner`) or by a registry lookup:
   * the last choice of name.
   */
  private stages = new Set<string>();
  /** Iterative (a chain of merges as long as the input must not overflow the stack). */
  find(x: string): string {
    let root = x;
    for (let p = this.parent.get(root); p !== undefined && p !== root; p = this.parent.get(root))
      root = p;
    for (let cur = x; cur !== root;) {
      const next = this.parent.get(cur)!;
      this.parent.set(cur, root);
      cur = next;
    }
    return root;
  }
  /** Deployables named by a Terraform module call whose template builds another name. */
  private calls = new Set<string>();
  /** `key` is named for the module call stamping it out: any other name of its set wins. */
  moduleCall(key: string): void {
    this.calls.add(key);
  }
  /** `key` is named for a Dockerfile's final stage (`FROM node AS deps`). */
  stage(key: string): void {
    this.stages.add(key);
  }
  /** `key` is a deployable declared by `provider` (docker-compose, kubernetes...). */
  declare(key: string, provider: string): void {
    this.declared.add(key);
    const r = this.find(key);
    const byProvider = this.deployed.get(r) ?? new Map<string, Set<string>>();
    byProvider.set(provider, (byProvider.get(provider) ?? new Set()).add(key));
    this.deployed.set(r, byProvider);
  }
  /**
   * Merges the sets of a and b, unless that would put two deployables declared by the same
   * provider (two compose services, two workloads) into one set: then nothing merges and the
   * deployables of both sides are returned.
   */
  union(a: string, b: string): string[] | null {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return null;
    const da = this.deployed.get(ra);
    const db = this.deployed.get(rb);
    for (const [provider, keys] of da ?? []) {
      const other = db?.get(provider);
      if (other && [...other].some((k) => !keys.has(k)))
        return [...new Set([...keys, ...other])].sort();
    }
    // The representative: most specific kind, then a deployable's own name (a compose service,
    // a workload), then any name but a Dockerfile's final stage (`deps`, `runner`) or a module
    // call's (`cloud_run_orders`, when the template names the service `orders`), then the
    // lexically smaller key (deterministic).
    const rank = (k: string) => KIND_RANK[keyKind(k)] ?? 99;
    const own = (k: string) =>
      this.calls.has(k) ? 3 : this.declared.has(k) ? 0 : this.stages.has(k) ? 2 : 1;
    const [keep, drop] =
      rank(ra) < rank(rb) ||
      (rank(ra) === rank(rb) && (own(ra) < own(rb) || (own(ra) === own(rb) && ra < rb)))
        ? [ra, rb]
        : [rb, ra];
    this.parent.set(drop, keep);
    const merged = new Map<string, Set<string>>();
    for (const m of [da, db])
      for (const [provider, keys] of m ?? [])
        merged.set(provider, new Set([...(merged.get(provider) ?? []), ...keys]));
    this.deployed.delete(drop);
    if (merged.size) this.deployed.set(keep, merged);
    return null;
  }
}

export const RULE_TEXT: Record<string, string> = {
  alias: 'an alias names both',
  build: 'are built from the same unit (same Dockerfile or build context)',
  image: 'run an image named after the same code unit',
};

/** Unit classes that are not an entity unless a deployment declaration builds or runs them. */
const NOT_DEPLOYABLE = new Set(['library', 'test', 'client', 'tool', 'orchestrator', 'job']);
const ONE_SHOT = new Set(['Job', 'CronJob']);

/**
 * The directory whose unit a record builds: a Dockerfile's own folder, else the folder of the
 * build's `dockerfile` inside its context, else the context itself; null when none is said or
 * the Dockerfile is an unresolved variable.
 */
export function builtDir(e: StoredEvidence): string | null {
  if (e.evidence_kind === 'dockerfile-declared' && typeof e.attributes.dockerfile === 'string') {
    const p = normalizeDir(e.attributes.dockerfile);
    return p === null ? null : dirname(p);
  }
  const ctx = e.attributes.build_context ?? e.attributes.context_dir;
  if (typeof ctx !== 'string') return null;
  const context = normalizeDir(ctx);
  if (context === null) return null;
  const build = e.attributes.build;
  const dockerfile =
    build && typeof build === 'object' ? (build as Record<string, unknown>).dockerfile : null;
  if (typeof dockerfile === 'string' && dockerfile.trim() !== '') {
    // A Dockerfile still named by a variable (none in the project's .env) is unknown: the build
    // names no unit, rather than the unit of its context's folder.
    if (/\$\{?[A-Za-z_]/.test(dockerfile)) return null;
    const p = joinPath(context, dockerfile.trim());
    return p === null ? null : dirname(p);
  }
  return context;
}

/**
 * Per merged set (by union-find representative), from the set's own evidence:
 * - `dropped`: no entity. The set's code units are all non-deployable (library, test, client,
 *   tool, orchestrator, job) or it is only a Helm chart, and no deployment declaration (compose
 *   service, workload) builds or runs it nor declares it a datastore/queue/bucket. Its records
 *   stay evidence. Nor is a set deployed only as workloads whose containers only wait (a
 *   toolbox pod: `sleep 365d`), nor a unit whose every building service runs one of its
 *   programs (`programs_run`).
 * - `finalKey`: the canonical key when the set's kind is not its representative's: `job` for a
 *   set deployed only as Kubernetes Jobs/CronJobs or built from job units; a datastore/queue for
 *   a set whose Dockerfile is built FROM an engine image. A datastore/queue facet (a service
 *   running postgres) names the set only if the facet is about a member of the set and is not a
 *   one-shot Job.
 */
function isIdleWorkload(e: StoredEvidence): boolean {
  const containers = e.attributes.containers;
  return (
    e.evidence_kind === 'workload-declared' &&
    Array.isArray(containers) &&
    containers.length > 0 &&
    containers.every((c) => (c as Record<string, unknown> | null)?.idle === true)
  );
}

export function identitySets(
  evidence: StoredEvidence[],
  subjects: Set<string>,
  find: (key: string) => string,
): { finalKey: Map<string, string>; dropped: Set<string>; engines: Map<string, string> } {
  const sets = new Map<string, { keys: Set<string>; ev: StoredEvidence[] }>();
  // An image a CI step builds from a folder of the repository: its Dockerfile's base.
  const ciBuilt = ciBuiltClasses(evidence);
  for (const key of subjects) {
    const r = find(key);
    const set = sets.get(r) ?? { keys: new Set<string>(), ev: [] };
    set.keys.add(key);
    sets.set(r, set);
  }
  for (const e of evidence) sets.get(find(e.subject_key))?.ev.push(e);
  const finalKey = new Map<string, string>();
  const dropped = new Set<string>();
  const engines = new Map<string, string>();
  const rank = (k: string) => KIND_RANK[k] ?? 99;
  // Compose services others start only once they have exited successfully: one-shot by definition.
  const awaited = new Set(
    evidence
      .filter(
        (e) =>
          e.evidence_kind === 'depends-on' &&
          e.object_key !== null &&
          e.attributes.condition === 'service_completed_successfully',
      )
      .map((e) => find(e.object_key as string)),
  );
  const prebuiltDeployed = deploysPrebuiltServices(evidence);
  const baseOnly = baseOnlyDockerfiles(evidence);
  // .NET projects the deployment does not run, when it runs others (reconcile-unrun-projects.ts).
  const unrunProjects = unrunDotnetProjects(sets);
  const archives = copiedArchives(evidence);
  for (const [r, { keys, ev }] of sets) {
    if (unrunProjects.has(r)) {
      dropped.add(r);
      continue;
    }
    const deployments = ev.filter((e) => DEPLOYMENT_KINDS.has(e.evidence_kind));
    const classes = ev
      .filter((e) => e.evidence_kind === 'unit-declared')
      .map((e) => String(e.attributes.unit_class ?? 'service'));
    const charts = ev.filter((e) => e.evidence_kind === 'chart-declared');
    // A declared datastore/queue/bucket (an Aspire `AddRabbitMQ("eventbus")`) is no library
    // unit of the same name (`EventBus`): the set stays, typed by that declaration.
    const declaredBacking = ev.some((e) =>
      /^(datastore|queue|bucket)-declared$/.test(e.evidence_kind),
    );
    // A library unit whose folder holds a Dockerfile packages a program after all (the code
    // analyzer classifies without seeing Dockerfiles, which are deployment files).
    const imaged =
      classes.length > 0 &&
      classes.every((c) => c === 'library') &&
      ev.some((e) => e.evidence_kind === 'dockerfile-declared');
    if (
      deployments.length === 0 &&
      !declaredBacking &&
      !imaged &&
      (classes.length > 0 || charts.length > 0) &&
      classes.every((c) => NOT_DEPLOYABLE.has(c))
    ) {
      dropped.add(r);
      continue;
    }
    // A unit whose every building service runs one of its programs (reconcile-programs.ts).
    if (
      deployments.length === 0 &&
      ev.some(
        (e) => e.evidence_kind === 'unit-declared' && Array.isArray(e.attributes.programs_run),
      )
    ) {
      dropped.add(r);
      continue;
    }
    // A workload whose containers only wait (`sleep 365d`, `tail -f /dev/null`) is a toolbox
    // pod someone execs into (to run a load generator by hand), not a service of the system.
    if (classes.length === 0 && deployments.length > 0 && deployments.every(isIdleWorkload)) {
      dropped.add(r);
      continue;
    }
    // A template's placeholder (`SERVICE_NAME`, `<your-app>`) is no entity, whatever declares it.
    if ([...keys].every((k) => isPlaceholderName(keyName(k)))) {
      dropped.add(r);
      continue;
    }
    // An image nothing runs beside a deployment of prebuilt images (reconcile-unrun-images.ts).
    if (deployments.length === 0 && (isImageRecipe(ev) || isUnrunImage(ev, prebuiltDeployed))) {
      dropped.add(r);
      continue;
    }
    // A folder whose image is only the `FROM` base of other Dockerfiles (reconcile-unrun-images.ts).
    if (deployments.length === 0 && isBaseImage(ev, baseOnly)) {
      dropped.add(r);
      continue;
    }
    // A module whose archive another folder's image copies in (reconcile-copied-artifacts.ts).
    if (isCopiedArchive(ev, archives)) {
      dropped.add(r);
      continue;
    }
    // A compose service is one-shot when it says `restart: "no"` and it, or what it builds, is
    // named for a one-shot task (migrations, seeding); `restart` alone is Compose's default.
    // Or when other services wait for it to complete (`condition: service_completed_successfully`).
    const oneShotName = [...keys].some((k) => isJobName(keyName(k)));
    const workloadKinds = deployments.map((d) =>
      d.evidence_kind === 'workload-declared'
        ? String(d.attributes.kind)
        : (d.attributes.restart === 'no' && oneShotName) || awaited.has(r)
          ? 'Job'
          : 'compose',
    );
    const oneShot =
      (deployments.length > 0 && workloadKinds.every((k) => ONE_SHOT.has(k))) ||
      (deployments.length > 0 &&
        classes.length > 0 &&
        classes.every((c) => c === 'job') &&
        workloadKinds.every((k) => k === 'compose' || ONE_SHOT.has(k)));
    let kind: string;
    if (oneShot) kind = 'job';
    else {
      // Facets about this set (service_key a member, or none) and not from a one-shot workload.
      const facets = ev.filter(
        (e) =>
          /^(datastore|queue|bucket)-declared$/.test(e.evidence_kind) &&
          (typeof e.attributes.service_key !== 'string' || keys.has(e.attributes.service_key)) &&
          !ONE_SHOT.has(String(e.attributes.workload_kind ?? '')),
      );
      const built =
        ev
          .filter((e) => e.evidence_kind === 'dockerfile-declared')
          .map((e) =>
            typeof e.attributes.base_image === 'string'
              ? classifyImage(parseImageRef(e.attributes.base_image))
              : null,
          )
          .find((c) => c !== null) ??
        ev
          .filter(
            (e) => e.evidence_kind === 'image-reference' && typeof e.attributes.repo === 'string',
          )
          .map((e) => ciBuilt.get(String(e.attributes.repo).toLowerCase()) ?? null)
          .find((c) => c !== null);
      const others = [...keys]
        .map(keyKind)
        .filter((k) => !['datastore', 'queue', 'bucket'].includes(k));
      const candidates = [
        ...facets.map((e) => keyKind(e.subject_key)),
        ...(built ? [built.kind] : []),
        ...(facets.length || built ? [] : others),
      ];
      if (candidates.length === 0) continue;
      kind = candidates.sort((a, b) => rank(a) - rank(b))[0]!;
      if (built && !facets.length && built.kind === kind) engines.set(r, built.engine);
    }
    if (kind === keyKind(r)) continue;
    const same = [...keys].filter((k) => keyKind(k) === kind).sort()[0];
    const key = same ?? `${kind}:${keyName(r)}`;
    finalKey.set(r, key);
    if (engines.has(r)) engines.set(key, engines.get(r)!);
  }
  return { finalKey, dropped, engines };
}

/**
 * A set known only by its Dockerfiles (no code unit around them, no deployment declaration, no
 * record from any other file such as a proxy template's routes) none of which exposes a fixed
 * port, or whose built folder is a build argument without default (`ARG APP_RELATIVE_PATH`,
 * `WORKDIR /src/app/${APP_RELATIVE_PATH}`): an image recipe (a tool image, a script runner, a
 * build template parameterized by `ARG`s), not a deployable. Its records stay evidence.
 */
function isImageRecipe(ev: StoredEvidence[]): boolean {
  const dockerfiles = ev.filter((e) => e.evidence_kind === 'dockerfile-declared');
  if (dockerfiles.length === 0) return false;
  const files = new Set(dockerfiles.map((e) => e.location.path));
  if (ev.some((e) => !files.has(e.location.path))) return false;
  return dockerfiles.every((e) => {
    // The folder built is a build argument without default: whichever program a build names.
    if (typeof e.attributes.program_arg === 'string') return true;
    const ports = Array.isArray(e.attributes.exposed_ports) ? e.attributes.exposed_ports : [];
    return !ports.some((p) => /^\d/.test(String(p)));
  });
}
