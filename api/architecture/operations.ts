/** Architecture truth reads: an audit's snapshot, a repository's latest, the snapshot history. */
import { Type } from '@sinclair/typebox';
import type { Knex } from 'knex';
import {
  evidenceOf,
  latestSnapshot,
  snapshotOfAudit,
  snapshotsOfRepository,
  type EvidenceRow,
  type SnapshotRow,
} from '../../db/architecture';
import { remediationIdsByEntity } from '../../db/remediations';
import { AuditParams } from '../audits/schemas';
import { defineOperation, ok, operationGroup, route } from '../registry/operation';
import { RepositoryParams } from '../repositories/schemas';
import { iso, isoOrNull } from '../shared';
import {
  ArchitectureSnapshotHistoryResponse,
  ArchitectureTruthResponse,
  type ArchitectureTruthResponse as Truth,
} from './schemas';
import { found } from '../registry/parts';
import { loadAudit, loadRepository } from '../registry/loads';
import { columns } from '../registry/columns';

/**
 * The snapshot's entities with their graph links: `remediation_ids` names the repository's
 * remediations (not rejected) whose plan affects the entity.
 */
async function linkedEntities(db: Knex, snapshot: SnapshotRow): Promise<Truth['entities']> {
  const entities = snapshot.entities as Truth['entities'];
  if (!snapshot.repository_id) return entities;
  const remediations = await remediationIdsByEntity(
    db,
    snapshot.workspace_id,
    snapshot.repository_id,
  );
  if (remediations.size === 0) return entities;
  return entities.map((e) => {
    const ids = remediations.get(e.canonical_key);
    return ids ? { ...e, links: { ...e.links, remediation_ids: ids } } : e;
  });
}

/** One evidence row as the contract shows it. */
export function presentEvidence(e: EvidenceRow): Truth['evidence'][number] {
  return {
    id: e.id,
    source_type: e.source_type as 'code' | 'cloud' | 'cicd',
    provider: e.provider,
    evidence_kind: e.evidence_kind,
    subject_key: e.subject_key,
    relationship_kind: e.relationship_kind,
    object_key: e.object_key,
    location: e.location,
    source_ref: e.source_ref,
    summary: e.summary,
    content_sha256: e.content_sha256,
    observed_at: iso(e.observed_at),
  };
}

async function presentTruth(db: Knex, snapshot: SnapshotRow): Promise<Truth> {
  const evidence = await evidenceOf(db, snapshot.id);
  return {
    ...columns(snapshot, ['audit_id', 'version', 'status', 'sources', 'missing_sources']),
    ...columns(snapshot, ['source_coverage', 'entity_count', 'relationship_count']),
    generated_at: iso(snapshot.generated_at),
    entities: await linkedEntities(db, snapshot),
    relationships: snapshot.relationships as Truth['relationships'],
    evidence: evidence.map(presentEvidence),
  };
}

/** An audit of the workspace and its architecture snapshot (404 for either missing). */
export async function auditSnapshot(db: Knex, params: { workspace_id: string; audit_id: string }) {
  const audit = await loadAudit(db, params.workspace_id, params.audit_id);
  const snapshot = await found(
    snapshotOfAudit(db, audit.id),
    `The architecture snapshot of audit ${audit.id}`,
  );
  return { audit, snapshot };
}

const ARCHITECTURE = operationGroup('Architecture');

export const getAuditArchitecture = defineOperation({
  operationId: 'getAuditArchitecture',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/architecture'),
  summary: 'The architecture snapshot an audit produced',
  description:
    'Entities, relationships and the evidence each rests on (file, lines, content hash). 404 until the audit has passed its reconcile stage.',
  ...ARCHITECTURE.scope('audits:read'),
  params: AuditParams,
  success: ok('The snapshot.', ArchitectureTruthResponse),
  handler: async ({ db, params }) => {
    const { snapshot } = await auditSnapshot(db, params);
    return presentTruth(db, snapshot);
  },
});

export const getRepositoryArchitecture = defineOperation({
  operationId: 'getRepositoryArchitecture',
  ...route.get('/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture'),
  summary: "A repository's latest architecture: its default branch's latest full audit",
  description:
    "The snapshot of the newest completed audit of the repository's default branch (or of a commit with no branch named) whose source scope narrows nothing (no include, exclude, source_types or max_files). Audits of other branches and scoped audits are served only while the default branch has no full audit.",
  ...ARCHITECTURE.scope('audits:read'),
  params: RepositoryParams,
  success: ok('The latest snapshot.', ArchitectureTruthResponse),
  handler: async ({ db, params }) => {
    const repo = await loadRepository(db, params.workspace_id, params.repository_id);
    const snapshot = await found(
      latestSnapshot(db, params.workspace_id, repo.id),
      `A completed audit of repository ${repo.id}`,
    );
    return presentTruth(db, snapshot);
  },
});

export const listArchitectureSnapshots = defineOperation({
  operationId: 'listArchitectureSnapshots',
  ...route.get('/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/snapshots'),
  summary: "A repository's architecture snapshots, newest first",
  ...ARCHITECTURE.scope('audits:read'),
  params: RepositoryParams,
  query: Type.Object(
    {
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 200,
          default: 50,
          description: 'At most this many snapshots.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  success: ok('The history.', ArchitectureSnapshotHistoryResponse),
  handler: async ({ db, params, query }) => {
    const repo = await loadRepository(db, params.workspace_id, params.repository_id);
    const rows = await snapshotsOfRepository(db, params.workspace_id, repo.id, query.limit ?? 50);
    return {
      repository_id: repo.id,
      items: rows.map((r) => ({
        id: r.id,
        audit_id: r.audit_id,
        version: r.version,
        status: r.status,
        audit_status: r.audit_status,
        audit_type: r.audit_type,
        commit_sha: r.commit_sha,
        sources: r.sources,
        missing_sources: r.missing_sources,
        source_coverage: r.source_coverage,
        entity_count: r.entity_count,
        relationship_count: r.relationship_count,
        generated_at: iso(r.generated_at),
        completed_at: isoOrNull(r.completed_at),
      })),
    };
  },
});
