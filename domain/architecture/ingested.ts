/**
 * Evidence from outside the repository (ingestEvidence) in an audit's graph. Pure and
 * deterministic; the rules (docs/decisions.md, "Evidence ingestion"):
 *
 * - Records are checked as a batch arrives (`recordProblems`): a known kind, the source type
 *   that kind has, entity keys, an object only for a runtime call, no time in the future.
 * - Reconcile builds the graph from the repository's files alone; ingested records then
 *   corroborate it (`applyIngested`). A runtime call from A to B corroborates a relationship
 *   declared from A to B (any kind): the record joins its evidence, its sources gain the record's
 *   source type and its confidence rises by RUNTIME_CORROBORATION. A cloud inventory or CI/CD
 *   run record naming an entity corroborates that entity (+ INVENTORY_CORROBORATION).
 * - A runtime call from A to B that nothing in the code or configuration declares contradicts
 *   them: it opens an uncertainty case (conflicting_evidence, scope relationship) and adds no
 *   relationship; the graph stays what the repository declares. A declared relationship never
 *   observed at run time is not a contradiction (sampling and traffic decide what traces see).
 * - Keys resolve to entities by canonical key, then by an alias, then by a unique name.
 */
import { keyKind, keyName, normalizeName } from '../../analysis/evidence';
import type { Entity, Relationship, StoredEvidence } from '../../analysis/reconcile';

export const INGESTED_KINDS = ['runtime_call', 'cloud_resource', 'cicd_run'] as const;
export type IngestedKind = (typeof INGESTED_KINDS)[number];

/** What each kind is: its source type and the evidence kind it is stored as. */
export const KIND_RULES: Record<
  IngestedKind,
  { source_type: 'cloud' | 'cicd'; evidence_kind: string; relationship_kind: string | null }
> = {
  runtime_call: { source_type: 'cloud', evidence_kind: 'runtime-call', relationship_kind: 'calls' },
  cloud_resource: {
    source_type: 'cloud',
    evidence_kind: 'resource-observed',
    relationship_kind: null,
  },
  cicd_run: { source_type: 'cicd', evidence_kind: 'pipeline-run', relationship_kind: null },
};

export const RUNTIME_CORROBORATION = 0.15;
export const INVENTORY_CORROBORATION = 0.1;
/** How far in the future an observation may be dated (clock skew of the sender). */
export const FUTURE_SKEW_MS = 5 * 60 * 1000;
const KEY = /^[a-z][a-z0-9_-]*:\S.*$/;

export interface IngestedLocation {
  path: string;
  start_line?: number;
  end_line?: number;
}

/** One stored record, as reconcile reads it. */
export interface IngestedRecord {
  id: string;
  ingestion_id: string;
  kind: string;
  source_type: string;
  provider: string;
  evidence_kind: string;
  subject_key: string;
  relationship_kind: string | null;
  object_key: string | null;
  location: IngestedLocation | null;
  summary: string;
  attributes: Record<string, unknown>;
  content_sha256: string;
  observed_at: string;
}

/** A record as sent (EvidenceRecord). */
export interface RecordInput {
  kind: string;
  provider: string;
  source_type: string;
  subject_key: string;
  object_key?: string | null;
  observed_at: string;
}

export interface RecordProblem {
  index: number;
  /** JSON pointer into the batch. */
  path: string;
  code:
    | 'unknown_kind'
    | 'source_type_mismatch'
    | 'invalid_key'
    | 'object_key_required'
    | 'object_key_not_allowed'
    | 'observed_in_future';
  message: string;
}

/** Every problem of every record (each with its index), in record order. */
export function recordProblems(records: readonly RecordInput[], now: Date): RecordProblem[] {
  const out: RecordProblem[] = [];
  records.forEach((r, index) => {
    const at = (field: string) => `/records/${index}/${field}`;
    const rule = KIND_RULES[r.kind as IngestedKind];
    if (!rule)
      out.push({
        index,
        path: at('kind'),
        code: 'unknown_kind',
        message: `unknown kind ${JSON.stringify(r.kind)}; one of ${INGESTED_KINDS.join(', ')}`,
      });
    else if (r.source_type !== rule.source_type)
      out.push({
        index,
        path: at('source_type'),
        code: 'source_type_mismatch',
        message: `a ${r.kind} record has source_type ${rule.source_type}, not ${r.source_type}`,
      });
    for (const field of ['subject_key', 'object_key'] as const) {
      const key = r[field];
      if (key === undefined || key === null) continue;
      if (!KEY.test(key))
        out.push({
          index,
          path: at(field),
          code: 'invalid_key',
          message: 'is not an entity key `<kind>:<name>` (e.g. service:orders)',
        });
    }
    const hasObject = r.object_key !== undefined && r.object_key !== null;
    if (r.kind === 'runtime_call' && !hasObject)
      out.push({
        index,
        path: at('object_key'),
        code: 'object_key_required',
        message: 'a runtime_call names the called entity in object_key',
      });
    if (rule && r.kind !== 'runtime_call' && hasObject)
      out.push({
        index,
        path: at('object_key'),
        code: 'object_key_not_allowed',
        message: `a ${r.kind} record names one entity (subject_key) only`,
      });
    if (Date.parse(r.observed_at) > now.getTime() + FUTURE_SKEW_MS)
      out.push({
        index,
        path: at('observed_at'),
        code: 'observed_in_future',
        message: `is more than ${FUTURE_SKEW_MS / 60000} minutes in the future`,
      });
  });
  return out;
}

/** A runtime call no declared relationship accounts for. */
export interface UncorroboratedCall {
  source_key: string;
  target_key: string;
  /** Local evidence ids (`ingested:<id>`). */
  evidence_ids: string[];
  providers: string[];
  last_observed_at: string;
}

export interface IngestedOutcome {
  entities: Entity[];
  relationships: Relationship[];
  /** The records as evidence of the snapshot (local ids `ingested:<record id>`). */
  evidence: StoredEvidence[];
  uncorroborated: UncorroboratedCall[];
  corroborated: { entities: number; relationships: number };
}

export const localIngestedId = (recordId: string) => `ingested:${recordId}`;

/** In-memory location of a record sent without one (stored as null). */
export const NO_LOCATION = { path: '', start_line: 0, end_line: 0 };

function resolver(entities: readonly Entity[]) {
  const byKey = new Map(entities.map((e) => [e.canonical_key, e.canonical_key]));
  const byAlias = new Map<string, string>();
  const byName = new Map<string, string[]>();
  for (const e of entities) {
    const aliases = Array.isArray(e.attributes.aliases) ? (e.attributes.aliases as string[]) : [];
    for (const a of aliases) byAlias.set(a, e.canonical_key);
    const n = normalizeName(e.name);
    byName.set(n, [...(byName.get(n) ?? []), e.canonical_key]);
  }
  return (key: string): string | null => {
    const exact = byKey.get(key) ?? byAlias.get(key);
    if (exact) return exact;
    const named = byName.get(normalizeName(keyName(key))) ?? [];
    const sameKind = named.filter((k) => keyKind(k) === keyKind(key));
    if (sameKind.length === 1) return sameKind[0]!;
    return named.length === 1 ? named[0]! : null;
  };
}

const raise = (confidence: string, by: number) =>
  Math.min(0.99, Number(confidence) + by).toFixed(2);

/** The graph with the ingested records applied (see the rules above). */
export function applyIngested(
  graph: { entities: readonly Entity[]; relationships: readonly Relationship[] },
  records: readonly IngestedRecord[],
): IngestedOutcome {
  const resolve = resolver(graph.entities);
  const evidence: StoredEvidence[] = records.map((r) => ({
    id: localIngestedId(r.id),
    source_type: r.source_type as StoredEvidence['source_type'],
    provider: r.provider,
    evidence_kind: r.evidence_kind,
    subject_key: r.subject_key,
    relationship_kind: r.relationship_kind,
    object_key: r.object_key,
    location: r.location
      ? {
          path: r.location.path,
          start_line: r.location.start_line ?? 1,
          end_line: r.location.end_line ?? r.location.start_line ?? 1,
        }
      : { ...NO_LOCATION },
    summary: r.summary,
    content_sha256: r.content_sha256,
    attributes: { ...r.attributes, ingestion_id: r.ingestion_id, ingested: true },
  }));
  const entityEvidence = new Map<string, StoredEvidence[]>();
  const relEvidence = new Map<string, StoredEvidence[]>();
  const calls = new Map<string, UncorroboratedCall>();
  const relsFrom = new Map<string, Relationship[]>();
  for (const r of graph.relationships)
    relsFrom.set(`${r.source_key}\u0000${r.target_key}`, [
      ...(relsFrom.get(`${r.source_key}\u0000${r.target_key}`) ?? []),
      r,
    ]);
  records.forEach((r, i) => {
    const ev = evidence[i]!;
    const subject = resolve(r.subject_key);
    if (r.kind !== 'runtime_call') {
      if (subject) entityEvidence.set(subject, [...(entityEvidence.get(subject) ?? []), ev]);
      return;
    }
    const object = r.object_key ? resolve(r.object_key) : null;
    const declared = subject && object ? relsFrom.get(`${subject}\u0000${object}`) : undefined;
    if (declared?.length) {
      for (const rel of declared)
        relEvidence.set(rel.canonical_key, [...(relEvidence.get(rel.canonical_key) ?? []), ev]);
      return;
    }
    const source = subject ?? r.subject_key;
    const target = object ?? r.object_key ?? '';
    const key = `${source}\u0000${target}`;
    const call = calls.get(key) ?? {
      source_key: source,
      target_key: target,
      evidence_ids: [],
      providers: [],
      last_observed_at: r.observed_at,
    };
    call.evidence_ids.push(ev.id);
    if (!call.providers.includes(r.provider)) call.providers.push(r.provider);
    if (r.observed_at > call.last_observed_at) call.last_observed_at = r.observed_at;
    calls.set(key, call);
  });
  const corroborate = <T extends Entity | Relationship>(
    x: T,
    ev: StoredEvidence[],
    by: number,
  ): T => ({
    ...x,
    confidence: raise(x.confidence, by),
    evidence_ids: [...new Set([...x.evidence_ids, ...ev.map((e) => e.id)])].sort(),
    sources: [...new Set([...x.sources, ...ev.map((e) => e.source_type)])].sort(),
    attributes: {
      ...x.attributes,
      observed_by: [...new Set(ev.map((e) => e.provider))].sort(),
    },
  });
  return {
    entities: graph.entities.map((e) => {
      const ev = entityEvidence.get(e.canonical_key);
      return ev ? corroborate(e, ev, INVENTORY_CORROBORATION) : e;
    }),
    relationships: graph.relationships.map((r) => {
      const ev = relEvidence.get(r.canonical_key);
      return ev ? corroborate(r, ev, RUNTIME_CORROBORATION) : r;
    }),
    evidence,
    uncorroborated: [...calls.values()].map((c) => ({
      ...c,
      providers: c.providers.sort(),
      evidence_ids: c.evidence_ids.sort(),
    })),
    corroborated: { entities: entityEvidence.size, relationships: relEvidence.size },
  };
}
