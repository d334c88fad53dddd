import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { DomainError } from '@lib/platform';
import type { SealedSecret } from '../../domain/auth';

export const SECRETS_KEY = Symbol('SecretsKey');

/**
 * AES-256-GCM for credentials at rest. The additional data binds a ciphertext to the record it belongs to
 * (e.g. `llm:<id>`), so a sealed value copied into another record fails to open.
 */
export class SecretBox {
  private readonly key: Buffer;
  readonly kid: string;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The secrets key must be 32 bytes');
    this.key = key;
    this.kid = createHash('sha256').update(key).digest('hex').slice(0, 12);
  }

  /** A key from SECRETS_KEY: 64 hex digits or base64 of 32 bytes. */
  static parseKey(text: string): Buffer {
    const trimmed = text.trim();
    const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
    if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, written as 64 hex digits or in base64');
    return key;
  }

  seal(secrets: Record<string, string>, aad: string): SealedSecret {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
    return { v: 1, kid: this.kid, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ct: ct.toString('base64') };
  }

  open(sealed: SealedSecret, aad: string): Record<string, string> {
    if (sealed.kid !== this.kid) {
      throw new DomainError('internal', 'secrets.wrong_key', `A stored credential was sealed with another secrets key (${sealed.kid}); this process has ${this.kid}: set the same SECRETS_KEY on every process`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(Buffer.from(aad));
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
      const plain = Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as Record<string, string>;
    } catch {
      throw new DomainError('internal', 'secrets.corrupt', 'A stored credential failed its integrity check and was not used');
    }
  }
}
