/**
 * Reads derived from an architecture snapshot: the dependency paths of one entity, and an
 * audit's architecture bundle (facts, coverage observations, a Mermaid diagram, threats).
 * Both only read: the snapshot and its evidence are immutable, so the same snapshot always gives
 * the same paths, facts and threats (threat ids are content hashes).
 */
import { Type } from '@sinclair/typebox';
import type { Knex } from 'knex';
import crypto from 'node:crypto';
import { confidenceProduct, dependencyPaths, resolveEntityKey } from '../../analysis/dependencies';
import { mermaid } from '../../analysis/diagram';
import { artifactsOfAudit, runsOfAudit } from '../../db/agents';
import {
  evidenceOf,
  latestSnapshot,
  snapshotOfAudit,
  type EvidenceRow,
  type SnapshotRow,
} from '../../db/architecture';
import { findAudit, type AuditRow } from '../../db/audits';
import { findRepository } from '../../db/repositories';
import { DEPENDENCY_DIRECTIONS } from '../../domain/contract/values';
import { AuditParams } from '../audits/schemas';
import { problems } from '../errors';
import { defineOperation } from '../registry/operation';
import { RepositoryParams } from '../repositories/schemas';
import { LiteralUnion, Uuid } from '../schema-kit';
import {
  ArchitectureBundleResponse,
  ArchitectureDependencyResponse,
  type ArchitectureEntityResponse,
} from './schemas';

type Obj = Record<string, unknown>;
interface Contradiction {
  field: string;
  claims: Array<{ value: unknown; evidence_ids: string[]; sources: string[] }>;
}
/** An entity or relationship as the snapshot stores it (the response shapes plus timestamps). */
interface Element {
  canonical_key: string;
  kind: string;
  attributes: Obj;
  confidence: string;
  evidence_ids: string[];
  sources: string[];
  contradictions: Contradiction[];
}
interface Graph {
  entities: Array<Element & { name: string }>;
  relationships: Array<
    Element & { source_key: string; target_key: string; superseded_at?: string | null }
  >;
}

const graphOf = (s: SnapshotRow) => s as unknown as Graph;

// ---------------------------------------------------------------------------------------------
// getArchitectureDependencies

/** A snapshot of this repository by id (any audit state: a snapshot exists once reconciled). */
async function snapshotOfRepository(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  snapshotId: string,
): Promise<SnapshotRow | undefined> {
  return db<SnapshotRow>('architecture_snapshots')
    .where({ id: snapshotId, workspace_id: workspaceId, repository_id: repositoryId })
    .first();
}

export const getArchitectureDependencies = defineOperation({
  operationId: 'getArchitectureDependencies',
  method: 'get',
  path: '/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/dependencies',
  summary: 'Upstream or downstream dependency paths of one entity',
  description:
    "Follows relationships from `entity_key` (downstream: source to target; upstream: target to source) and returns every maximal simple path of at most `max_depth` relationships: a path ends at `max_depth`, at an entity with no further relationship, or where the next step would revisit an entity on the path (cycles end there). Path confidence is the product of its relationships' confidences, rounded half up to two decimals. At most 1000 paths are returned. `entity_key` may be a canonical key or an alias of one. Reads the latest completed snapshot of the repository unless `snapshot_id` names another.",
  tag: 'Architecture',
  access: { kind: 'scope', scope: 'audits:read' },
  params: RepositoryParams,
  query: Type.Object(
    {
      entity_key: Type.String({
        minLength: 1,
        maxLength: 500,
        description: 'Canonical key (or an alias) of the root entity, e.g. service:api.',
      }),
      direction: Type.Optional(
        LiteralUnion(DEPENDENCY_DIRECTIONS, {
          default: 'downstream',
          description: 'downstream: what the entity depends on; upstream: what depends on it.',
        }),
      ),
      max_depth: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 10,
          default: 3,
          description: 'Longest path, in relationships.',
        }),
      ),
      snapshot_id: Type.Optional(
        Uuid({ description: 'A snapshot of this repository; default the latest completed.' }),
      ),
    },
    { additionalProperties: false },
  ),
  success: {
    status: 200,
    description: 'The paths from the entity.',
    schema: ArchitectureDependencyResponse,
  },
  handler: async ({ db, params, query }) => {
    const repo = await findRepository(db, params.workspace_id, params.repository_id);
    if (!repo) throw problems.notFound(`Repository ${params.repository_id}`);
    const snapshot = query.snapshot_id
      ? await snapshotOfRepository(db, params.workspace_id, repo.id, query.snapshot_id)
      : await latestSnapshot(db, params.workspace_id, repo.id);
    if (!snapshot)
      throw problems.notFound(
        query.snapshot_id
          ? `Snapshot ${query.snapshot_id} of repository ${repo.id}`
          : `A completed audit of repository ${repo.id}`,
      );
    const graph = graphOf(snapshot);
    const rootKey = resolveEntityKey(graph, query.entity_key);
    const root = graph.entities.find((e) => e.canonical_key === rootKey);
    if (!rootKey || !root)
      throw problems.notFound(`Entity ${query.entity_key} in snapshot ${snapshot.id}`);
    const maxDepth = query.max_depth ?? 3;
    return {
      repository_id: repo.id,
      snapshot_id: snapshot.id,
      audit_id: snapshot.audit_id,
      root: root as unknown as ArchitectureEntityResponse,
      generated_at: new Date().toISOString(),
      max_depth: maxDepth,
      paths: dependencyPaths(graph, rootKey, query.direction ?? 'downstream', maxDepth),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// getAuditArchitectureBundle

export const getAuditArchitectureBundle = defineOperation({
  operationId: 'getAuditArchitectureBundle',
  method: 'get',
  path: '/v1/workspaces/{workspace_id}/audits/{audit_id}/architecture/bundle',
  summary: "An audit's architecture bundle: facts, observations, a diagram and threats",
  description:
    "Derived from the audit's snapshot. `architecture_facts`: one object per entity and relationship. `observations`: coverage (missing sources, coverage gaps, analyzer gaps), low-confidence entities (< 0.5) and contradictions, each with the evidence ids it rests on. `diagrams`: one Mermaid flowchart. `threats`: rule-based, each citing entity keys and evidence ids; rules: public-exposure-reaches-datastore, unencrypted-storage, unpinned-action-with-write-token, literal-secret. A threat id is the first 16 hex digits of SHA-256 of its rule and keys, so it is stable across reads. `model_id` is the model of a successful deep review of the audit, else null. 404 until the audit has passed its reconcile stage.",
  tag: 'Architecture',
  access: { kind: 'scope', scope: 'audits:read' },
  params: AuditParams,
  success: { status: 200, description: 'The bundle.', schema: ArchitectureBundleResponse },
  handler: async ({ db, params }) => {
    const audit = await findAudit(db, params.workspace_id, params.audit_id);
    if (!audit) throw problems.notFound(`Audit ${params.audit_id}`);
    const snapshot = await snapshotOfAudit(db, audit.id);
    if (!snapshot) throw problems.notFound(`The architecture snapshot of audit ${audit.id}`);
    const [evidence, runs, reconciled] = await Promise.all([
      evidenceOf(db, snapshot.id),
      runsOfAudit(db, audit.id),
      artifactsOfAudit(db, audit.id, 'reconcile'),
    ]);
    const review = runs
      .filter((r) => r.agent_key === 'deep-review' && r.status === 'succeeded')
      .sort((a, b) => b.attempt - a.attempt)[0];
    const analyzerGaps = (reconciled.find((a) => a.agent_key === 'reconcile')?.artifact.artifact
      .gaps ?? []) as unknown[];
    const graph = graphOf(snapshot);
    return {
      audit_id: audit.id,
      version: snapshot.version,
      architecture_facts: factsOf(graph),
      observations: observationsOf(snapshot, audit, analyzerGaps),
      diagrams: [
        { format: 'mermaid', title: `Architecture of audit ${audit.id}`, text: mermaid(graph) },
      ],
      threats: threatsOf(graph, evidence),
      status: snapshot.status,
      model_id: review?.model_id ?? null,
    };
  },
});

function factsOf(graph: Graph): Obj[] {
  return [
    ...graph.entities.map((e) => ({
      fact: 'entity',
      key: e.canonical_key,
      kind: e.kind,
      name: e.name,
      confidence: e.confidence,
      sources: e.sources,
      evidence_ids: e.evidence_ids,
    })),
    ...graph.relationships.map((r) => ({
      fact: 'relationship',
      key: r.canonical_key,
      kind: r.kind,
      source: r.source_key,
      target: r.target_key,
      confidence: r.confidence,
      sources: r.sources,
      evidence_ids: r.evidence_ids,
    })),
  ];
}

/** Below this confidence an entity is reported as weakly evidenced. */
const LOW_CONFIDENCE = 0.5;

function observationsOf(snapshot: SnapshotRow, audit: AuditRow, analyzerGaps: unknown[]): Obj[] {
  const out: Obj[] = [
    {
      type: 'coverage',
      status: snapshot.status,
      sources: snapshot.sources,
      missing_sources: snapshot.missing_sources,
      source_coverage: snapshot.source_coverage,
      evidence_ids: [],
    },
  ];
  for (const source of snapshot.missing_sources)
    out.push({
      type: 'missing_source',
      source_type: source,
      message: `No ${source} evidence was found; facts that only ${source} files would show are absent.`,
      evidence_ids: [],
    });
  for (const gap of audit.coverage_gaps ?? [])
    out.push({ ...gap, type: 'coverage_gap', evidence_ids: [] });
  for (const gap of analyzerGaps)
    if (gap && typeof gap === 'object')
      out.push({ ...gap, type: 'analyzer_gap', evidence_ids: [] });
  const graph = graphOf(snapshot);
  for (const e of graph.entities)
    if (Number(e.confidence) < LOW_CONFIDENCE)
      out.push({
        type: 'low_confidence',
        key: e.canonical_key,
        kind: e.kind,
        confidence: e.confidence,
        message: `${e.canonical_key} rests on weak evidence (confidence ${e.confidence}).`,
        evidence_ids: e.evidence_ids,
      });
  for (const item of [...graph.entities, ...graph.relationships]) {
    for (const c of (item.contradictions ?? []) as Contradiction[])
      out.push({
        type: 'contradiction',
        key: item.canonical_key,
        field: c.field,
        claims: c.claims,
        message: `Sources disagree on ${c.field} of ${item.canonical_key}.`,
        evidence_ids: sortedUnique(c.claims.flatMap((cl) => cl.evidence_ids)),
      });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Threats

type Severity = 'high' | 'medium' | 'low';
type Threat = {
  id: string;
  rule: string;
  severity: Severity;
  title: string;
  description: string;
  entity_keys: string[];
  evidence_ids: string[];
};

/** Entity kinds that hold data. */
const STORES = new Set(['datastore', 'bucket', 'queue']);
/** Kinds a public entity must not reach in a few hops. */
const DATASTORES = new Set(['datastore', 'bucket']);
/** Hops followed downstream from a publicly exposed entity. */
const EXPOSURE_HOPS = 3;

/**
 * Rule-based threats over the graph and the attributes of its evidence:
 * - public-exposure-reaches-datastore (high): an entity with evidence `public: true` (compose
 *   port on 0.0.0.0, NodePort/LoadBalancer Service, Ingress route) or Terraform
 *   `security.publicly_accessible: true` that is a datastore or reaches one within 3 hops
 *   downstream; one threat per (exposed entity, datastore), citing the most confident path.
 * - unencrypted-storage (medium; high when also publicly accessible): a datastore, bucket or
 *   queue with evidence `security.encryption_at_rest: false` and none saying true (null means
 *   unknown, e.g. an S3 bucket whose encryption is configured elsewhere, and is not reported).
 * - unpinned-action-with-write-token: a third-party action (`first_party: false`) not pinned
 *   to a commit SHA (`pinned: false`) in a job whose permissions grant write (`write-all` or any
 *   scope `write`; high), or that declares none (the repository default, which may be
 *   write-all; medium). One threat per (job, action).
 * - literal-secret (high; low when only in test files): one per (subject, variable).
 */
function threatsOf(graph: Graph, evidence: EvidenceRow[]): Threat[] {
  const entityOf = subjectResolver(graph);
  const kindOf = new Map(graph.entities.map((e) => [e.canonical_key, e.kind]));
  const live = evidence.filter((e) => e.attributes?.in_test !== true);
  const threats = [
    ...publicExposure(graph, live, entityOf, kindOf),
    ...unencryptedStorage(live, entityOf, kindOf),
    ...unpinnedActions(live, entityOf),
    ...literalSecrets(evidence, entityOf),
  ];
  const rank: Record<Severity, number> = { high: 0, medium: 1, low: 2 };
  return threats.sort(
    (a, b) =>
      rank[a.severity] - rank[b.severity] ||
      cmp(a.rule, b.rule) ||
      cmp(a.entity_keys.join('\n'), b.entity_keys.join('\n')) ||
      cmp(a.id, b.id),
  );
}

function threat(
  rule: string,
  keys: string[],
  fields: Omit<Threat, 'id' | 'rule' | 'evidence_ids'> & { evidence_ids: string[] },
): Threat {
  const id = sha256([rule, ...keys].join('\n')).slice(0, 16);
  return { id, rule, ...fields, evidence_ids: sortedUnique(fields.evidence_ids) };
}

/** Canonical entity of an evidence subject (its own key or an alias merged into an entity). */
function subjectResolver(graph: Graph): (key: string) => string | null {
  const map = new Map<string, string>();
  for (const e of graph.entities) {
    const aliases = e.attributes?.aliases;
    if (Array.isArray(aliases)) for (const a of aliases) map.set(String(a), e.canonical_key);
  }
  for (const e of graph.entities) map.set(e.canonical_key, e.canonical_key);
  return (key) => map.get(key) ?? null;
}

const security = (e: EvidenceRow): Obj | null => {
  const s = e.attributes?.security;
  return s && typeof s === 'object' && !Array.isArray(s) ? (s as Obj) : null;
};

function publicExposure(
  graph: Graph,
  evidence: EvidenceRow[],
  entityOf: (k: string) => string | null,
  kindOf: Map<string, string>,
): Threat[] {
  const exposedBy = new Map<string, string[]>();
  for (const e of evidence) {
    if (e.attributes?.public !== true && security(e)?.publicly_accessible !== true) continue;
    const key = entityOf(e.subject_key);
    if (key) exposedBy.set(key, [...(exposedBy.get(key) ?? []), e.id]);
  }
  const rels = new Map(graph.relationships.map((r) => [r.canonical_key, r]));
  const out: Threat[] = [];
  for (const [exposed, exposureIds] of [...exposedBy.entries()].sort((a, b) => cmp(a[0], b[0]))) {
    // Best route to each datastore: most confident, then shortest, then lexically first.
    const best = new Map<string, { keys: string[]; rels: string[]; ids: string[]; conf: string }>();
    if (DATASTORES.has(kindOf.get(exposed) ?? ''))
      best.set(exposed, { keys: [exposed], rels: [], ids: [], conf: '1.00' });
    for (const path of dependencyPaths(graph, exposed, 'downstream', EXPOSURE_HOPS)) {
      for (let i = 1; i < path.entity_keys.length; i++) {
        const target = path.entity_keys[i]!;
        if (!DATASTORES.has(kindOf.get(target) ?? '')) continue;
        const relKeys = path.relationship_keys.slice(0, i);
        const steps = relKeys.map((k) => rels.get(k)!);
        const candidate = {
          keys: path.entity_keys.slice(0, i + 1),
          rels: relKeys,
          ids: steps.flatMap((r) => r.evidence_ids),
          conf: confidenceProduct(steps.map((r) => r.confidence)),
        };
        const seen = best.get(target);
        if (
          !seen ||
          Number(candidate.conf) > Number(seen.conf) ||
          (candidate.conf === seen.conf &&
            (candidate.keys.length < seen.keys.length ||
              (candidate.keys.length === seen.keys.length &&
                cmp(candidate.rels.join('\n'), seen.rels.join('\n')) < 0)))
        )
          best.set(target, candidate);
      }
    }
    for (const [store, route] of best) {
      const via =
        route.keys.length > 1
          ? `reaches ${store} through ${route.keys.join(' -> ')} (confidence ${route.conf})`
          : 'is itself a datastore';
      out.push(
        threat('public-exposure-reaches-datastore', [exposed, store], {
          severity: 'high',
          title: `Publicly exposed ${exposed} reaches datastore ${store}`,
          description: `${exposed} is reachable from outside (published port, public Service or Ingress, or a publicly accessible resource) and ${via}. A compromise of the exposed entity puts the data at risk; keep stores on private networks and put authentication in front.`,
          entity_keys: route.keys,
          evidence_ids: [...exposureIds, ...route.ids],
        }),
      );
    }
  }
  return out;
}

function unencryptedStorage(
  evidence: EvidenceRow[],
  entityOf: (k: string) => string | null,
  kindOf: Map<string, string>,
): Threat[] {
  const byEntity = new Map<string, { off: string[]; on: boolean; public: boolean }>();
  for (const e of evidence) {
    const s = security(e);
    const key = s ? entityOf(e.subject_key) : null;
    if (!s || !key || !STORES.has(kindOf.get(key) ?? '')) continue;
    const entry = byEntity.get(key) ?? { off: [], on: false, public: false };
    if (s.encryption_at_rest === false) entry.off.push(e.id);
    if (s.encryption_at_rest === true) entry.on = true;
    if (s.publicly_accessible === true) entry.public = true;
    byEntity.set(key, entry);
  }
  return [...byEntity.entries()]
    .filter(([, v]) => v.off.length > 0 && !v.on)
    .map(([key, v]) =>
      threat('unencrypted-storage', [key], {
        severity: v.public ? 'high' : 'medium',
        title: `${key} is not encrypted at rest`,
        description: `The configuration of ${kindOf.get(key)} ${key} leaves encryption at rest off${v.public ? ', and it is publicly accessible' : ''}. Stored data and its snapshots and backups are readable to anyone who obtains the underlying storage; enable encryption (e.g. storage_encrypted with a KMS key).`,
        entity_keys: [key],
        evidence_ids: v.off,
      }),
    );
}

/** Whether GitHub Actions permissions (`write-all` or a scope map) grant any write. */
function grantsWrite(permissions: unknown): boolean {
  if (permissions === 'write-all') return true;
  return (
    !!permissions &&
    typeof permissions === 'object' &&
    Object.values(permissions as Obj).some((v) => v === 'write')
  );
}

function unpinnedActions(
  evidence: EvidenceRow[],
  entityOf: (k: string) => string | null,
): Threat[] {
  const jobs = new Map<string, EvidenceRow>();
  for (const e of evidence) if (e.evidence_kind === 'job-declared') jobs.set(e.subject_key, e);
  const grouped = new Map<string, { job: string; uses: string; ids: string[]; write: boolean }>();
  for (const e of evidence) {
    const a = e.attributes ?? {};
    if (e.evidence_kind !== 'action-use' || a.pinned !== false || a.first_party !== false) continue;
    const job = jobs.get(e.subject_key);
    if (!job) continue;
    const write = grantsWrite(job.attributes.permissions);
    const inherited = job.attributes.permissions_source === 'default';
    if (!write && !inherited) continue;
    const jobKey = entityOf(e.subject_key) ?? e.subject_key;
    const uses = String(a.uses ?? e.object_key ?? '');
    const k = `${jobKey}\n${uses}`;
    const entry = grouped.get(k) ?? { job: jobKey, uses, ids: [job.id], write };
    entry.ids.push(e.id);
    grouped.set(k, entry);
  }
  return [...grouped.values()].map((g) =>
    threat('unpinned-action-with-write-token', [g.job, g.uses], {
      severity: g.write ? 'high' : 'medium',
      title: `Unpinned third-party action ${g.uses} runs with ${g.write ? 'a write token' : 'the default token'}`,
      description: `${g.job} runs ${g.uses}, which is not pinned to a commit SHA, ${g.write ? 'with write permissions' : 'without declared permissions (the repository default may grant write-all)'}. Whoever can move that ref can run code with the job's token and secrets; pin the action to a full commit SHA and grant the least permissions.`,
      entity_keys: [g.job],
      evidence_ids: g.ids,
    }),
  );
}

function literalSecrets(evidence: EvidenceRow[], entityOf: (k: string) => string | null): Threat[] {
  const grouped = new Map<
    string,
    { subject: string; entity: string | null; variable: string; ids: string[]; test: boolean }
  >();
  for (const e of evidence) {
    if (e.evidence_kind !== 'literal-secret') continue;
    const variable = String(e.attributes?.variable ?? '');
    const k = `${e.subject_key}\n${variable}`;
    const entry = grouped.get(k) ?? {
      subject: e.subject_key,
      entity: entityOf(e.subject_key),
      variable,
      ids: [],
      test: true,
    };
    entry.ids.push(e.id);
    entry.test &&= e.attributes?.in_test === true;
    grouped.set(k, entry);
  }
  return [...grouped.values()].map((g) =>
    threat('literal-secret', [g.subject, g.variable], {
      severity: g.test ? 'low' : 'high',
      title: `Literal secret ${g.variable} committed for ${g.entity ?? g.subject}`,
      description: `${g.variable} of ${g.entity ?? g.subject} is written as a literal value in the repository${g.test ? ' (test files only)' : ''}. Anyone with read access has the credential; rotate it and read it from a secret store.`,
      entity_keys: g.entity ? [g.entity] : [],
      evidence_ids: g.ids,
    }),
  );
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

function sortedUnique(ids: string[]): string[] {
  return [...new Set(ids)].sort(cmp);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
