/**
 * The customer session: members sign in with their login and password on a server-rendered
 * page; a session is a row (SHA-256 of the cookie's secret, expiry, sign-out time) and an
 * HttpOnly, SameSite=Lax cookie, Secure when PUBLIC_BASE_URL is https. Every form carries a
 * CSRF token: an HMAC of a per-browser random cookie (signed double submit). Failed sign-ins
 * are throttled per login-and-address and per address, with backoff (throttle.ts).
 */
import crypto from 'node:crypto';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { Knex } from 'knex';
import {
  endSession,
  insertSession,
  liveSession,
  passwordHashOf,
  type SessionRow,
} from '../../db/sessions';
import { verifyPassword, MAX_PASSWORD_LENGTH } from '../../domain/sessions/password';
import { UNSTORABLE_TEXT } from '../../domain/text';
import { sha256Hex } from '../../domain/tokens/rules';
import type { Config } from '../../platform/config';
import { SignInThrottle } from './throttle';

const FORM_LIMIT = 16 * 1024;
const LOGIN_WINDOW_SECONDS = 900;

export type SignInResult =
  | { ok: true; session: SessionRow }
  | { ok: false; reason: 'invalid' | 'rate_limited'; retryAfterSeconds?: number };

export class MemberSessions {
  private readonly throttle: SignInThrottle;
  readonly secure: boolean;

  constructor(
    private readonly db: Knex,
    private readonly config: Config,
    /** The HMAC key of CSRF tokens (one of the installation's cookie keys). */
    private readonly csrfKey: () => Promise<string>,
  ) {
    this.throttle = new SignInThrottle(config.loginRateLimit, LOGIN_WINDOW_SECONDS);
    this.secure = (config.publicBaseUrl ?? '').startsWith('https:');
  }

  /** `__Host-` cookies are bound to this origin; the prefix needs Secure, so plain http omits it. */
  private name(base: string): string {
    return this.secure ? `__Host-${base}` : base;
  }

  private setCookie(ctx: Context, base: string, value: string | null, maxAgeMs?: number): void {
    // Behind a TLS-terminating proxy without TRUST_PROXY Koa thinks the request is plain http.
    if (this.secure) ctx.cookies.secure = true;
    ctx.cookies.set(this.name(base), value, {
      httpOnly: true,
      sameSite: 'lax',
      secure: this.secure,
      path: '/',
      overwrite: true,
      signed: false,
      ...(maxAgeMs !== undefined ? { maxAge: maxAgeMs } : {}),
    });
  }

  /** The CSRF token for forms on this page (sets the browser's CSRF cookie when it has none). */
  async csrfToken(ctx: Context): Promise<string> {
    let seed = ctx.cookies.get(this.name('aa_csrf'));
    if (!seed || !/^[A-Za-z0-9_-]{43}$/.test(seed)) {
      seed = crypto.randomBytes(32).toString('base64url');
      this.setCookie(ctx, 'aa_csrf', seed);
    }
    return crypto
      .createHmac('sha256', await this.csrfKey())
      .update(seed)
      .digest('base64url');
  }

  /** Whether a submitted token matches this browser's CSRF cookie. */
  async csrfValid(ctx: Context, token: unknown): Promise<boolean> {
    const seed = ctx.cookies.get(this.name('aa_csrf'));
    if (!seed || typeof token !== 'string') return false;
    const expected = crypto
      .createHmac('sha256', await this.csrfKey())
      .update(seed)
      .digest();
    const given = Buffer.from(token, 'base64url');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  }

  async readForm(ctx: Context): Promise<URLSearchParams> {
    if (!ctx.is('application/x-www-form-urlencoded')) return new URLSearchParams();
    const text = await getRawBody(ctx.req, { limit: FORM_LIMIT, encoding: 'utf8' });
    return new URLSearchParams(text);
  }

  /** The signed-in session of this request, if any. */
  async current(ctx: Context): Promise<SessionRow | undefined> {
    const secret = ctx.cookies.get(this.name('aa_session'));
    if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
    return liveSession(this.db, sha256Hex(secret));
  }

  async signIn(ctx: Context, login: string, password: string): Promise<SignInResult> {
    const wait = this.throttle.waitSeconds(login, ctx.ip);
    if (wait > 0) return { ok: false, reason: 'rate_limited', retryAfterSeconds: wait };
    // A login PostgreSQL cannot hold (NUL, lone surrogate) is nobody's: a wrong login, not a 500.
    const stored =
      login.length > 0 && login.length <= 200 && !UNSTORABLE_TEXT.test(login)
        ? await passwordHashOf(this.db, login)
        : null;
    const ok = password.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(password, stored));
    if (!ok) {
      this.throttle.failed(login, ctx.ip);
      return { ok: false, reason: 'invalid' };
    }
    this.throttle.succeeded(login, ctx.ip);
    const secret = crypto.randomBytes(32).toString('base64url');
    const ttlMs = this.config.sessionTtlHours * 3_600_000;
    const session = await insertSession(this.db, {
      secretSha256: sha256Hex(secret),
      login,
      ip: ctx.ip,
      userAgent: ctx.get('User-Agent'),
      expiresAt: new Date(Date.now() + ttlMs),
    });
    this.setCookie(ctx, 'aa_session', secret, ttlMs);
    return { ok: true, session };
  }

  async signOut(ctx: Context): Promise<void> {
    const session = await this.current(ctx);
    if (session) await endSession(this.db, session.id);
    this.setCookie(ctx, 'aa_session', null);
  }
}

/** A same-site path to return to after sign-in (never another origin: no open redirect). */
export function safeReturnTo(value: string | null | undefined): string {
  // Visible ASCII only (browsers drop tabs and newlines, so `/\t/evil` would become `//evil`),
  // a path, and not protocol-relative.
  if (!value || !/^\/(?![/\\])[\x21-\x7e]*$/.test(value) || value.includes('\\')) return '/session';
  return value;
}
