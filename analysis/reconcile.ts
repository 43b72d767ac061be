/**
 * Reconciliation: evidence from code, cloud and CI/CD merged into one graph of entities and
 * relationships with canonical keys. Deterministic: the same evidence always gives the same
 * graph. Identity resolution merges the names one thing has in different files (a compose
 * service, a Kubernetes Deployment and its Service, a source directory, an image name).
 */
import {
  addressRole,
  isIdentityProviderImage,
  isIdentityProviderPackage,
} from './code/address-roles';
import { isConnectionEnvName } from './code/connections';
import type { Evidence, SourceType } from './evidence';
import { keyKind, keyName, normalizeName } from './evidence';
import { classifyImage } from './cloud/common';
import { isJobName } from './code/classify';
import { parseImageRef } from './shared/images';
import { isPlaceholderName } from './shared/placeholders';
import { dirname, joinPath, normalizeDir } from './shared/paths';
import { selectVariants, type VariantChoice } from './variants';
import { ciBuiltClasses } from './cloud/built-images';

export interface StoredEvidence extends Evidence {
  id: string;
}

export interface ConflictingClaim {
  field: string;
  claims: Array<{ value: unknown; evidence_ids: string[]; sources: string[] }>;
}

export interface Entity {
  canonical_key: string;
  kind: string;
  name: string;
  attributes: Record<string, unknown>;
  confidence: string;
  evidence_ids: string[];
  sources: string[];
  contradictions: ConflictingClaim[];
}

export interface Relationship {
  canonical_key: string;
  source_key: string;
  target_key: string;
  kind: string;
  attributes: Record<string, unknown>;
  confidence: string;
  evidence_ids: string[];
  sources: string[];
  contradictions: ConflictingClaim[];
}

/**
 * Two deployables (distinct compose services, distinct Kubernetes workloads) that some evidence
 * would have merged into one entity: reconcile keeps them apart and says so.
 */
export interface IdentityConflict {
  /** The entities kept apart (canonical keys, sorted). */
  keys: string[];
  /** Which identity rule would have merged them: `alias`, `same-name`, `build`, `image`. */
  rule: string;
  /** The record that would have merged them, then the deployment declarations of each side. */
  evidence_ids: string[];
  detail: string;
  /**
   * The identity both sides claimed (the unit a build or image names, the name an alias gives):
   * the shared cause, by which uncertainty groups conflicts into one question.
   */
  shared?: string;
}

export interface Graph {
  entities: Entity[];
  relationships: Relationship[];
  /** Present when reconcile had to keep deployables apart (docs/decisions.md). */
  conflicts?: IdentityConflict[];
  /** Present when the repository holds several deployments of one system (analysis/variants.ts). */
  variants?: VariantChoice[];
}

/** Entity kinds that form the graph; other keys (package:, action:, image:) stay evidence only. */
export const GRAPH_KINDS = [
  'service',
  'datastore',
  'queue',
  'bucket',
  'network',
  'cluster',
  'ingress',
  'external',
  'pipeline',
  'job',
  'environment',
] as const;
const GRAPH = new Set<string>(GRAPH_KINDS);
/** When two keys merge, the more specific kind names the result. */
const KIND_RANK: Record<string, number> = {
  datastore: 0,
  queue: 1,
  bucket: 2,
  cluster: 3,
  service: 4,
  ingress: 5,
  network: 6,
  pipeline: 7,
  job: 8,
  environment: 9,
  external: 10,
};

/** Evidence kinds that declare a deployable: a compose service, a Kubernetes workload. */
const DEPLOYMENT_KINDS = new Set(['service-declared', 'workload-declared']);

class UnionFind {
  private parent = new Map<string, string>();
  /** Per set (by representative): the deployables it holds, by the provider declaring them. */
  private deployed = new Map<string, Map<string, Set<string>>>();
  private declared = new Set<string>();
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
    // a workload), then the lexically smaller key (deterministic).
    const rank = (k: string) => KIND_RANK[keyKind(k)] ?? 99;
    const own = (k: string) => (this.declared.has(k) ? 0 : 1);
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

/**
 * How strongly one record supports what it states (docs/decisions.md, "Edge confidence"):
 * - 0.75: the unit's own code or settings establish the connection: a datastore/broker URL or
 *   DSN, a client built with a literal host, a literal URL passed to an HTTP client, a service
 *   called by its registry id (Feign, Dapr, discovery), an embedded store it opens, an Aspire
 *   client integration, a config client;
 * - 0.6: a declaration (a compose service, a workload, a unit), an AppHost reference, and code
 *   reading an address variable (its default, or the value configuration sets);
 * - 0.55: a service-internal http(s) URL written in the unit's code or settings outside a call;
 * - 0.5: a reference in deployment configuration (an env value naming a host, a route, a
 *   dependency), a Dapr scope (allowed to use), a registry inferred from the one server;
 * - 0.4: anything else, such as an external URL written outside a call;
 * - 0.35: a record of a non-primary deployment variant (`variant_primary: false`).
 * An address the service only receives and never reads counts RECEIVED_ONLY_STRENGTH (0.3).
 */
const CODE_ESTABLISHED = new Set([
  'external-api-call',
  'service-id-reference',
  'embedded-store',
  'config-client',
]);
const VARIANT_STRENGTH = 0.35;

function strength(e: StoredEvidence): number {
  const kind = e.evidence_kind;
  // A record of a deployment variant that is not the primary one (the variant reader marks it).
  if (e.attributes.variant_primary === false) return VARIANT_STRENGTH;
  if (e.source_type === 'code') {
    if (CODE_ESTABLISHED.has(kind)) return 0.75;
    if (kind === 'resource-reference' && e.attributes.apphost === undefined) return 0.75;
    if (kind === 'connection-string') {
      if (e.attributes.category === 'datastore' || e.attributes.category === 'queue') return 0.75;
      if (e.attributes.detected_by === 'http-call') return 0.75;
      if (e.attributes.internal_host === true) return 0.55;
      return 0.4;
    }
    if (kind === 'env-read') return 0.6;
  }
  if (/-declared$/.test(kind) || kind === 'unit-declared') return 0.6;
  if (kind === 'resource-reference') return 0.6;
  if (/reference|depends-on|route|import|exposed|push|deploys|uses|scope|registry/.test(kind))
    return 0.5;
  return 0.4;
}

/** Strength of an address a service receives but its code, present, never reads. */
const RECEIVED_ONLY_STRENGTH = 0.3;

/**
 * Deterministic confidence: documented in docs/decisions.md. `receivedOnly`: the evidence is an
 * address the service only receives (configuration indirection), so it counts at
 * RECEIVED_ONLY_STRENGTH whatever its kinds. Independent corroboration raises it: +0.15 per
 * further source type (code, cloud, cicd), +0.05 per further record (at most +0.15); each
 * contradiction lowers it by 0.2.
 */
export function confidence(
  evidence: StoredEvidence[],
  contradictions: number,
  receivedOnly = false,
): string {
  const sources = new Set(evidence.map((e) => e.source_type)).size;
  const base = receivedOnly
    ? RECEIVED_ONLY_STRENGTH
    : evidence.reduce((m, e) => Math.max(m, strength(e)), -Infinity);
  const extra = Math.min(0.15, 0.05 * (evidence.length - 1));
  const value = base + 0.15 * (sources - 1) + extra - 0.2 * contradictions;
  return Math.min(0.99, Math.max(0.05, value)).toFixed(2);
}

const CONTRADICTION_FIELDS = [
  'image_tag',
  'container_port',
  'replicas',
  'engine',
  'engine_version',
] as const;

function contradictionsOf(evidence: StoredEvidence[]): ConflictingClaim[] {
  const out: ConflictingClaim[] = [];
  for (const field of CONTRADICTION_FIELDS) {
    const byValue = new Map<string, { value: unknown; ids: string[]; sources: Set<string> }>();
    for (const e of evidence) {
      const value = e.attributes[field];
      if (value === undefined || value === null || value === '') continue;
      const k = JSON.stringify(value);
      const entry = byValue.get(k) ?? { value, ids: [], sources: new Set<string>() };
      entry.ids.push(e.id);
      entry.sources.add(e.provider);
      byValue.set(k, entry);
    }
    if (byValue.size > 1) {
      out.push({
        field,
        claims: [...byValue.values()]
          .map((c) => ({
            value: c.value,
            evidence_ids: c.ids.sort(),
            sources: [...c.sources].sort(),
          }))
          .sort((a, b) => JSON.stringify(a.value).localeCompare(JSON.stringify(b.value))),
      });
    }
  }
  return out;
}

function mergeAttributes(evidence: StoredEvidence[], aliases: string[]): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  const providers = new Set<string>();
  for (const e of evidence) {
    providers.add(e.provider);
    for (const [k, v] of Object.entries(e.attributes)) {
      if (k === 'aliases' || v === undefined) continue;
      if (!(k in attributes)) attributes[k] = v;
    }
  }
  attributes.aliases = aliases;
  attributes.providers = [...providers].sort();
  return attributes;
}

/**
 * Builds the graph from stored evidence. Evidence seen only in tests (fixtures, mocks) stays
 * evidence but shapes no entity or relationship: a URL in a test is not an architecture fact.
 */
export function reconcile(allEvidence: StoredEvidence[]): Graph {
  // The graph is built from the primary deployment variant; the others add no edge to it.
  const { evidence: primary, variants } = selectVariants(allEvidence);
  // A content order, not the input order, decides ties (which value an attribute keeps).
  // Each record's order key is computed once, not twice per comparison.
  const evidence = primary
    .filter((e) => e.attributes.in_test !== true)
    .map((e) => ({ e, k: orderKey(e) }))
    .sort((a, b) => a.k.localeCompare(b.k))
    .map(({ e }) => e);
  const uf = new UnionFind();
  const subjects = new Set<string>();
  for (const e of evidence) {
    if (GRAPH.has(keyKind(e.subject_key))) subjects.add(e.subject_key);
    if (e.object_key && GRAPH.has(keyKind(e.object_key))) subjects.add(e.object_key);
  }
  const byName = new Map<string, string[]>();
  for (const key of subjects) pushTo(byName, keyName(key), key);
  // Deployables: a compose service, a workload. Two of one provider never merge (docs/decisions.md).
  const declarations = new Map<string, string[]>();
  for (const e of evidence) {
    if (!DEPLOYMENT_KINDS.has(e.evidence_kind) || !GRAPH.has(keyKind(e.subject_key))) continue;
    // Compose files of one directory are one project (a file and its overrides); another
    // directory's compose file is another deployment of the system, like a Kubernetes manifest.
    const group =
      e.provider === 'docker-compose' ? `${e.provider}:${dirname(e.location.path)}` : e.provider;
    uf.declare(e.subject_key, group);
    pushTo(declarations, e.subject_key, e.id);
  }
  const clashes = new Map<
    string,
    { keys: string[]; rule: string; ids: string[]; shared: string }
  >();
  const join = (a: string, b: string, rule: string, cause: StoredEvidence) => {
    const kept = uf.union(a, b);
    if (!kept) return;
    const id = kept.join('\u0000');
    if (clashes.has(id)) return;
    const ids = [cause.id, ...kept.flatMap((k) => declarations.get(k) ?? [])];
    clashes.set(id, { keys: kept, rule, ids: [...new Set(ids)], shared: a });
  };

  // 1. Names declared as aliases of a subject (k8s Service names, directory vs manifest names).
  for (const e of evidence) {
    const aliases = e.attributes.aliases;
    if (!Array.isArray(aliases) || !GRAPH.has(keyKind(e.subject_key))) continue;
    for (const alias of aliases) {
      for (const other of byName.get(normalizeName(String(alias))) ?? []) {
        if (keyKind(other) === keyKind(e.subject_key) || keyKind(other) === 'service')
          join(e.subject_key, other, 'alias', e);
      }
    }
  }
  // 2. A service and a datastore/queue/bucket of the same name are one thing (compose `db` running postgres).
  for (const keys of byName.values()) {
    const specific = keys.filter((k) => ['datastore', 'queue', 'bucket'].includes(keyKind(k)));
    const services = keys.filter((k) => keyKind(k) === 'service');
    if (specific.length && services.length) for (const s of services) uf.union(specific[0]!, s);
  }
  // 3. Builds and images: a compose/k8s service built from a Dockerfile in a unit's directory
  //    (the build's `dockerfile` inside its context, else the context's Dockerfile), or running
  //    an image named like a code unit, is that unit. A context shared by several services (the
  //    repository root) names no unit when the build says which Dockerfile it uses.
  const unitsByDir = new Map<string, string>();
  for (const e of evidence) {
    const dir = typeof e.attributes.dir === 'string' ? normalizeDir(e.attributes.dir) : null;
    if (e.evidence_kind === 'unit-declared' && dir !== null) unitsByDir.set(dir, e.subject_key);
  }
  // A Dockerfile without a code unit around it (no manifest) is the build identity of its folder.
  for (const e of evidence) {
    if (e.evidence_kind !== 'dockerfile-declared' || !GRAPH.has(keyKind(e.subject_key))) continue;
    const dir = builtDir(e);
    if (dir !== null && !unitsByDir.has(dir)) unitsByDir.set(dir, e.subject_key);
  }
  // The first unit (in unitsByDir's order) of each name: an index, not a scan per image.
  const unitByName = new Map<string, string>();
  for (const u of unitsByDir.values())
    if (!unitByName.has(keyName(u))) unitByName.set(keyName(u), u);
  for (const e of evidence) {
    const built = GRAPH.has(keyKind(e.subject_key)) ? builtDir(e) : null;
    if (built !== null) {
      const unit = unitsByDir.get(built);
      if (unit) join(unit, e.subject_key, 'build', e);
    }
    if (
      (e.evidence_kind === 'image-reference' || e.evidence_kind === 'image-push') &&
      e.object_key?.startsWith('image:')
    ) {
      // The repository's last segment (`springcommunity/petclinic-api` -> `petclinic-api`): the
      // image key flattens `/` into `-`, so it is read from the attributes when present.
      const repo =
        typeof e.attributes.repo === 'string' ? e.attributes.repo : e.object_key.slice(6);
      const base = normalizeName(repo.split('/').pop() ?? '');
      const unit = unitByName.get(base);
      if (unit && keyKind(e.subject_key) === 'service' && e.evidence_kind === 'image-reference')
        join(unit, e.subject_key, 'image', e);
    }
  }

  // Each set's kind and whether it is an entity at all, from its own evidence (identitySets).
  const { finalKey, dropped, engines } = identitySets(evidence, subjects, (k) => uf.find(k));
  const rep = (key: string) => {
    const r = uf.find(key);
    return finalKey.get(r) ?? r;
  };
  const placed = (key: string) => !dropped.has(uf.find(key));
  const entityEvidence = new Map<string, StoredEvidence[]>();
  const members = new Map<string, Set<string>>();
  for (const key of subjects) {
    const r = rep(key);
    members.set(r, (members.get(r) ?? new Set()).add(key));
  }
  for (const e of evidence) {
    if (!GRAPH.has(keyKind(e.subject_key)) || !placed(e.subject_key)) continue;
    const r = rep(e.subject_key);
    pushTo(entityEvidence, r, e);
  }
  // Entities only referenced as objects (an external API host) still exist, cited by the reference.
  for (const e of evidence) {
    if (e.object_key && GRAPH.has(keyKind(e.object_key)) && placed(e.object_key)) {
      if (!placed(e.subject_key) && GRAPH.has(keyKind(e.subject_key))) continue;
      const r = rep(e.object_key);
      if (!entityEvidence.has(r)) entityEvidence.set(r, [e]);
    }
  }

  const entities: Entity[] = [...entityEvidence.entries()]
    .map(([key, ev]) => {
      const aliases = [...(members.get(key) ?? new Set([key]))].filter((k) => k !== key).sort();
      // Only statements about the entity itself can contradict each other: evidence relating it
      // to something else (a client library, a connection to postgres and another to redis)
      // describes that other thing, so two such records are no disagreement about the entity.
      const contradictions = contradictionsOf(
        ev.filter((e) => rep(e.subject_key) === key && e.object_key === null),
      );
      return {
        canonical_key: key,
        kind: keyKind(key),
        name: keyName(key),
        // Likewise attributes: a record relating the entity to something else (`pg` connecting
        // to postgres: engine postgresql) describes the other end, not the entity.
        attributes: {
          // The engine a repository Dockerfile is built FROM, when that typed the entity.
          ...(engines.has(key) ? { engine: engines.get(key) } : {}),
          ...mergeAttributes(
            ev.filter((e) => rep(e.subject_key) === key && e.object_key === null),
            aliases,
          ),
        },
        confidence: confidence(ev, contradictions.length),
        evidence_ids: ev.map((e) => e.id).sort(),
        sources: [...new Set(ev.map((e) => e.source_type))].sort(),
        contradictions,
      };
    })
    .sort((a, b) => a.canonical_key.localeCompare(b.canonical_key));

  const configured = new Set(
    evidence
      .filter(
        (e) =>
          e.source_type !== 'code' &&
          e.evidence_kind !== 'env-default' &&
          typeof e.attributes.variable === 'string',
      )
      .map((e) => `${rep(e.subject_key)}\u0000${String(e.attributes.variable)}`),
  );
  const imageDefaults = new Set(
    evidence
      .filter((e) => e.evidence_kind === 'env-default' && typeof e.attributes.variable === 'string')
      .map((e) => `${rep(e.subject_key)}\u0000${String(e.attributes.variable)}`),
  );
  // A URL written as a placeholder's default (`${PAYMENTS_URL:http://payments:8080}`) is the
  // read's default, not a connection of its own: once configuration sets the variable, the
  // connection found in that default on the same line is not in effect.
  const overriddenDefaults = new Set(
    evidence
      .filter(
        (e) =>
          e.evidence_kind === 'env-read' &&
          typeof e.attributes.default === 'string' &&
          configured.has(`${rep(e.subject_key)}\u0000${String(e.attributes.variable)}`),
      )
      .map(
        (e) =>
          `${e.location.path}\u0000${e.location.start_line}\u0000${defaultHost(String(e.attributes.default))}`,
      ),
  );
  const relEvidence = new Map<
    string,
    { kind: string; source: string; target: string; ev: StoredEvidence[] }
  >();
  const handed = handedAddresses(evidence, rep);
  for (const e of evidence) {
    if (!e.relationship_kind || !e.object_key) continue;
    if (handed(e)) continue;
    if (!GRAPH.has(keyKind(e.subject_key)) || !GRAPH.has(keyKind(e.object_key))) continue;
    if (!placed(e.subject_key) || !placed(e.object_key)) continue;
    if (
      e.evidence_kind === 'connection-string' &&
      overriddenDefaults.has(
        `${e.location.path}\u0000${e.location.start_line}\u0000${String(e.attributes.host)}`,
      )
    )
      continue;
    const source = rep(e.subject_key);
    const target = rep(e.object_key);
    if (source === target) continue;
    const key = `${e.relationship_kind}:${source}->${target}`;
    const entry = relEvidence.get(key) ?? { kind: e.relationship_kind, source, target, ev: [] };
    entry.ev.push(e);
    relEvidence.set(key, entry);
  }
  // Defaults: code that reads VAR with a default host (`os.getenv("REDIS_HOST", "redis")`,
  // `GetEnvironmentVariable("POSTGRES_HOST") ?? "db"`) connects to that host when no
  // configuration of the service sets VAR, since the default is then the value in effect. Only a
  // host the graph knows (a declared service or datastore) resolves; others stay plain reads.
  // A Dockerfile `ENV VAR=...` (`env-default`) is such a default too: it is in effect unless the
  // deployment configuration sets VAR, and it overrides the code's default.
  for (const read of evidence) {
    const imageDefault = read.evidence_kind === 'env-default';
    if (read.evidence_kind !== 'env-read' && !imageDefault) continue;
    if (typeof read.attributes.variable !== 'string') continue;
    if (typeof read.attributes.default !== 'string') continue;
    if (!GRAPH.has(keyKind(read.subject_key)) || handed(read)) continue;
    const source = rep(read.subject_key);
    const slot = `${source}\u0000${read.attributes.variable}`;
    if (configured.has(slot) || (!imageDefault && imageDefaults.has(slot))) continue;
    const host = defaultHost(read.attributes.default);
    if (!host) continue;
    if (!placed(read.subject_key)) continue;
    const targets = [...new Set((byName.get(normalizeName(host)) ?? []).filter(placed).map(rep))];
    const target = targets.length === 1 ? targets[0]! : null;
    if (!target || target === source) continue;
    const key = `connects_to:${source}->${target}`;
    const entry = relEvidence.get(key) ?? { kind: 'connects_to', source, target, ev: [] };
    entry.ev.push(read);
    relEvidence.set(key, entry);
  }
  // Corroboration: code that reads VAR, where configuration wires VAR of the same service to a
  // target. Relationships are indexed by source, so each read looks only at its service's own.
  const relsBySource = new Map<string, Array<{ ev: StoredEvidence[] }>>();
  for (const rel of relEvidence.values()) pushTo(relsBySource, rel.source, rel);
  for (const read of evidence.filter(
    (e) => e.evidence_kind === 'env-read' && typeof e.attributes.variable === 'string',
  )) {
    for (const rel of relsBySource.get(rep(read.subject_key)) ?? []) {
      if (
        rel.ev.some((e) => e.attributes.variable === read.attributes.variable && e.id !== read.id)
      )
        rel.ev.push(read);
    }
  }
  const receivedOnly = receivedOnlyEdges(evidence, relEvidence, rep);
  const relationships: Relationship[] = [...relEvidence.entries()]
    .filter(([key]) => receivedOnly.get(key) !== 'dropped')
    .map(([key, r]) => {
      const contradictions = contradictionsOf(r.ev);
      const received = receivedOnly.has(key);
      return {
        canonical_key: key,
        source_key: r.source,
        target_key: r.target,
        kind: r.kind,
        attributes: {
          via: [...new Set(r.ev.map((e) => e.evidence_kind))].sort(),
          variables: [...new Set(r.ev.map((e) => e.attributes.variable).filter(Boolean))].sort(),
          ...(received ? { received_only: true } : {}),
        },
        confidence: confidence(r.ev, contradictions.length, received),
        evidence_ids: [...new Set(r.ev.map((e) => e.id))].sort(),
        sources: [...new Set(r.ev.map((e) => e.source_type))].sort(),
        contradictions,
      };
    })
    .sort((a, b) => a.canonical_key.localeCompare(b.canonical_key));

  const conflicts: IdentityConflict[] = [...clashes.values()]
    .map((c) => {
      const keys = [...new Set(c.keys.map(rep))].sort();
      return {
        keys,
        rule: c.rule,
        evidence_ids: c.ids,
        shared: c.shared,
        detail: `${keys.join(' and ')} are distinct deployables that ${RULE_TEXT[c.rule] ?? c.rule}; they were kept apart, and only one of them took the shared identity.`,
      };
    })
    .sort((a, b) => a.keys.join(',').localeCompare(b.keys.join(',')));
  return {
    entities,
    relationships,
    ...(conflicts.length ? { conflicts } : {}),
    ...(variants.length ? { variants } : {}),
  };
}

const RULE_TEXT: Record<string, string> = {
  alias: 'an alias names both',
  build: 'are built from the same unit (same Dockerfile or build context)',
  image: 'run an image named after the same code unit',
};

/** Unit classes that are not an entity unless a deployment declaration builds or runs them. */
const NOT_DEPLOYABLE = new Set(['library', 'test', 'client', 'tool', 'orchestrator', 'job']);
const ONE_SHOT = new Set(['Job', 'CronJob']);

/**
 * The directory whose unit a record builds: a Dockerfile's own folder, else the folder of the
 * build's `dockerfile` inside its context, else the context itself; null when none is said.
 */
function builtDir(e: StoredEvidence): string | null {
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
 *   stay evidence.
 * - `finalKey`: the canonical key when the set's kind is not its representative's: `job` for a
 *   set deployed only as Kubernetes Jobs/CronJobs or built from job units; a datastore/queue for
 *   a set whose Dockerfile is built FROM an engine image. A datastore/queue facet (a service
 *   running postgres) names the set only if the facet is about a member of the set and is not a
 *   one-shot Job.
 */
function identitySets(
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
  for (const [r, { keys, ev }] of sets) {
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
    if (
      deployments.length === 0 &&
      !declaredBacking &&
      (classes.length > 0 || charts.length > 0) &&
      classes.every((c) => NOT_DEPLOYABLE.has(c))
    ) {
      dropped.add(r);
      continue;
    }
    // A template's placeholder (`SERVICE_NAME`, `<your-app>`) is no entity, whatever declares it.
    if ([...keys].every((k) => isPlaceholderName(keyName(k)))) {
      dropped.add(r);
      continue;
    }
    if (deployments.length === 0 && isImageRecipe(ev)) {
      dropped.add(r);
      continue;
    }
    // A compose service is one-shot when it says `restart: "no"` and it, or what it builds, is
    // named for a one-shot task (migrations, seeding); `restart` alone is Compose's default.
    const oneShotName = [...keys].some((k) => isJobName(keyName(k)));
    const workloadKinds = deployments.map((d) =>
      d.evidence_kind === 'workload-declared'
        ? String(d.attributes.kind)
        : d.attributes.restart === 'no' && oneShotName
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
 * port: an image recipe (a tool image, a script runner, a build template parameterized by
 * `ARG`s), not a deployable. Its records stay evidence.
 */
function isImageRecipe(ev: StoredEvidence[]): boolean {
  const dockerfiles = ev.filter((e) => e.evidence_kind === 'dockerfile-declared');
  if (dockerfiles.length === 0) return false;
  const files = new Set(dockerfiles.map((e) => e.location.path));
  if (ev.some((e) => !files.has(e.location.path))) return false;
  return dockerfiles.every((e) => {
    const ports = Array.isArray(e.attributes.exposed_ports) ? e.attributes.exposed_ports : [];
    return !ports.some((p) => /^\d/.test(String(p)));
  });
}

/** Variables a framework binds by name, without a read in code: Spring relaxed binding, .NET `A__B`. */
const FRAMEWORK_BOUND = /^(SPRING|QUARKUS|MICRONAUT|ASPNETCORE|DOTNET)_|__/;

/**
 * Configuration indirection (docs/decisions.md): a connection whose only evidence is configuration
 * handing the service address variables its code never reads (only address variables, the ones
 * whose reads the code analyzer reports, can be known unread; framework-bound names count as
 * read). Received in bulk (`envFrom`, `env_file`: a whole map every consumer gets), such an edge
 * is `dropped` when the service's code is in the repository. Set for this service (an `env`
 * entry, a key reference, a Dockerfile ENV), it is kept as `received` (lower strength) when the
 * code visibly reads other address variables; code with no recognized read at all may read in
 * ways we do not see, so that edge keeps its strength. No code (an image only): unchanged.
 */
function receivedOnlyEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, { kind: string; source: string; ev: StoredEvidence[] }>,
  rep: (key: string) => string,
): Map<string, 'received' | 'dropped'> {
  const reads = new Map<string, Set<string>>();
  const coded = new Set<string>();
  for (const e of evidence) {
    if (e.source_type !== 'code') continue;
    if (e.evidence_kind === 'unit-declared') coded.add(rep(e.subject_key));
    if (e.evidence_kind !== 'env-read' || typeof e.attributes.variable !== 'string') continue;
    if (e.attributes.source === 'env-file') continue;
    const r = rep(e.subject_key);
    reads.set(r, (reads.get(r) ?? new Set()).add(e.attributes.variable));
  }
  const out = new Map<string, 'received' | 'dropped'>();
  for (const [key, rel] of relEvidence) {
    if (rel.kind !== 'connects_to' || !coded.has(rel.source)) continue;
    const read = reads.get(rel.source);
    const configOnly = rel.ev.every(
      (e) => e.source_type !== 'code' && typeof e.attributes.variable === 'string',
    );
    if (!configOnly) continue;
    const silent = (v: string) =>
      isConnectionEnvName(v) && !read?.has(v) && !FRAMEWORK_BOUND.test(v);
    if (!rel.ev.every((e) => silent(String(e.attributes.variable)))) continue;
    if (rel.ev.every((e) => e.attributes.received === 'bulk')) out.set(key, 'dropped');
    else if (read) out.set(key, 'received');
  }
  return out;
}

/**
 * The role of an address (analysis/code/address-roles.ts): a record that hands its subject an
 * address to recognise or send browsers to (a redirect, a callback, an allow-list, an issuer, a
 * client registered with an identity provider) makes no edge from that subject. The code
 * analyzer marks such URLs `address_role`; variables (compose, Kubernetes, Aspire
 * `WithEnvironment`) are judged by their name here, where the receiver's whole evidence says
 * whether it is an identity provider.
 */
function handedAddresses(
  evidence: StoredEvidence[],
  rep: (key: string) => string,
): (e: StoredEvidence) => boolean {
  const idps = new Set<string>();
  for (const e of evidence) {
    const pkg = e.evidence_kind === 'dependency-declared' ? e.attributes.package : null;
    const img = e.attributes.image;
    // Compose records the image parsed (`{ raw, repo, ... }`), Aspire and Kubernetes as written.
    const image =
      typeof img === 'string'
        ? img
        : img && typeof img === 'object'
          ? (img as Record<string, unknown>).repo
          : null;
    if (
      (typeof pkg === 'string' && isIdentityProviderPackage(pkg)) ||
      (typeof image === 'string' && isIdentityProviderImage(image))
    )
      idps.add(rep(e.subject_key));
  }
  return (e) => {
    if (typeof e.attributes.address_role === 'string') return true;
    const v = e.attributes.variable;
    return typeof v === 'string' && addressRole(v, idps.has(rep(e.subject_key))) !== null;
  };
}

/** Appends to the list under `key` (in place: spreading a copy per item is quadratic). */
function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function orderKey(e: StoredEvidence): string {
  const l = e.location;
  return [
    e.source_type,
    l.path,
    String(l.start_line).padStart(8, '0'),
    String(l.end_line).padStart(8, '0'),
    e.evidence_kind,
    e.subject_key,
    e.object_key ?? '',
    e.content_sha256,
    JSON.stringify(e.attributes),
  ].join('\u0000');
}

/** The first host of a default value: `db`, `cache:6379`, `redis://cache:6379/0` -> the host. */
function defaultHost(value: string): string | null {
  const first = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(',')[0] ?? '';
  const host = first.split(/[:/]/)[0] ?? '';
  return /^[a-z0-9][a-z0-9_.-]*$/i.test(host) && /[a-z]/i.test(host) ? host.toLowerCase() : null;
}

export type { SourceType };
