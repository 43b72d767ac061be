/**
 * getEntityHistory: one entity across a repository's architecture snapshots, newest first: in
 * each snapshot whether it is there, as what (name, kind, confidence, sources), with how many
 * relationships, and how it differs from the snapshot before. What the explorer shows under an
 * entity, and what a reader asks when a component appeared, changed or went away.
 */
import { Type, type Static } from '@sinclair/typebox';
import { findRepository } from '../../db/repositories';
import { entityAcrossSnapshots } from '../../db/entity-history';
import { problems } from '../errors';
import { defineOperation } from '../registry/operation';
import { found } from '../registry/parts';
import { RepositoryParams } from '../repositories/schemas';
import { DateTime, Decimal, LiteralUnion, Nullable, Strict, Uuid } from '../schema-kit';
import { iso } from '../shared';

const CHANGES = ['added', 'changed', 'unchanged', 'removed', 'absent'] as const;
/** The fields compared from one snapshot to the one before. */
const FIELDS = ['name', 'kind', 'confidence', 'sources', 'attributes', 'contradictions'] as const;

export const EntityHistoryItem = Strict(
  'EntityHistoryItem',
  {
    snapshot_id: Uuid(),
    audit_id: Uuid(),
    audit_status: Type.String(),
    commit_sha: Nullable(Type.String({ description: 'Commit the audit read, if any.' })),
    generated_at: DateTime(),
    present: Type.Boolean({ description: 'Whether the snapshot has the entity.' }),
    change: LiteralUnion(CHANGES, {
      description:
        'Against the next older snapshot listed: `added` (there now, not before; also the oldest listed snapshot that has it), `changed`, `unchanged`, `removed` (there before, not now), `absent` (in neither).',
    }),
    changed_fields: Type.Array(Type.String(), {
      description: `Fields that differ from the older snapshot (of ${FIELDS.join(', ')}).`,
    }),
    name: Nullable(Type.String({ description: 'Untrusted text from the repository.' })),
    kind: Nullable(Type.String()),
    confidence: Nullable(Decimal({ description: 'Confidence, 0 to 1.' })),
    sources: Type.Array(Type.String(), { description: 'Source types that saw it.' }),
    relationship_count: Type.Integer({
      minimum: 0,
      description: 'Relationships of the snapshot from or to the entity.',
    }),
  },
  { description: 'An entity in one snapshot of its repository.' },
);
export type EntityHistoryItem = Static<typeof EntityHistoryItem>;

export const EntityHistoryResponse = Strict(
  'EntityHistoryResponse',
  {
    repository_id: Uuid(),
    canonical_key: Type.String(),
    items: Type.Array(EntityHistoryItem, { description: 'Newest snapshot first.' }),
  },
  { description: 'An entity across the snapshots of its repository.' },
);

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
  query: Type.Object(
    {
      key: Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'The canonical key of the entity (as in getAuditArchitecture).',
      }),
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 200,
          default: 50,
          description: 'At most this many snapshots, newest first.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
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
