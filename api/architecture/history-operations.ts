/**
 * getEntityHistory: one entity across a repository's architecture snapshots, newest first: in
 * each snapshot whether it is there, as what (name, kind, confidence, sources), with how many
 * relationships, and how it differs from the snapshot before. What the explorer shows under an
 * entity, and what a reader asks when a component appeared, changed or went away.
 */
import { findRepository } from '../../db/repositories';
import { entityAcrossSnapshots } from '../../db/entity-history';
import { problems } from '../errors';
import { defineOperation } from '../registry/operation';
import { found } from '../registry/parts';
import { RepositoryParams } from '../repositories/schemas';
import {
  ENTITY_HISTORY_FIELDS as FIELDS,
  EntityHistoryQuery,
  EntityHistoryResponse,
  type EntityHistoryItem,
} from './history-schemas';
import { iso } from '../shared';

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export const getEntityHistory = defineOperation({
  operationId: 'getEntityHistory',
  method: 'get',
  path: '/v1/workspaces/{workspace_id}/repositories/{repository_id}/architecture/entity-history',
  summary: 'One entity across the architecture snapshots of its repository',
  description:
    "The entity of canonical key `key` in each of the repository's latest `limit` snapshots (newest first): present or not, its name, kind, confidence and sources there, its relationship count, and its change against the next older snapshot listed (added, changed with the fields, unchanged, removed, absent). 404 entity_not_found when no listed snapshot has the key.",
  tag: 'Architecture',
  access: { kind: 'scope', scope: 'audits:read' },
  params: RepositoryParams,
  query: EntityHistoryQuery,
  errors: [404],
  success: { status: 200, description: 'The history.', schema: EntityHistoryResponse },
  handler: async ({ db, params, query }) => {
    const repo = await found(
      findRepository(db, params.workspace_id, params.repository_id),
      `Repository ${params.repository_id}`,
    );
    const rows = await entityAcrossSnapshots(
      db,
      params.workspace_id,
      repo.id,
      query.key,
      query.limit ?? 50,
    );
    if (!rows.some((r) => r.entity))
      throw problems.notFound(`Entity ${query.key} in the snapshots of repository ${repo.id}`);
    const items = rows.map((r, i): EntityHistoryItem => {
      const e = r.entity;
      const before = rows[i + 1]?.entity ?? null;
      const changed = e && before ? FIELDS.filter((f) => !same(e[f], before[f])) : [];
      const change = e
        ? !before
          ? 'added'
          : changed.length
            ? 'changed'
            : 'unchanged'
        : before
          ? 'removed'
          : 'absent';
      return {
        snapshot_id: r.snapshot_id,
        audit_id: r.audit_id,
        audit_status: r.audit_status,
        commit_sha: r.commit_sha,
        generated_at: iso(r.generated_at),
        present: e !== null,
        change,
        changed_fields: changed,
        name: e ? String(e.name) : null,
        kind: e ? String(e.kind) : null,
        confidence: e ? String(e.confidence) : null,
        sources: e && Array.isArray(e.sources) ? e.sources.map(String) : [],
        relationship_count: r.relationship_count,
      };
    });
    return { repository_id: repo.id, canonical_key: query.key, items };
  },
});
