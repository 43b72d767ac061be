/**
 * Deployment variants (docs/decisions.md, "Deployment variants"): a repository may hold several
 * deployments of one system (a base and an alternative manifest folder, a dev and a prod compose
 * folder). Two deployment roots (a manifest folder; a compose project, i.e. the compose files of
 * one folder, which Compose layers with `-f a -f b` and override files) are variants when each
 * declares at least two deployables and at least half of each one's are declared by the other:
 * alternatives of the whole system, not a per-service dev stack beside the full one. Of
 * each set of variants one is primary: the one a pipeline or Skaffold deploys, else the most
 * complete (a guess, said so). The graph is built from the primary: another variant keeps only
 * the declarations of deployables the primary also declares (identity, image, build), never its
 * edges nor entities of its own, so a name two variants resolve differently cannot cross-wire.
 * Pure and deterministic.
 */
import { keyKind, keyName, type Evidence } from './evidence';
import { dirname, isWithin, normalizeDir } from './shared/paths';
import { compareStrings, uniqueSorted } from './shared/text';
import { selectStoreCopies } from './variants-stores';

type Ev = Evidence & { id: string };

export interface VariantChoice {
  /** `kubernetes` (manifest folders), `docker-compose` (compose files) or `helm` (a chart's values). */
  family: string;
  /** The primary variant's root: a folder, or a compose file (its override files with it). */
  primary: string;
  /** The other variants' roots, sorted. */
  others: string[];
  /**
   * What chose the primary: a pipeline's deploy step, Skaffold, completeness alone, or (a Helm
   * chart no deployer passes values to) the chart's own values.yaml.
   */
  chosen_by: 'deploy-step' | 'most-complete' | 'chart-defaults';
  /** The deploy records' places (`file:line`) that chose the primary, when one decided. */
  chosen_from?: string[];
  /** True when no deploy step decided: the primary is a guess and the snapshot is partial. */
  guessed: boolean;
  /** Edges only the other variants declare (`source -> target`), kept out of the graph. */
  dropped_edges: string[];
  /** The deploy records that chose, or the primary's declarations when it was guessed. */
  evidence_ids: string[];
  detail: string;
}

const DECLARATIONS = new Set(['service-declared', 'workload-declared']);
/** From another variant, only these records of deployables the primary declares are kept. */
const KEPT_FROM_VARIANT = new Set(['service-declared', 'workload-declared', 'image-reference']);
const FAMILIES = new Set(['kubernetes', 'docker-compose']);
const GRAPH_KEY = /^(service|datastore|queue|bucket|external|ingress|job):/;
/** Shared deployables, as a share of each side, from which two roots are variants. */
const MIN_SHARED = 0.5;

function areVariants(a: Set<string>, b: Set<string>): boolean {
  if (a.size < 2 || b.size < 2) return false;
  const shared = [...a].filter((n) => b.has(n)).length;
  return shared / a.size >= MIN_SHARED && shared / b.size >= MIN_SHARED;
}

/** Path segments of `a` shared with `b`, as a folder. */
function commonDir(a: string, b: string): string {
  const x = a.split('/');
  const y = b.split('/');
  const out: string[] = [];
  for (let i = 0; i < Math.min(x.length, y.length) && x[i] === y[i]; i++) out.push(x[i]!);
  return out.filter(Boolean).join('/');
}

/** `dir` cut one segment below `ancestor` (the variant folder under the common ancestor). */
function childOf(dir: string, ancestor: string): string {
  if (dir === ancestor) return dir;
  const rest = ancestor === '' ? dir : dir.slice(ancestor.length + 1);
  const first = rest.split('/')[0] ?? '';
  return ancestor === '' ? first : `${ancestor}/${first}`;
}

/** Paths a deploy record names: manifests, a kustomization, a chart (globs cut at the wildcard). */
function deployPaths(e: Ev): string[] {
  const a = e.attributes;
  const raw = [
    ...(Array.isArray(a.manifests) ? a.manifests : []),
    a.kustomize,
    a.chart,
    a.compose_file,
    ...(Array.isArray(a.compose_files) ? a.compose_files : []),
  ].filter((x): x is string => typeof x === 'string' && x !== '');
  const out: string[] = [];
  for (const r of raw) {
    const cut = r.split(/[*?{[]/)[0] ?? '';
    const p = normalizeDir(cut.replace(/\/$/, ''));
    if (p) out.push(p);
  }
  return out;
}

/**
 * How strongly a deploy record says what is deployed (lower is stronger): a pipeline's deploy
 * step or Skaffold, then the root README's commands, a Makefile's, a deploy script's.
 */
function deployTier(e: Ev): number {
  const d = e.attributes.documented_in;
  return d === 'readme' ? 1 : d === 'makefile' ? 2 : d === 'script' ? 3 : 0;
}

/** `big` declares at least half of `small`'s deployables (and more of them). */
function covers(big: Set<string>, small: Set<string>): boolean {
  const shared = [...small].filter((n) => big.has(n)).length;
  return big.size > small.size && shared / small.size >= MIN_SHARED;
}

/**
 * A compose service written with neither image nor build (`extends` is applied before): a
 * fragment an overlay adds to a service another file defines (`-f compose.yaml -f ci/x.yaml`),
 * which Compose cannot run alone. It makes its folder no deployment of that service.
 */
function fragment(e: Ev): boolean {
  const a = e.attributes;
  return e.provider === 'docker-compose' && !a.image && !a.build && !a.build_context;
}

interface Unit {
  family: string;
  root: string;
  names: Set<string>;
}

/** Evidence with every non-primary variant's edges and own entities left out, and the choices. */
export function selectVariants<T extends Ev>(
  evidence: T[],
): { evidence: T[]; variants: VariantChoice[] } {
  // 1. Declaring units: a compose project (the compose files of a folder), a manifest folder.
  const units = new Map<string, Unit>();
  const unitOf = (e: T): string | null => {
    if (e.source_type !== 'cloud' || !FAMILIES.has(e.provider)) return null;
    return `${e.provider}\u0000${dirname(e.location.path)}`;
  };
  for (const e of evidence) {
    if (!DECLARATIONS.has(e.evidence_kind)) continue;
    const id = unitOf(e);
    if (!id || fragment(e)) continue;
    const [family, root] = id.split('\u0000') as [string, string];
    const u = units.get(id) ?? { family, root, names: new Set<string>() };
    u.names.add(keyName(e.subject_key));
    units.set(id, u);
  }
  // 2. Units that are alternatives of each other form one set of variants (connected components).
  const ids = [...units.keys()].sort(compareStrings);
  const parent = new Map(ids.map((i) => [i, i]));
  const find = (i: string): string => {
    while (parent.get(i) !== i) i = parent.get(i)!;
    return i;
  };
  for (const [i, a] of ids.entries()) {
    for (const b of ids.slice(i + 1)) {
      const ua = units.get(a)!;
      const ub = units.get(b)!;
      if (ua.family === ub.family && areVariants(ua.names, ub.names)) parent.set(find(b), find(a));
    }
  }
  const components = new Map<string, string[]>();
  for (const id of ids) components.set(find(id), [...(components.get(find(id)) ?? []), id]);

  const deploys = evidence.filter(
    (e) => e.evidence_kind === 'deploys' || e.evidence_kind === 'deploy-manifests',
  );
  const variants: VariantChoice[] = [];
  /** Per non-primary root: the names its primary declares. */
  const demoted: Array<{
    family: string;
    root: string;
    within: (p: string) => boolean;
    keep: Set<string>;
  }> = [];
  for (const members of components.values()) {
    if (members.length < 2) continue;
    const family = units.get(members[0]!)!.family;
    // Variant roots: compose projects as they are; manifest folders cut below their common ancestor.
    const roots = new Map<string, Set<string>>();
    const ancestor = members.map((m) => units.get(m)!.root).reduce((a, b) => commonDir(a, b));
    for (const m of members) {
      const u = units.get(m)!;
      const root = family === 'docker-compose' ? u.root : childOf(u.root, ancestor);
      roots.set(root, new Set([...(roots.get(root) ?? []), ...u.names]));
    }
    if (roots.size < 2) continue;
    const within = (root: string) => (p: string) =>
      family === 'docker-compose' ? dirname(p) === root : isWithin(dirname(p), root);
    const inRoot = (root: string) =>
      evidence.filter((e) => e.provider === family && within(root)(e.location.path));
    // Memoized: the completeness sort asks for a root's edges at every comparison.
    const edgeCache = new Map<string, string[]>();
    const edgesOf = (root: string): string[] => {
      const known = edgeCache.get(root);
      if (known) return known;
      const found = uniqueSorted(
        inRoot(root)
          .filter((e) => e.object_key && GRAPH_KEY.test(e.object_key))
          .map((e) => `${e.subject_key} -> ${e.object_key}`),
      );
      edgeCache.set(root, found);
      return found;
    };
    // 3. The primary: what a deploy step names, else the most complete. Records of the first
    // tier that names any variant decide (CI and Skaffold, then the README, a Makefile, a script).
    const unitRoots = members.map((m) => units.get(m)!.root);
    const named = new Map<string, string[]>();
    /** A deployment the records name outside these variants that holds them all (dev stacks). */
    let outside = null as { root: string; ids: string[] } | null;
    for (const tier of [0, 1, 2, 3]) {
      for (const d of deploys.filter((x) => deployTier(x) === tier)) {
        for (const p of deployPaths(d)) {
          let inside = false;
          for (const root of roots.keys()) {
            const hit =
              family === 'docker-compose'
                ? dirname(p) === root
                : (isWithin(p, root) || isWithin(root, p)) &&
                  // The path reaches a manifest folder of the variants, not a file beside them.
                  unitRoots.some((u) => isWithin(u, root) && (isWithin(u, p) || isWithin(p, u)));
            if (hit && !(p === ancestor && roots.size > 1 && family !== 'docker-compose')) {
              named.set(root, [...(named.get(root) ?? []), d.id]);
              inside = true;
            }
          }
          const other =
            family === 'docker-compose' ? units.get(`${family}\u0000${dirname(p)}`) : null;
          if (
            !inside &&
            other &&
            !outside &&
            [...roots.values()].every((n) => covers(other.names, n))
          )
            outside = { root: other.root, ids: [d.id] };
        }
      }
      if (named.size > 0 || outside) break;
    }
    const score = (root: string) => roots.get(root)!.size * 1000 + edgesOf(root).length;
    const byCompleteness = (list: string[]) =>
      [...list].sort(
        (a, b) =>
          score(b) - score(a) || a.split('/').length - b.split('/').length || compareStrings(a, b),
      );
    // Variants that a named deployment holds entirely are its developer stacks: it is primary.
    const over = named.size === 0 ? outside : null;
    if (over) {
      named.set(over.root, over.ids);
      roots.set(over.root, units.get(`${family}\u0000${over.root}`)!.names);
    }
    const decided = named.size === 1;
    const primary = decided
      ? [...named.keys()][0]!
      : byCompleteness([...(named.size ? named.keys() : roots.keys())])[0]!;
    const others = [...roots.keys()].filter((r) => r !== primary).sort(compareStrings);
    // The deciding records' places, by file then line.
    const chosenFrom = decided
      ? [
          ...new Set(
            named
              .get(primary)!
              .map((id) => evidence.find((e) => e.id === id))
              .filter((e): e is T => e !== undefined)
              .sort(
                (a, b) =>
                  compareStrings(a.location.path, b.location.path) ||
                  a.location.start_line - b.location.start_line,
              )
              .map((e) => `${e.location.path}:${e.location.start_line}`),
          ),
        ]
      : [];
    const primaryEdges = new Set(edgesOf(primary));
    const dropped = uniqueSorted(others.flatMap(edgesOf)).filter((e) => !primaryEdges.has(e));
    const keep = roots.get(primary)!;
    for (const r of others) demoted.push({ family, root: r, within: within(r), keep });
    const why = decided
      ? `${over ? 'it holds every variant (developer stacks of it) and ' : ''}a deploy step names it, chosen from ${chosenFrom.slice(0, 5).join(', ')}`
      : named.size > 1
        ? `deploy steps name several variants (${[...named.keys()].sort(compareStrings).join(', ')}); the most complete was chosen, a guess`
        : 'nothing in the repository says which is deployed; the most complete was chosen, a guess';
    const shown = dropped.slice(0, 20).join('; ');
    variants.push({
      family,
      primary,
      others,
      chosen_by: decided ? 'deploy-step' : 'most-complete',
      guessed: !decided,
      ...(decided ? { chosen_from: chosenFrom } : {}),
      dropped_edges: dropped,
      evidence_ids: decided
        ? uniqueSorted(named.get(primary)!)
        : inRoot(primary)
            .filter((e) => DECLARATIONS.has(e.evidence_kind))
            .map((e) => e.id)
            .slice(0, 20),
      detail: `${family} deployment variants of one system: ${[primary, ...others].map((r) => r || '.').join(', ')}. The graph is built from ${primary || '.'}: ${why}. Edges only the other variant(s) declare are left out${dropped.length ? ` (${dropped.length}: ${shown}${dropped.length > 20 ? '; ...' : ''})` : ' (none differ)'}.`,
    });
  }
  variants.push(...helmVariants(evidence));
  // A chart's copies of the Compose deployment's stores (analysis/variants-stores.ts).
  const copies = selectStoreCopies(evidence);
  variants.push(...copies.variants);
  if (demoted.length === 0) return { evidence: copies.evidence, variants };
  const kept = copies.evidence.filter((e) => {
    const d = demoted.find((x) => e.provider === x.family && x.within(e.location.path));
    if (!d) return true;
    return (
      KEPT_FROM_VARIANT.has(e.evidence_kind) &&
      keyKind(e.subject_key) !== '' &&
      d.keep.has(keyName(e.subject_key))
    );
  });
  return { evidence: kept, variants };
}

/**
 * Helm charts deployed several ways: the Helm analyzer renders each variant apart and keeps only
 * the primary's evidence, saying so in a `deployment-variants` record (analysis/cloud/helm).
 */
function helmVariants(evidence: Ev[]): VariantChoice[] {
  const out: VariantChoice[] = [];
  for (const e of evidence) {
    if (e.evidence_kind !== 'deployment-variants' || e.provider !== 'helm') continue;
    const a = e.attributes;
    const strings = (v: unknown) =>
      Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    out.push({
      family: 'helm',
      primary: typeof a.primary === 'string' ? a.primary : e.location.path,
      others: strings(a.others),
      chosen_by:
        a.chosen_by === 'deploy-step' || a.chosen_by === 'most-complete'
          ? a.chosen_by
          : 'chart-defaults',
      guessed: a.guessed === true,
      dropped_edges: strings(a.dropped_edges),
      evidence_ids: [e.id],
      detail: typeof a.detail === 'string' ? a.detail : e.summary,
    });
  }
  return out;
}
