import { Inject, Injectable } from '@nestjs/common';
import { hkdfSync } from 'node:crypto';
import { DigestKind, digestMatches, keyedDigestOf } from '../domain/credentials';
import { AUTH_OPTIONS, AuthOptions } from './tokens';

/**
 * Checks presented keys against stored digests of either kind, and makes the bootstrap key's digest: HMAC-SHA-256 under a key derived from the secrets key (SECRETS_KEY, or its file
 * under DATA_DIR), which no event, read model or response carries. ADMIN_API_KEY may be a person's choice, so
 * a plain digest of it in the event log could be guessed offline; without the secrets key this one cannot.
 * Every process sharing the store already needs the same secrets key (docs/llms.md); a process started with
 * another one re-keys the digest at its bootstrap (ApiKeySecretReplaced), as a rotation does.
 */
@Injectable()
export class KeyDigests {
  readonly kind: DigestKind = 'hmac-sha256';
  private readonly key: Uint8Array;

  constructor(@Inject(AUTH_OPTIONS) options: AuthOptions) {
    this.key = new Uint8Array(hkdfSync('sha256', options.secretsKey, Buffer.alloc(0), 'agent-retrieval-service/bootstrap-key-digest/v1', 32));
  }

  bootstrapDigest(bootstrapKey: string): string {
    return keyedDigestOf(bootstrapKey, this.key);
  }

  /** Whether a presented key matches a stored digest of the given kind (plain digests need no key). */
  matches(presented: string, storedDigest: string, kind: DigestKind | undefined): boolean {
    return digestMatches(presented, storedDigest, kind ?? 'sha256', this.key);
  }
}
