/**
 * The threats an architecture snapshot shows, by rule (see threatsOf). The same snapshot always
 * gives the same threats: a threat id is the first 16 hex digits of SHA-256 of its rule and keys.
 */
import crypto from 'node:crypto';
import { cmp, sortedUnique, type Graph, type Obj } from './graph';

/** The evidence fields the rules read. */
export interface ThreatEvidence {
  id: string;
  evidence_kind: string;
  subject_key: string;
  object_key: string | null;
  attributes: Obj;
}

/**
 * How the rules walk the graph (analysis/dependencies.ts does it for the API): the maximal
 * simple downstream paths of at most `maxDepth` relationships from an entity, and the product of
 * two-decimal confidences, rounded as a path's confidence is.
 */
export interface GraphWalk {
  downstreamPaths(
    rootKey: string,
    maxDepth: number,
  ): ReadonlyArray<{ entity_keys: string[]; relationship_keys: string[] }>;
  confidenceProduct(values: readonly string[]): string;
}

export type Severity = 'high' | 'medium' | 'low';
export type Threat = {
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
export function threatsOf(
  graph: Graph,
  evidence: readonly ThreatEvidence[],
  walk: GraphWalk,
): Threat[] {
  const entityOf = subjectResolver(graph);
  const kindOf = new Map(graph.entities.map((e) => [e.canonical_key, e.kind]));
  const live = evidence.filter((e) => e.attributes?.in_test !== true);
  const threats = [
    ...publicExposure(graph, live, entityOf, kindOf, walk),
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

const security = (e: ThreatEvidence): Obj | null => {
  const s = e.attributes?.security;
  return s && typeof s === 'object' && !Array.isArray(s) ? (s as Obj) : null;
};

function publicExposure(
  graph: Graph,
  evidence: readonly ThreatEvidence[],
  entityOf: (k: string) => string | null,
  kindOf: Map<string, string>,
  walk: GraphWalk,
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
    for (const path of walk.downstreamPaths(exposed, EXPOSURE_HOPS)) {
      for (let i = 1; i < path.entity_keys.length; i++) {
        const target = path.entity_keys[i]!;
        if (!DATASTORES.has(kindOf.get(target) ?? '')) continue;
        const relKeys = path.relationship_keys.slice(0, i);
        const steps = relKeys.map((k) => rels.get(k)!);
        const candidate = {
          keys: path.entity_keys.slice(0, i + 1),
          rels: relKeys,
          ids: steps.flatMap((r) => r.evidence_ids),
          conf: walk.confidenceProduct(steps.map((r) => r.confidence)),
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
  evidence: readonly ThreatEvidence[],
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
  evidence: readonly ThreatEvidence[],
  entityOf: (k: string) => string | null,
): Threat[] {
  const jobs = new Map<string, ThreatEvidence>();
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

function literalSecrets(
  evidence: readonly ThreatEvidence[],
  entityOf: (k: string) => string | null,
): Threat[] {
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
