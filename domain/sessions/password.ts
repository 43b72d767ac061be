/**
 * Member passwords: scrypt (memory-hard, in node:crypto) with a per-password random salt. The
 * stored text carries its parameters, `scrypt$N$r$p$<salt>$<hash>` (base64url), so they can be
 * raised later without invalidating older hashes. Comparison is constant-time.
 */
import crypto from 'node:crypto';

/** 2^15 x 8 x 128 B = 32 MiB per hash: OWASP's scrypt floor is N=2^17 at r=8 with p=1, or this
 * cost and p=3; we take N=2^15, r=8, p=3 which keeps a sign-in under ~150 ms on one core. */
const PARAMS = { N: 32768, r: 8, p: 3 } as const;
const KEY_LENGTH = 32;
const MAX_MEM = 128 * 1024 * 1024;

/** Shortest password `set-password` accepts. */
export const MIN_PASSWORD_LENGTH = 12;
/** Longest accepted (scrypt hashes any length; this bounds the work an attacker can ask for). */
export const MAX_PASSWORD_LENGTH = 1024;

function derive(
  password: string,
  salt: Buffer,
  params: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    crypto.scrypt(
      password.normalize('NFKC'),
      salt,
      KEY_LENGTH,
      { ...params, maxmem: MAX_MEM },
      (err, key) => (err ? reject(err) : resolve(key)),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return [
    'scrypt',
    PARAMS.N,
    PARAMS.r,
    PARAMS.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

/** A stored hash of a random password: checked when a login has none, so timing tells nothing. */
const DECOY = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${crypto.randomBytes(16).toString('base64url')}$${crypto.randomBytes(KEY_LENGTH).toString('base64url')}`;

/** Whether `password` matches `stored` (null: no credential; still costs one scrypt). */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? DECOY).split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password.slice(0, MAX_PASSWORD_LENGTH), Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return stored !== null && key.length === expected.length && crypto.timingSafeEqual(key, expected);
}

/** A random password for the demo and for `set-password` without one: 20 base64url characters. */
export function generatePassword(): string {
  return crypto.randomBytes(15).toString('base64url');
}
