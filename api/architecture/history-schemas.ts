/** The history of one entity across the snapshots of its repository (getEntityHistory). */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Decimal, LiteralUnion, Nullable, Strict, Uuid } from '../schema-kit';

const ENTITY_CHANGES = ['added', 'changed', 'unchanged', 'removed', 'absent'] as const;
/** The fields compared from one snapshot to the one before. */
export const ENTITY_HISTORY_FIELDS = [
  'name',
  'kind',
  'confidence',
  'sources',
  'attributes',
  'contradictions',
] as const;

export const EntityHistoryItem = Strict(
  'EntityHistoryItem',
  {
    snapshot_id: Uuid(),
    audit_id: Uuid(),
    audit_status: Type.String(),
    commit_sha: Nullable(Type.String({ description: 'Commit the audit read, if any.' })),
    generated_at: DateTime(),
    present: Type.Boolean({ description: 'Whether the snapshot has the entity.' }),
    change: LiteralUnion(ENTITY_CHANGES, {
      description:
        'Against the next older snapshot listed: `added` (there now, not before; also the oldest listed snapshot that has it), `changed`, `unchanged`, `removed` (there before, not now), `absent` (in neither).',
    }),
    changed_fields: Type.Array(Type.String(), {
      description: `Fields that differ from the older snapshot (of ${ENTITY_HISTORY_FIELDS.join(', ')}).`,
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

export const EntityHistoryResponse = Strict(
  'EntityHistoryResponse',
  {
    repository_id: Uuid(),
    canonical_key: Type.String(),
    items: Type.Array(EntityHistoryItem, { description: 'Newest snapshot first.' }),
  },
  { description: 'An entity across the snapshots of its repository.' },
);

export const EntityHistoryQuery = Type.Object(
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
);

export type EntityHistoryItem = Static<typeof EntityHistoryItem>;
