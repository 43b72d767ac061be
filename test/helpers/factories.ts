/** Test data: each test makes its own workspace, member and token, so tests never share state. */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { createWorkspaceWithOwner, issueToken } from '../../platform/bootstrap';
import { SCOPES, type ScopeName } from '../../domain/contract/values';
import { insertSnapshot } from '../../db/architecture';
import { createAuditRecord, updateAudit } from '../../db/audits';

export interface Tenant {
  workspaceId: string;
  slug: string;
  memberId: string;
  token: string;
  tokenId: string;
  prefix: string;
}

/**
 * The LOCAL_REPOSITORY_WORKSPACES entry naming every tenant createTenant makes (their slugs start
 * with `ws-`); a tenant made with another `slugPrefix` is not named by it.
 */
export const LOCAL_TEST_WORKSPACES = 'ws-*';

export async function createTenant(
  db: Knex,
  options: {
    scopes?: readonly ScopeName[];
    days?: number;
    login?: string;
    /** Default `ws-` (see LOCAL_TEST_WORKSPACES). */
    slugPrefix?: string;
  } = {},
): Promise<Tenant> {
  const slug = `${options.slugPrefix ?? 'ws-'}${crypto.randomBytes(5).toString('hex')}`;
  const made = await createWorkspaceWithOwner(db, {
    name: `Workspace ${slug}`,
    slug,
    login: options.login ?? 'owner',
    scopes: options.scopes ?? SCOPES,
    days: options.days ?? 90,
  });
  return {
    workspaceId: made.workspace.id,
    slug,
    memberId: made.member.id,
    token: made.token.token,
    tokenId: made.token.id,
    prefix: made.token.prefix,
  };
}

/** Another token for the same member, with the given scopes. */
export async function createToken(
  db: Knex,
  tenant: Tenant,
  scopes: readonly ScopeName[],
  days = 30,
) {
  return issueToken(db, {
    workspaceId: tenant.workspaceId,
    memberId: tenant.memberId,
    name: 'extra',
    scopes,
    days,
  });
}

/**
 * A queued audit of `repositoryId` stored directly, with no workflow: what a crash between the
 * API's commit and its workflow start leaves (the test decides what happens next).
 */
export async function queuedAudit(db: Knex, tenant: Tenant, repositoryId: string) {
  return createAuditRecord(
    db,
    {
      workspace_id: tenant.workspaceId,
      repository_id: repositoryId,
      upload_id: null,
      created_by: tenant.memberId,
      audit_type: 'repository',
      branch_ref: null,
      commit_sha: null,
      deep_review: false,
      source_scope: {},
      origin: 'manual',
      origin_ref: null,
      trigger_reason: null,
      profile_snapshot: null,
    },
    { actorId: tenant.memberId, actorLogin: 'owner', tokenId: null, requestId: null },
  );
}

/**
 * A completed audit of `repositoryId` with an empty architecture snapshot, stored directly: what
 * report and export operations need, for tests that run no worker.
 */
export async function completedAudit(db: Knex, tenant: Tenant, repositoryId: string) {
  const audit = await queuedAudit(db, tenant, repositoryId);
  await updateAudit(db, audit.id, { status: 'completed', completed_at: new Date() });
  await insertSnapshot(db, {
    id: crypto.randomUUID(),
    audit_id: audit.id,
    workspace_id: tenant.workspaceId,
    repository_id: repositoryId,
    version: '1',
    status: 'complete',
    sources: [],
    missing_sources: [],
    source_coverage: '0.0000',
    entity_count: 0,
    relationship_count: 0,
    entities: [],
    relationships: [],
    generated_at: new Date().toISOString(),
  });
  return audit;
}
