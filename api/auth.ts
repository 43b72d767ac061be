/**
 * Bearer-token authentication. Verified tokens are cached per process for `authCacheTtlMs`
 * (a revocation made through this process evicts at once; other processes see it within the
 * TTL). Expiry is checked on every request against the clock, never cached.
 */
import type { Knex } from 'knex';
import { findTokenByPrefix, touchToken, type TokenWithMember } from '../db/tokens';
import { parseToken, sha256Hex, digestsMatch } from '../domain/tokens/rules';
import { problems, type ApiError } from './errors';
import type { Principal } from './registry/operation';
import type { Logger } from '../platform/logger';
import type { ScopeName } from '../domain/contract/values';

interface CacheEntry {
  row: TokenWithMember;
  /** Made once per fetch: requests answered from the cache share it (it is never mutated). */
  principal: Principal;
  fetchedAt: number;
}

export type AuthResult = { ok: true; principal: Principal } | { ok: false; error: ApiError };

export class TokenAuthenticator {
  private cache = new Map<string, CacheEntry>();
  private lastTouched = new Map<string, number>();

  constructor(
    private readonly db: Knex,
    private readonly ttlMs: number,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Checks an Authorization header value; never throws for bad credentials. */
  async authenticate(header: string | undefined): Promise<AuthResult | null> {
    if (header === undefined || header === '') return null;
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!match) {
      return {
        ok: false,
        error: problems.invalidToken(
          'The Authorization header is not of the form `Bearer <token>`.',
        ),
      };
    }
    const parsed = parseToken(match[1]!);
    if (!parsed)
      return { ok: false, error: problems.invalidToken('The bearer token is malformed.') };

    const digest = sha256Hex(parsed.secret);
    const entry = await this.lookup(parsed.prefix, digest);
    if (!entry) {
      return { ok: false, error: problems.invalidToken('The bearer token is not recognised.') };
    }
    const { row } = entry;
    if (row.revoked_at) {
      return {
        ok: false,
        error: problems.invalidToken(`The token ${row.prefix} has been revoked.`),
      };
    }
    if (row.expires_at.getTime() <= this.now()) {
      return {
        ok: false,
        error: problems.invalidToken(
          `The token ${row.prefix} expired at ${row.expires_at.toISOString()}.`,
        ),
      };
    }
    this.touch(row.id);
    return { ok: true, principal: entry.principal };
  }

  /** Drops a token from this process's cache (after revocation). */
  evict(prefix: string): void {
    for (const key of this.cache.keys()) if (key.startsWith(`${prefix}:`)) this.cache.delete(key);
  }

  /**
   * The token row whose stored digest matches, or undefined. The cache is keyed by prefix and
   * digest together, so only a request presenting the right secret is answered from it, and no
   * secret-dependent comparison happens outside timingSafeEqual.
   */
  private async lookup(prefix: string, digest: string): Promise<CacheEntry | undefined> {
    const key = `${prefix}:${digest}`;
    const cached = this.cache.get(key);
    if (cached && this.now() - cached.fetchedAt < this.ttlMs) return cached;
    const row = await findTokenByPrefix(this.db, prefix);
    if (!row || !digestsMatch(digest, row.secret_sha256)) return undefined;
    const entry: CacheEntry = { row, principal: principalOf(row), fetchedAt: this.now() };
    if (this.ttlMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(key, entry);
    }
    return entry;
  }

  private touch(tokenId: string): void {
    const now = this.now();
    if (now - (this.lastTouched.get(tokenId) ?? 0) < 60_000) return;
    this.lastTouched.set(tokenId, now);
    touchToken(this.db, tokenId).catch((err: unknown) =>
      this.log.warn({ err }, 'could not record token use'),
    );
  }
}

function principalOf(row: TokenWithMember): Principal {
  return {
    tokenId: row.id,
    prefix: row.prefix,
    workspaceId: row.workspace_id,
    memberId: row.member_id,
    memberLogin: row.member_login,
    scopes: new Set(row.scopes as ScopeName[]),
    expiresAt: row.expires_at,
    workspace: {
      id: row.workspace_id,
      name: row.workspace_name,
      slug: row.workspace_slug,
      createdAt: row.workspace_created_at.toISOString(),
      updatedAt: row.workspace_updated_at.toISOString(),
    },
  };
}
