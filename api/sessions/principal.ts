/**
 * The member session on /v1 (the console's credential): a request without an Authorization
 * header that carries a live session cookie acts as the signed-in member, with the scopes of
 * that member's role (domain/tokens/roles.ts), in the workspace the path names (or, for a path
 * naming none, the first of the member's workspaces by name). Tokens are unchanged: a request
 * with an Authorization header is never read as a session.
 *
 * Every unsafe method made with a session must carry `X-CSRF-Token`, the signed double-submit
 * token of this browser (MemberSessions.csrfToken, read through getCurrentCaller); without it the
 * request is refused with 403 `csrf_token_missing` / `csrf_token_invalid` before anything runs.
 */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { membershipsOf } from '../../db/sessions';
import { roleScopes } from '../../domain/tokens/roles';
import { ApiError } from '../errors';
import type { Principal } from '../registry/operation';
import type { MemberSessions } from './manager';

/** The header carrying the CSRF token on unsafe /v1 calls made with a session. */
export const CSRF_HEADER = 'X-CSRF-Token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A session has no expiry of its own authority: tokens it creates are bounded by MAX_TOKEN_DAYS. */
const NO_EXPIRY = new Date(8.64e15);

export class SessionPrincipals {
  constructor(
    private readonly db: Knex,
    private readonly sessions: MemberSessions,
  ) {}

  /** The session principal of this request, or null when it carries no live session. */
  async principalFor(ctx: Context): Promise<Principal | null> {
    const session = await this.sessions.current(ctx);
    if (!session) return null;
    const memberships = await membershipsOf(this.db, session.login);
    if (memberships.length === 0) return null;
    const named = /^\/v1\/workspaces\/([^/]+)/.exec(ctx.path)?.[1];
    const member = memberships.find((m) => m.workspace_id === named) ?? memberships[0]!;
    const summary = (w: (typeof memberships)[number]['workspace']) => ({
      id: w.id,
      name: w.name,
      slug: w.slug,
      createdAt: w.created_at.toISOString(),
      updatedAt: w.updated_at.toISOString(),
    });
    return {
      tokenId: `session:${session.id}`,
      prefix: 'session',
      workspaceId: member.workspace_id,
      memberId: member.id,
      memberLogin: member.login,
      scopes: new Set(roleScopes(member.role)),
      expiresAt: NO_EXPIRY,
      workspace: summary(member.workspace),
      session: {
        id: session.id,
        role: member.role,
        expiresAt: session.expires_at,
        workspaces: memberships.map((m) => ({ ...summary(m.workspace), role: m.role })),
      },
    };
  }

  /**
   * Refuses an unsafe method made with a session whose X-CSRF-Token is missing or does not match
   * this browser's CSRF cookie. Safe methods pass.
   */
  async checkCsrf(ctx: Context): Promise<void> {
    if (SAFE_METHODS.has(ctx.method)) return;
    const given = ctx.get(CSRF_HEADER);
    if (!given) {
      throw csrfRefused(
        'csrf_token_missing',
        `A ${ctx.method} made with a session cookie must carry the ${CSRF_HEADER} header.`,
      );
    }
    if (!(await this.sessions.csrfValid(ctx, given))) {
      throw csrfRefused(
        'csrf_token_invalid',
        `The ${CSRF_HEADER} header does not match this browser's session.`,
      );
    }
  }
}

function csrfRefused(code: string, detail: string): ApiError {
  return new ApiError({
    status: 403,
    code,
    title: 'CSRF token required',
    detail,
    hint: `Read csrf_token from GET /v1/caller and send it as ${CSRF_HEADER} on every write; or use an API token.`,
  });
}
