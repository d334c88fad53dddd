import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyType } from './roles';

/**
 * API key and client secret formats. A key reads `<type prefix>_<key id>_<secret>`: the prefix tells its type
 * (as the reference API's keys do), the id is not secret and is how the key is looked up, and the secret is
 * 32 random bytes. Only a SHA-256 digest is kept; keys are random, so a fast hash is as safe as a slow one.
 */
export const KEY_PREFIX: Record<KeyType, string> = { personal: 'zut', serving: 'zqt', serving_and_indexing: 'zwt' };

/** The id of the owner's bootstrap key, whatever form ADMIN_API_KEY takes. */
export const BOOTSTRAP_KEY_ID = 'aky_owner';

const KEY_FORMAT = /^(zut|zqt|zwt)_(aky_[A-Za-z0-9]{1,40})_([A-Za-z0-9_-]{20,200})$/;

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function formatKey(type: KeyType, keyId: string, secret: string): string {
  return `${KEY_PREFIX[type]}_${keyId}_${secret}`;
}

/** The key id inside a presented key, when it has our format. */
export function keyIdOf(presented: string): string | undefined {
  return KEY_FORMAT.exec(presented)?.[2];
}

/** Non-secret form of a key for reads after creation: prefix and id, secret replaced. */
export function maskedKey(type: KeyType, keyId: string): string {
  return `${KEY_PREFIX[type]}_${keyId}_****`;
}

export function digestOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of two SHA-256 digests (fixed length, so `timingSafeEqual` never throws). */
export function digestMatches(presented: string, storedDigestHex: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = Buffer.from(storedDigestHex, 'hex');
  return b.length === a.length && timingSafeEqual(a, b);
}
