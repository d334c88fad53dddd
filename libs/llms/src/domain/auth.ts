import { assertNever } from '@lib/platform';

/**
 * Credentials of an OpenAI-compatible endpoint, as the reference API's RemoteAuth has them. Secret fields
 * are kept apart from identifiers so that events and reads carry only the identifiers plus ciphertext.
 */
export type LlmAuth =
  | { readonly type: 'bearer'; readonly token: string }
  | { readonly type: 'header'; readonly header: string; readonly value: string }
  | {
      readonly type: 'oauth_client_credentials';
      readonly client_id: string;
      readonly client_secret: string;
      readonly token_endpoint: string;
      readonly scopes?: readonly string[];
    };

export type LlmAuthType = LlmAuth['type'];
export const LLM_AUTH_TYPES: readonly LlmAuthType[] = ['bearer', 'header', 'oauth_client_credentials'];

/** The non-secret part of an auth variant: what a reader may see (header names, client ids, endpoints). */
export type AuthIdentifiers = Readonly<Record<string, string | readonly string[]>>;

/** The encrypted secret fields of an auth variant (opaque to the domain; see application/secrets). */
export interface SealedSecret {
  readonly v: 1;
  /** Fingerprint of the key that sealed it, so a wrong SECRETS_KEY is named, not guessed at. */
  readonly kid: string;
  readonly iv: string;
  readonly tag: string;
  readonly ct: string;
}

/** Auth as stored in events and read models: type, identifiers, and the secrets sealed. */
export interface StoredAuth {
  readonly type: LlmAuthType;
  readonly identifiers: AuthIdentifiers;
  readonly sealed: SealedSecret;
}

export const MASK = '****';

/** Splits an auth variant into identifiers (kept in clear) and secrets (to be sealed). */
export function splitAuth(auth: LlmAuth): { identifiers: AuthIdentifiers; secrets: Record<string, string> } {
  switch (auth.type) {
    case 'bearer':
      return { identifiers: {}, secrets: { token: auth.token } };
    case 'header':
      return { identifiers: { header: auth.header }, secrets: { value: auth.value } };
    case 'oauth_client_credentials':
      return {
        identifiers: { client_id: auth.client_id, token_endpoint: auth.token_endpoint, ...(auth.scopes ? { scopes: auth.scopes } : {}) },
        secrets: { client_secret: auth.client_secret },
      };
    default:
      return assertNever(auth);
  }
}

/** Joins identifiers and opened secrets back into the auth variant. */
export function joinAuth(type: LlmAuthType, identifiers: AuthIdentifiers, secrets: Record<string, string>): LlmAuth {
  return { type, ...identifiers, ...secrets } as unknown as LlmAuth;
}

/** The reference API's read view: the variant with every secret field replaced by `****`. */
export function maskedAuth(stored: Pick<StoredAuth, 'type' | 'identifiers'>): Record<string, unknown> {
  const secretFields: Record<LlmAuthType, string[]> = { bearer: ['token'], header: ['value'], oauth_client_credentials: ['client_secret'] };
  return { type: stored.type, ...stored.identifiers, ...Object.fromEntries(secretFields[stored.type].map((f) => [f, MASK])) };
}
