/**
 * Bearer-token authentication. Verified tokens are cached per process for `authCacheTtlMs`
 * (a revocation made through this process evicts at once; other processes see it within the
 * TTL). Expiry is checked on every request against the clock, never cached.
 */
import type { Knex } from 'knex';
import { findTokenByPrefix, touchToken, type TokenWithMember } from '../db/store/tokens';
import { parseToken, secretMatches } from '../domain/tokens';
import { problems, type ApiError } from './errors';
import type { Principal } from './registry/operation';
import type { ScopeName } from './schemas/spec';
import type { Logger } from '../platform/logger';

interface CacheEntry {
  row: TokenWithMember;
  secret: string;
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

    const row = await this.lookup(parsed.prefix, parsed.secret);
    if (!row || !secretMatches(parsed.secret, row.secret_sha256)) {
      return { ok: false, error: problems.invalidToken('The bearer token is not recognised.') };
    }
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
    return {
      ok: true,
      principal: {
        tokenId: row.id,
        prefix: row.prefix,
        workspaceId: row.workspace_id,
        memberId: row.member_id,
        memberLogin: row.member_login,
        scopes: new Set(row.scopes as ScopeName[]),
        expiresAt: row.expires_at,
      },
    };
  }

  /** Drops a token from this process's cache (after revocation). */
  evict(prefix: string): void {
    this.cache.delete(prefix);
  }

  private async lookup(prefix: string, secret: string): Promise<TokenWithMember | undefined> {
    const cached = this.cache.get(prefix);
    // Only a request that presented the same secret may be answered from the cache.
    if (cached && cached.secret === secret && this.now() - cached.fetchedAt < this.ttlMs)
      return cached.row;
    const row = await findTokenByPrefix(this.db, prefix);
    if (row && this.ttlMs > 0 && secretMatches(secret, row.secret_sha256)) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(prefix, { row, secret, fetchedAt: this.now() });
    }
    return row;
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
