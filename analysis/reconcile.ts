/**
 * Reconciliation: evidence from code, cloud and CI/CD merged into one graph of entities and
 * relationships with canonical keys. Deterministic: the same evidence always gives the same
 * graph. Identity resolution merges the names one thing has in different files (a compose
 * service, a Kubernetes Deployment and its Service, a source directory, an image name).
 */
import type { Evidence, SourceType } from './evidence';
import { keyKind, keyName, normalizeName } from './evidence';
import { normalizeDir } from './shared/paths';

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

export interface Graph {
  entities: Entity[];
  relationships: Relationship[];
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

class UnionFind {
  private parent = new Map<string, string>();
  find(x: string): string {
    let p = this.parent.get(x) ?? x;
    if (p !== x) {
      p = this.find(p);
      this.parent.set(x, p);
    }
    return p;
  }
  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return;
    // The representative: most specific kind, then the lexically smaller key (deterministic).
    const rank = (k: string) => KIND_RANK[keyKind(k)] ?? 99;
    const [keep, drop] =
      rank(ra) < rank(rb) || (rank(ra) === rank(rb) && ra < rb) ? [ra, rb] : [rb, ra];
    this.parent.set(drop, keep);
  }
}

/** Evidence kinds by strength: a declaration in configuration beats a reference or an inference. */
function strength(kind: string): number {
  if (/-declared$/.test(kind) || kind === 'unit-declared') return 0.6;
  if (/reference|depends-on|route|import|exposed|push|deploys|uses/.test(kind)) return 0.5;
  return 0.4;
}

/** Deterministic confidence: documented in docs/decisions.md. */
export function confidence(evidence: StoredEvidence[], contradictions: number): string {
  const sources = new Set(evidence.map((e) => e.source_type)).size;
  const base = Math.max(...evidence.map((e) => strength(e.evidence_kind)));
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
  // A content order, not the input order, decides ties (which value an attribute keeps).
  const evidence = allEvidence
    .filter((e) => e.attributes.in_test !== true)
    .sort((a, b) => orderKey(a).localeCompare(orderKey(b)));
  const uf = new UnionFind();
  const subjects = new Set<string>();
  for (const e of evidence) {
    if (GRAPH.has(keyKind(e.subject_key))) subjects.add(e.subject_key);
    if (e.object_key && GRAPH.has(keyKind(e.object_key))) subjects.add(e.object_key);
  }
  const byName = new Map<string, string[]>();
  for (const key of subjects) byName.set(keyName(key), [...(byName.get(keyName(key)) ?? []), key]);

  // 1. Names declared as aliases of a subject (k8s Service names, directory vs manifest names).
  for (const e of evidence) {
    const aliases = e.attributes.aliases;
    if (!Array.isArray(aliases) || !GRAPH.has(keyKind(e.subject_key))) continue;
    for (const alias of aliases) {
      for (const other of byName.get(normalizeName(String(alias))) ?? []) {
        if (keyKind(other) === keyKind(e.subject_key) || keyKind(other) === 'service')
          uf.union(e.subject_key, other);
      }
    }
  }
  // 2. A service and a datastore/queue/bucket of the same name are one thing (compose `db` running postgres).
  for (const keys of byName.values()) {
    const specific = keys.filter((k) => ['datastore', 'queue', 'bucket'].includes(keyKind(k)));
    const services = keys.filter((k) => keyKind(k) === 'service');
    if (specific.length && services.length) for (const s of services) uf.union(specific[0]!, s);
  }
  // 3. Build contexts and images: a compose/k8s service built from a directory or running an
  //    image named like a code unit is that unit.
  const unitsByDir = new Map<string, string>();
  for (const e of evidence) {
    const dir = typeof e.attributes.dir === 'string' ? normalizeDir(e.attributes.dir) : null;
    if (e.evidence_kind === 'unit-declared' && dir !== null) unitsByDir.set(dir, e.subject_key);
  }
  for (const e of evidence) {
    const ctx = e.attributes.build_context ?? e.attributes.context_dir;
    if (typeof ctx === 'string' && GRAPH.has(keyKind(e.subject_key))) {
      const dir = normalizeDir(ctx);
      const unit = dir === null ? undefined : unitsByDir.get(dir);
      if (unit) uf.union(unit, e.subject_key);
    }
    if (
      (e.evidence_kind === 'image-reference' || e.evidence_kind === 'image-push') &&
      e.object_key?.startsWith('image:')
    ) {
      const base = normalizeName(e.object_key.slice('image:'.length).split('/').pop() ?? '');
      const unit = [...unitsByDir.values()].find((u) => keyName(u) === base);
      if (unit && keyKind(e.subject_key) === 'service' && e.evidence_kind === 'image-reference')
        uf.union(unit, e.subject_key);
    }
  }

  const rep = (key: string) => uf.find(key);
  const entityEvidence = new Map<string, StoredEvidence[]>();
  const members = new Map<string, Set<string>>();
  for (const key of subjects) {
    const r = rep(key);
    members.set(r, (members.get(r) ?? new Set()).add(key));
  }
  for (const e of evidence) {
    if (!GRAPH.has(keyKind(e.subject_key))) continue;
    const r = rep(e.subject_key);
    entityEvidence.set(r, [...(entityEvidence.get(r) ?? []), e]);
  }
  // Entities only referenced as objects (an external API host) still exist, cited by the reference.
  for (const e of evidence) {
    if (e.object_key && GRAPH.has(keyKind(e.object_key))) {
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
        attributes: mergeAttributes(
          ev.filter((e) => rep(e.subject_key) === key && e.object_key === null),
          aliases,
        ),
        confidence: confidence(ev, contradictions.length),
        evidence_ids: ev.map((e) => e.id).sort(),
        sources: [...new Set(ev.map((e) => e.source_type))].sort(),
        contradictions,
      };
    })
    .sort((a, b) => a.canonical_key.localeCompare(b.canonical_key));

  const relEvidence = new Map<
    string,
    { kind: string; source: string; target: string; ev: StoredEvidence[] }
  >();
  for (const e of evidence) {
    if (!e.relationship_kind || !e.object_key) continue;
    if (!GRAPH.has(keyKind(e.subject_key)) || !GRAPH.has(keyKind(e.object_key))) continue;
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
  const configured = new Set(
    evidence
      .filter((e) => e.source_type !== 'code' && typeof e.attributes.variable === 'string')
      .map((e) => `${rep(e.subject_key)}\u0000${String(e.attributes.variable)}`),
  );
  for (const read of evidence) {
    if (read.evidence_kind !== 'env-read' || typeof read.attributes.variable !== 'string') continue;
    if (typeof read.attributes.default !== 'string') continue;
    if (!GRAPH.has(keyKind(read.subject_key))) continue;
    const source = rep(read.subject_key);
    if (configured.has(`${source}\u0000${read.attributes.variable}`)) continue;
    const host = defaultHost(read.attributes.default);
    if (!host) continue;
    const targets = [...new Set((byName.get(normalizeName(host)) ?? []).map(rep))];
    const target = targets.length === 1 ? targets[0]! : null;
    if (!target || target === source) continue;
    const key = `connects_to:${source}->${target}`;
    const entry = relEvidence.get(key) ?? { kind: 'connects_to', source, target, ev: [] };
    entry.ev.push(read);
    relEvidence.set(key, entry);
  }
  // Corroboration: code that reads VAR, where configuration wires VAR of the same service to a target.
  for (const read of evidence.filter(
    (e) => e.evidence_kind === 'env-read' && typeof e.attributes.variable === 'string',
  )) {
    for (const rel of relEvidence.values()) {
      if (rel.source !== rep(read.subject_key)) continue;
      if (
        rel.ev.some((e) => e.attributes.variable === read.attributes.variable && e.id !== read.id)
      )
        rel.ev.push(read);
    }
  }
  const relationships: Relationship[] = [...relEvidence.entries()]
    .map(([key, r]) => {
      const contradictions = contradictionsOf(r.ev);
      return {
        canonical_key: key,
        source_key: r.source,
        target_key: r.target,
        kind: r.kind,
        attributes: {
          via: [...new Set(r.ev.map((e) => e.evidence_kind))].sort(),
          variables: [...new Set(r.ev.map((e) => e.attributes.variable).filter(Boolean))].sort(),
        },
        confidence: confidence(r.ev, contradictions.length),
        evidence_ids: [...new Set(r.ev.map((e) => e.id))].sort(),
        sources: [...new Set(r.ev.map((e) => e.source_type))].sort(),
        contradictions,
      };
    })
    .sort((a, b) => a.canonical_key.localeCompare(b.canonical_key));

  return { entities, relationships };
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
