import { createHash, randomInt, randomUUID } from 'node:crypto';

/** Source of new identifiers; injected so domain code and tests stay deterministic. */
export interface IdGenerator {
  uuid(): string;
  /** A prefixed numeric id such as `crp_123456789`. */
  numeric(prefix: string): string;
}

export const randomIds: IdGenerator = {
  uuid: () => randomUUID(),
  numeric: (prefix) => `${prefix}_${randomInt(1, 2 ** 47)}`,
};

const NAMESPACE = Buffer.from('6f1c3c5e2b8a4f0e9d7a1b2c3d4e5f60', 'hex');

/**
 * RFC 4122 version-5 UUID of `name`. Event ids derived from a command id and the event's index make a
 * retried append idempotent on every event store (G3).
 */
export function uuidV5(name: string, namespace: Buffer = NAMESPACE): string {
  const hash = createHash('sha1').update(namespace).update(name).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export const ID_GENERATOR = Symbol('IdGenerator');

/**
 * A key from a name when none is given (the reference: "auto-generated based on the agent name"): agents,
 * glossaries and reusable tool configurations.
 */
export function keyFromName(name: string, suffix: string): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40) || 'agent';
  return `${slug}_${suffix}`;
}
