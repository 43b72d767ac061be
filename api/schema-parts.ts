/**
 * Shapes that many resource families share, each a thing a reader can name: the path parameters
 * of one resource, the two kinds of page, the identity of a workspace's record and its timestamps
 * (field groups spread into an object, in the order the contract lists them), the record of one
 * approval, and the rationale a member gives for one. The words they are written in (Strict,
 * Uuid, ...) are api/schema-kit.ts's.
 */
import { Type, type TSchema, type TString } from '@sinclair/typebox';
import { approvalRecordFields } from './registry/approvals';
import { DateTime, Nullable, Strict, Uuid } from './schema-kit';

/**
 * The path parameters of one resource of a workspace: `workspace_id` and the resource's own id
 * `key` (both UUIDs).
 */
export function ResourceParams<K extends string>(key: K, description?: string) {
  const properties = {
    workspace_id: Uuid({ description: 'The workspace.' }),
    [key]: Uuid(description ? { description } : {}),
  } as { workspace_id: TString } & Record<K, TString>;
  return Type.Object(properties, { additionalProperties: false });
}

/** A page with `items`, `has_more` and `next_cursor` (keyset pagination, opaque cursor). */
export function CursorPage<T extends TSchema>(name: string, item: T) {
  return Strict(name, {
    items: Type.Array(item),
    has_more: Type.Optional(Type.Boolean({ default: false })),
    next_cursor: Type.Optional(Nullable(Type.String())),
  });
}

/** A page that only has `items` (as the spec states for some pages). */
export function ItemsPage<T extends TSchema>(name: string, item: T) {
  return Strict(name, { items: Type.Array(item) });
}

/** The identity of a record of a workspace: its own id and its workspace's (spread first). */
export const WorkspaceRecord = { id: Uuid(), workspace_id: Uuid() };

/** When a record was created and last changed (spread last). */
export const Timestamps = { created_at: DateTime(), updated_at: DateTime() };

/** The named response of one approval or rejection of a `subject` (a decision, a remediation). */
export function ApprovalRecord(name: string, subject: string) {
  return Strict(name, approvalRecordFields(subject), {
    description: `One approval or rejection of a ${subject}.`,
  });
}

/**
 * Why a member moves, approves, rejects or excepts something, kept with the record: 3 to 4,000
 * characters.
 */
export const Rationale = (description?: string) =>
  Type.String({ minLength: 3, maxLength: 4000, ...(description ? { description } : {}) });
