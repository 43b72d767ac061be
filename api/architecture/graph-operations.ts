/**
 * Reads derived from an architecture snapshot: the dependency paths of one entity, and an
 * audit's architecture bundle (facts, coverage observations, a Mermaid diagram, threats).
 * Both only read: the snapshot and its evidence are immutable, so the same snapshot always gives
 * the same paths, facts and threats (threat ids are content hashes).
 */
import { Type } from '@sinclair/typebox';
import { confidenceProduct, dependencyPaths, resolveEntityKey } from '../../analysis/dependencies';
import { mermaid } from '../../analysis/diagram';
import { artifactsOfAudit, runsOfAudit } from '../../db/agents';
import {
  evidenceOf,
  findSnapshotOfRepository,
  latestSnapshot,
  type SnapshotRow,
} from '../../db/architecture';
import type { Graph, Obj } from '../../domain/architecture/graph';
import { observationsOf } from '../../domain/architecture/observations';
import { threatsOf } from '../../domain/architecture/threats';
import { DEPENDENCY_DIRECTIONS } from '../../domain/contract/values';
import { AuditParams } from '../audits/schemas';
import { problems } from '../errors';
import { defineOperation, ok, operationGroup, route } from '../registry/operation';
import { RepositoryParams } from '../repositories/schemas';
import { LiteralUnion, Uuid } from '../schema-kit';
import {
  ArchitectureBundleResponse,
  ArchitectureDependencyResponse,
  type ArchitectureEntityResponse,
} from './schemas';
import { loadRepository } from '../registry/loads';
import { auditSnapshot } from './operations';

const graphOf = (s: SnapshotRow) => s as unknown as Graph;

// ---------------------------------------------------------------------------------------------
// getArchitectureDependencies

const ARCHITECTURE = operationGroup('Architecture');

export const getArchitectureDependencies = defineOperation({
  operationId: 'getArchitectureDependencies',
  ...route.get(
    '/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/dependencies',
  ),
  summary: 'Upstream or downstream dependency paths of one entity',
  description:
    "Follows relationships from `entity_key` (downstream: source to target; upstream: target to source) and returns every maximal simple path of at most `max_depth` relationships: a path ends at `max_depth`, at an entity with no further relationship, or where the next step would revisit an entity on the path (cycles end there). Path confidence is the product of its relationships' confidences, rounded half up to two decimals. At most 1000 paths are returned. `entity_key` may be a canonical key or an alias of one. Reads the repository's latest architecture (its default branch's latest full audit: a completed audit of the default branch whose source scope narrows nothing; a feature-branch or scoped audit only while there is none) unless `snapshot_id` names another.",
  ...ARCHITECTURE.scope('audits:read'),
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
        Uuid({
          description:
            "A snapshot of this repository; default the repository's latest architecture (its default branch's latest full audit).",
        }),
      ),
    },
    { additionalProperties: false },
  ),
  success: ok('The paths from the entity.', ArchitectureDependencyResponse),
  handler: async ({ db, params, query }) => {
    const repo = await loadRepository(db, params.workspace_id, params.repository_id);
    const snapshot = query.snapshot_id
      ? await findSnapshotOfRepository(db, params.workspace_id, repo.id, query.snapshot_id)
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
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/architecture/bundle'),
  summary: "An audit's architecture bundle: facts, observations, a diagram and threats",
  description:
    "Derived from the audit's snapshot. `architecture_facts`: one object per entity and relationship. `observations`: coverage (missing sources, coverage gaps, analyzer gaps), low-confidence entities (< 0.5) and contradictions, each with the evidence ids it rests on. `diagrams`: one Mermaid flowchart. `threats`: rule-based, each citing entity keys and evidence ids; rules: public-exposure-reaches-datastore, unencrypted-storage, unpinned-action-with-write-token, literal-secret. A threat id is the first 16 hex digits of SHA-256 of its rule and keys, so it is stable across reads. `model_id` is the model of a successful deep review of the audit, else null. 404 until the audit has passed its reconcile stage.",
  ...ARCHITECTURE.scope('audits:read'),
  params: AuditParams,
  success: ok('The bundle.', ArchitectureBundleResponse),
  handler: async ({ db, params }) => {
    const { audit, snapshot } = await auditSnapshot(db, params);
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
      observations: observationsOf(snapshot, graph, audit.coverage_gaps ?? [], analyzerGaps),
      diagrams: [
        { format: 'mermaid', title: `Architecture of audit ${audit.id}`, text: mermaid(graph) },
      ],
      threats: threatsOf(graph, evidence, {
        downstreamPaths: (rootKey, maxDepth) =>
          dependencyPaths(graph, rootKey, 'downstream', maxDepth),
        confidenceProduct,
      }),
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
