/**
 * Secrets at rest: an integration's token and webhook secret are sealed with AES-256-GCM under a
 * key from configuration (INTEGRATION_SECRET_KEYS, newest first) before they reach the database.
 * A sealed value names its key by a short id, so a value sealed under an older key still opens
 * after the list is rotated; the integration's id is the additional authenticated data, so a
 * sealed value copied onto another integration's row does not open there.
 */
import crypto from 'node:crypto';

const VERSION = 'v1';

/** The sealing context of an integration's secret: the integration and which secret it is. */
export const sealContext = (integrationId: string, which: 'token' | 'webhook_secret'): string =>
  `integration:${integrationId}:${which}`;

interface Key {
  id: string;
  bytes: Buffer;
}

function keyOf(secret: string): Key {
  const bytes = crypto.createHash('sha256').update(secret, 'utf8').digest();
  const id = crypto.createHash('sha256').update(bytes).update('key-id').digest('hex').slice(0, 8);
  return { id, bytes };
}

export class SecretBox {
  private readonly keys: Key[];

  /** `secrets`: the configured keys, newest first; empty: nothing can be sealed. */
  constructor(secrets: readonly string[]) {
    this.keys = secrets.map(keyOf);
  }

  get configured(): boolean {
    return this.keys.length > 0;
  }

  /** `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts) under the newest key. */
  seal(plaintext: string, context: string): string {
    const key = this.keys[0];
    if (!key) throw new Error('no INTEGRATION_SECRET_KEYS configured');
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', key.bytes, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, key.id, iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /** The plaintext of a sealed value; throws when no configured key opens it. */
  open(sealed: string, context: string): string {
    const [version, id, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !id || !iv || !tag || body === undefined)
      throw new Error('not a sealed secret');
    const key = this.keys.find((k) => k.id === id);
    if (!key) throw new Error(`the key ${id} that sealed this secret is no longer configured`);
    const decipher = crypto.createDecipheriv(
      'aes-256-gcm',
      key.bytes,
      Buffer.from(iv, 'base64url'),
    );
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(body, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  }
}
