/**
 * Audit profiles: named, versioned audit settings (branch and source scope) of a repository.
 * Updates replace the whole profile and carry `expected_version` (optimistic concurrency);
 * createAudit with `profile_id` runs with them and keeps a snapshot on the audit.
 */
import type { Knex } from 'knex';
import {
  auditProfilesQuery,
  findAuditProfile,
  findAuditProfileByName,
  insertAuditProfile,
  replaceAuditProfile,
  softDeleteAuditProfile,
  type AuditProfileFieldsInput,
  type AuditProfileRow,
} from '../../db/profiles';
import { findRepository } from '../../db/repositories';
import { refNameProblem } from '../../domain/repositories/git-ref';
import { problems } from '../errors';
import { defineOperation, created, ok, operationGroup, route } from '../registry/operation';
import { RepositoryParams } from '../repositories/schemas';
import { PageQuery } from '../schema-kit';
import { presentAuditProfile } from './present';
import {
  AuditProfileFields,
  AuditProfilePage,
  AuditProfileParams,
  AuditProfileResponse,
  AuditProfileUpdate,
} from './schemas';
import { found, listOperation, versionMismatch, recordedWrite } from '../registry/parts';

/** What an audit keeps of the profile it ran with: the profile as it was at that moment. */
export function profileSnapshot(row: AuditProfileRow): Record<string, unknown> {
  return {
    id: row.id,
    version: row.version,
    name: row.name,
    branch_ref: row.branch_ref,
    source_scope: row.source_scope,
    purpose: row.purpose,
  };
}

function fieldsOf(body: AuditProfileFields | AuditProfileUpdate): AuditProfileFieldsInput {
  const refProblem = refNameProblem(body.branch_ref);
  if (refProblem) {
    throw problems.validationFailed([{ in: 'body', path: '/branch_ref', message: refProblem }]);
  }
  return {
    name: body.name,
    branch_ref: body.branch_ref,
    purpose: body.purpose ?? '',
    source_scope: (body.source_scope as Record<string, unknown> | undefined) ?? null,
  };
}

async function assertNameFree(
  db: Knex,
  repositoryId: string,
  name: string,
  exceptId?: string,
): Promise<void> {
  const existing = await findAuditProfileByName(db, repositoryId, name);
  if (existing && existing.id !== exceptId) {
    throw problems.conflict(
      'conflict',
      `The repository already has an audit profile named ${JSON.stringify(name)}.`,
      'Choose another name, or update that profile.',
      { profile_id: existing.id },
    );
  }
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

const PROFILES = operationGroup('Profiles');

export const listAuditProfiles = listOperation({
  operationId: 'listAuditProfiles',
  ...route.get('/v1/workspaces/{workspace_id}/repositories/{repository_id}/audit-profiles'),
  summary: "List a repository's audit profiles",
  ...PROFILES.scope('audits:read'),
  params: RepositoryParams,
  query: PageQuery,
  success: ok('A page of audit profiles, newest first.', AuditProfilePage),
  rows: async ({ db, params }) => {
    if (!(await findRepository(db, params.workspace_id, params.repository_id)))
      throw problems.notFound(`Repository ${params.repository_id}`);
    return auditProfilesQuery(db, params.workspace_id, params.repository_id);
  },
  present: presentAuditProfile,
});

export const createAuditProfile = defineOperation({
  operationId: 'createAuditProfile',
  ...route.post('/v1/workspaces/{workspace_id}/repositories/{repository_id}/audit-profiles'),
  summary: 'Create an audit profile',
  description:
    'A named set of audit settings (branch_ref, source_scope, purpose) for the repository; names are unique per repository (case-insensitive, 409 conflict). Start an audit with it through createAudit `profile_id`.',
  ...PROFILES.scope('audits:write'),
  params: RepositoryParams,
  body: AuditProfileFields,
  errors: [409],
  success: created('The new profile (version 1).', AuditProfileResponse),
  handler: async ({ db, params, body, principal, requestId, koa }) => {
    const fields = fieldsOf(body);
    const row = await db
      .transaction(async (trx) => {
        if (!(await findRepository(trx, params.workspace_id, params.repository_id)))
          throw problems.notFound(`Repository ${params.repository_id}`);
        await assertNameFree(trx, params.repository_id, fields.name);
        const created = await insertAuditProfile(trx, {
          ...fields,
          workspace_id: params.workspace_id,
          repository_id: params.repository_id,
          created_by: principal.memberId,
        });
        return recordedWrite(trx, principal, requestId, created, {
          action: 'audit_profile.created',
          details: { repository_id: created.repository_id, ...profileSnapshot(created) },
        });
      })
      .catch(async (err: unknown) => {
        if (isUniqueViolation(err)) await assertNameFree(db, params.repository_id, fields.name);
        throw err;
      });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/audit-profiles/${row.id}`);
    return presentAuditProfile(row);
  },
});

export const getAuditProfile = defineOperation({
  operationId: 'getAuditProfile',
  ...route.get('/v1/workspaces/{workspace_id}/audit-profiles/{profile_id}'),
  summary: 'Get an audit profile',
  ...PROFILES.scope('audits:read'),
  params: AuditProfileParams,
  success: ok('The profile.', AuditProfileResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findAuditProfile(db, params.workspace_id, params.profile_id),
      `Audit profile ${params.profile_id}`,
    );
    return presentAuditProfile(row);
  },
});

export const updateAuditProfile = defineOperation({
  operationId: 'updateAuditProfile',
  ...route.put('/v1/workspaces/{workspace_id}/audit-profiles/{profile_id}'),
  summary: 'Replace an audit profile',
  description:
    'Replaces every field (an omitted purpose becomes empty, an omitted source_scope is removed) and increments `version`. `expected_version` must be the current version: otherwise 409 version_mismatch (with current_version) and nothing changes. Of two concurrent updates with the same expected_version exactly one succeeds. Audits already run keep the snapshot of the version they used.',
  ...PROFILES.scope('audits:write'),
  params: AuditProfileParams,
  body: AuditProfileUpdate,
  errors: [409],
  success: ok('The profile as replaced.', AuditProfileResponse),
  handler: async ({ db, params, body, principal, requestId }) => {
    const fields = fieldsOf(body);
    const update = async (trx: Knex) => {
      const before = await found(
        findAuditProfile(trx, params.workspace_id, params.profile_id),
        `Audit profile ${params.profile_id}`,
      );
      await assertNameFree(trx, before.repository_id, fields.name, before.id);
      const after = await replaceAuditProfile(
        trx,
        params.workspace_id,
        params.profile_id,
        body.expected_version,
        fields,
      );
      if (!after) {
        const current = await found(
          findAuditProfile(trx, params.workspace_id, params.profile_id),
          `Audit profile ${params.profile_id}`,
        );
        throw profileVersionMismatch(current, body.expected_version);
      }
      return recordedWrite(trx, principal, requestId, after, {
        action: 'audit_profile.updated',
        details: { before: profileSnapshot(before), after: profileSnapshot(after) },
      });
    };
    const row = await db.transaction(update).catch(async (err: unknown) => {
      if (isUniqueViolation(err)) {
        const current = await findAuditProfile(db, params.workspace_id, params.profile_id);
        if (current) await assertNameFree(db, current.repository_id, fields.name, current.id);
      }
      throw err;
    });
    return presentAuditProfile(row);
  },
});

/** 409 version_mismatch for a profile whose version is not the one the client named. */
export function profileVersionMismatch(current: AuditProfileRow, expected: number) {
  return versionMismatch('audit profile', current.version, expected, 'getAuditProfile');
}

export const deleteAuditProfile = defineOperation({
  operationId: 'deleteAuditProfile',
  ...route.delete('/v1/workspaces/{workspace_id}/audit-profiles/{profile_id}'),
  summary: 'Delete an audit profile',
  description:
    'The profile disappears from reads and can no longer start audits; its name is free again. Audits that ran with it keep their profile_snapshot.',
  ...PROFILES.scope('audits:write'),
  params: AuditProfileParams,
  success: ok('The deleted profile as it was.', AuditProfileResponse),
  handler: async ({ db, params, principal, requestId }) => {
    const row = await db.transaction(async (trx) => {
      const deleted = await found(
        softDeleteAuditProfile(trx, params.workspace_id, params.profile_id),
        `Audit profile ${params.profile_id}`,
      );
      return recordedWrite(trx, principal, requestId, deleted, {
        action: 'audit_profile.deleted',
        details: { repository_id: deleted.repository_id, name: deleted.name },
      });
    });
    return presentAuditProfile(row);
  },
});
