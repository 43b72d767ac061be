/** Test data: each test makes its own workspace, member and token, so tests never share state. */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { createWorkspaceWithOwner, issueToken } from '../../platform/bootstrap';
import { SCOPES, type ScopeName } from '../../domain/contract/values';

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
