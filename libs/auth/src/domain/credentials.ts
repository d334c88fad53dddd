import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
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

/**
 * How a stored digest was made. `sha256` (the default, and every event written before the field existed) is
 * for generated keys and secrets: 256 random bits, so a plain digest cannot be guessed. `hmac-sha256` keys the
 * digest with a server-held secret (the bootstrap key's: ADMIN_API_KEY may be chosen by a person, and a plain
 * digest of it in the event log could be guessed offline).
 */
export type DigestKind = 'sha256' | 'hmac-sha256';

/** HMAC-SHA-256 of a secret under a server-held key (never stored in an event or read model). */
export function keyedDigestOf(secret: string, key: Uint8Array): string {
  return createHmac('sha256', key).update(secret).digest('hex');
}

/**
 * Constant-time comparison of a presented secret with a stored digest of either kind (both 32 bytes, so
 * `timingSafeEqual` never throws). A keyed digest without the key never matches.
 */
export function digestMatches(presented: string, storedDigestHex: string, kind: DigestKind = 'sha256', key?: Uint8Array): boolean {
  if (kind === 'hmac-sha256' && !key) return false;
  const a = kind === 'hmac-sha256' ? createHmac('sha256', key as Uint8Array).update(presented).digest() : createHash('sha256').update(presented).digest();
  const b = Buffer.from(storedDigestHex, 'hex');
  return b.length === a.length && timingSafeEqual(a, b);
}
