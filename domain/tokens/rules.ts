/**
 * API token text: `aat_<prefix>_<secret>`. The prefix (12 lowercase alphanumerics) identifies
 * the token and is shown in listings; only the SHA-256 of the secret is stored, and checks
 * compare digests in constant time. And what a token may grant: never more than its creator.
 */
import crypto from 'node:crypto';

const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const TOKEN_PATTERN = /^aat_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export interface NewToken {
  /** Visible identifier, `aat_<12 chars>`. */
  prefix: string;
  /** The full token text, shown once. */
  token: string;
  secretSha256: string;
}

function randomPrefix(): string {
  const bytes = crypto.randomBytes(12);
  return Array.from(bytes, (b) => PREFIX_ALPHABET[b % PREFIX_ALPHABET.length]).join('');
}

/** SHA-256 (hex) of UTF-8 text; one-shot `crypto.hash` (no Hash object: this runs per request). */
export function sha256Hex(text: string): string {
  return crypto.hash('sha256', text, 'hex');
}

export function generateToken(): NewToken {
  const id = randomPrefix();
  const secret = crypto.randomBytes(32).toString('base64url');
  return { prefix: `aat_${id}`, token: `aat_${id}_${secret}`, secretSha256: sha256Hex(secret) };
}

/** Splits token text into its prefix and secret; null when it is not shaped like a token. */
export function parseToken(text: string): { prefix: string; secret: string } | null {
  const m = TOKEN_PATTERN.exec(text);
  return m ? { prefix: `aat_${m[1]}`, secret: m[2]! } : null;
}

/**
 * Whether `text` holds token text anywhere, whole or cut short after the prefix (the CLI refuses
 * such an argument: arguments land in shell history, process lists and CI logs).
 */
export function containsTokenText(text: string): boolean {
  return /aat_[a-z0-9]{12}_[A-Za-z0-9_-]/.test(text);
}

/** Constant-time comparison of two hex SHA-256 digests. */
export function digestsMatch(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** Constant-time comparison of a presented secret with a stored digest. */
export function secretMatches(secret: string, storedSha256Hex: string): boolean {
  return digestsMatch(sha256Hex(secret), storedSha256Hex);
}

/** Longest lifetime a token may be given: a year, and a day for a leap year. */
export const MAX_TOKEN_DAYS = 366;

/** The scopes among `needed` that `held` lacks. */
export function scopesLacking(held: ReadonlySet<string>, needed: readonly string[]): string[] {
  return needed.filter((s) => !held.has(s));
}

/** Why a token may not be created as asked. */
export type GrantRefusal =
  | { code: 'expiry_not_in_future' }
  | { code: 'expiry_too_far' }
  | { code: 'scopes_not_held'; missing: string[] }
  | { code: 'expiry_exceeds_creator' };

/**
 * A new token cannot escalate: it expires in the future but at most MAX_TOKEN_DAYS ahead, grants
 * only scopes its creator's token holds, and expires no later than that token. Null when it may
 * be created.
 */
export function grantRefusal(
  grant: { scopes: readonly string[]; expiresAt: Date },
  creator: { scopes: ReadonlySet<string>; expiresAt: Date },
  now: number,
): GrantRefusal | null {
  if (grant.expiresAt.getTime() <= now) return { code: 'expiry_not_in_future' };
  if (grant.expiresAt.getTime() > now + MAX_TOKEN_DAYS * 86_400_000)
    return { code: 'expiry_too_far' };
  const missing = scopesLacking(creator.scopes, grant.scopes);
  if (missing.length > 0) return { code: 'scopes_not_held', missing };
  if (grant.expiresAt.getTime() > creator.expiresAt.getTime())
    return { code: 'expiry_exceeds_creator' };
  return null;
}
