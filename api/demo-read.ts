/**
 * The zero-auth demo (DEMO_PUBLIC_READ, on in `npm start` only): a request without any
 * Authorization header that GETs something of the workspace with slug `demo` acts as an
 * anonymous, read-only principal of that workspace. Nothing else changes: other workspaces, other
 * methods and operations that are not a plain read still need a token, and the anonymous reads
 * have a per-IP quota of their own (DEMO_PUBLIC_READ_QUOTA).
 */
import type { Knex } from 'knex';
import { findWorkspaceBySlug } from '../db/workspaces';
import { SCOPES, type ScopeName } from '../domain/contract/values';
import type { Config } from '../platform/config';
import type { Principal } from './registry/operation';
import { RateLimiter } from './rate-limit';

/** The demo workspace's slug (platform/bootstrap.ts ensureDemo makes it). */
export const DEMO_SLUG = 'demo';

/** Every read scope but members:read (members, tokens and the audit trail name people). */
const READ_SCOPES: ReadonlySet<ScopeName> = new Set(
  SCOPES.filter((s) => s.endsWith(':read') && s !== 'members:read'),
);

export class DemoReadAccess {
  readonly limiter: RateLimiter;
  private principal: Principal | null = null;

  constructor(
    private readonly db: Knex,
    config: Config,
  ) {
    this.limiter = new RateLimiter(config.demoPublicReadQuota, config.rateLimitWindowSeconds);
  }

  /**
   * The anonymous principal when this request may read the demo workspace without a token:
   * GET or HEAD of `/v1/workspaces/<demo id>` or below. Null otherwise.
   */
  async principalFor(method: string, path: string): Promise<Principal | null> {
    if (method !== 'GET' && method !== 'HEAD') return null;
    const segments = path.split('/');
    if (segments[1] !== 'v1' || segments[2] !== 'workspaces' || !segments[3]) return null;
    const principal = await this.demoPrincipal();
    return principal !== null && segments[3] === principal.workspaceId ? principal : null;
  }

  /** Found once per process (a workspace's id never changes); until then, looked up. */
  private async demoPrincipal(): Promise<Principal | null> {
    if (this.principal) return this.principal;
    const row = await findWorkspaceBySlug(this.db, DEMO_SLUG);
    if (!row) return null;
    this.principal = {
      tokenId: 'anonymous',
      prefix: 'anonymous',
      workspaceId: row.id,
      memberId: 'anonymous',
      memberLogin: 'anonymous',
      scopes: READ_SCOPES,
      expiresAt: new Date(8.64e15),
      anonymous: true,
      workspace: {
        id: row.id,
        name: row.name,
        slug: row.slug,
        createdAt: row.created_at.toISOString(),
        updatedAt: row.updated_at.toISOString(),
      },
    };
    return this.principal;
  }
}
