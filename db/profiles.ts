/** Audit profiles: named, versioned audit settings of one repository (soft-deleted rows stay). */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';

export interface AuditProfileRow {
  id: string;
  workspace_id: string;
  repository_id: string;
  name: string;
  branch_ref: string;
  purpose: string;
  source_scope: Record<string, unknown> | null;
  version: number;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** The settings a client writes (create and full replace). */
export interface AuditProfileFieldsInput {
  name: string;
  branch_ref: string;
  purpose: string;
  source_scope: Record<string, unknown> | null;
}

const NOW = "date_trunc('milliseconds', now())";

const jsonOrNull = (v: Record<string, unknown> | null) => (v ? JSON.stringify(v) : null);

export async function insertAuditProfile(
  db: Knex,
  input: AuditProfileFieldsInput & {
    workspace_id: string;
    repository_id: string;
    created_by: string;
  },
): Promise<AuditProfileRow> {
  const [row] = await db<AuditProfileRow>('audit_profiles')
    .insert({
      id: crypto.randomUUID(),
      ...input,
      source_scope: jsonOrNull(input.source_scope) as never,
    })
    .returning('*');
  return row!;
}

/** A live profile of the workspace. */
export async function findAuditProfile(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<AuditProfileRow | undefined> {
  return db<AuditProfileRow>('audit_profiles')
    .where({ workspace_id: workspaceId, id })
    .whereNull('deleted_at')
    .first();
}

export async function findAuditProfileByName(
  db: Knex,
  repositoryId: string,
  name: string,
): Promise<AuditProfileRow | undefined> {
  return db<AuditProfileRow>('audit_profiles')
    .where({ repository_id: repositoryId })
    .whereRaw('lower(name) = lower(?)', [name])
    .whereNull('deleted_at')
    .first();
}

/** Live profiles of one repository (for keyset pagination). */
export function auditProfilesQuery(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Keyset<AuditProfileRow> {
  return keyset(
    db('audit_profiles')
      .select('audit_profiles.*')
      .where({
        'audit_profiles.workspace_id': workspaceId,
        'audit_profiles.repository_id': repositoryId,
      })
      .whereNull('audit_profiles.deleted_at'),
    'audit_profiles',
  );
}

/**
 * Replaces a profile's fields when its version is still `expectedVersion`, bumping the version.
 * One statement: of two concurrent updates with the same expected version, the second
 * re-checks the row after the first commits and matches nothing.
 */
export async function replaceAuditProfile(
  db: Knex,
  workspaceId: string,
  id: string,
  expectedVersion: number,
  fields: AuditProfileFieldsInput,
): Promise<AuditProfileRow | undefined> {
  const [row] = await db<AuditProfileRow>('audit_profiles')
    .where({ workspace_id: workspaceId, id, version: expectedVersion })
    .whereNull('deleted_at')
    .update({
      ...fields,
      source_scope: jsonOrNull(fields.source_scope) as never,
      version: db.raw('version + 1') as never,
      updated_at: db.raw(NOW) as never,
    })
    .returning('*');
  return row;
}

export async function softDeleteAuditProfile(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<AuditProfileRow | undefined> {
  const [row] = await db<AuditProfileRow>('audit_profiles')
    .where({ workspace_id: workspaceId, id })
    .whereNull('deleted_at')
    .update({ deleted_at: db.raw(NOW) as never })
    .returning('*');
  return row;
}
