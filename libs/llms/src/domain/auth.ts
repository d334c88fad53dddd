import { hasUrlCredentials, maskUrlCredentials } from '@lib/platform/kernel';

/**
 * Credentials of a registered model, as the reference API's auth variants have them (RemoteAuth for the
 * OpenAI types, AnthropicAuth, VertexAiAuth). Secret fields are kept apart from identifiers so that events
 * and reads carry only the identifiers plus ciphertext.
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
    }
  | { readonly type: 'bedrock_static_iam'; readonly aws_access_key_id: string; readonly aws_secret_access_key: string; readonly region: string }
  | { readonly type: 'bedrock_api_key'; readonly api_key: string; readonly region: string }
  | { readonly type: 'vertex_service_account'; readonly key_json: string; readonly project: string; readonly region: string }
  | { readonly type: 'vertex_access_token'; readonly access_token: string; readonly project: string; readonly region: string }
  | { readonly type: 'api_key'; readonly api_key: string }
  | { readonly type: 'service_account'; readonly key_json: string };

export type LlmAuthType = LlmAuth['type'];

/** Each variant's fields: which are required, which optional, and which of them are secret (sealed, shown as `****`). */
export const AUTH_FIELDS: Readonly<Record<LlmAuthType, { readonly required: readonly string[]; readonly optional?: readonly string[]; readonly secret: readonly string[] }>> = {
  bearer: { required: ['token'], secret: ['token'] },
  header: { required: ['header', 'value'], secret: ['value'] },
  oauth_client_credentials: { required: ['client_id', 'client_secret', 'token_endpoint'], optional: ['scopes'], secret: ['client_secret'] },
  // The access key id is an identifier (the reference keeps it so the credential can be recognised).
  bedrock_static_iam: { required: ['aws_access_key_id', 'aws_secret_access_key', 'region'], secret: ['aws_secret_access_key'] },
  bedrock_api_key: { required: ['api_key', 'region'], secret: ['api_key'] },
  vertex_service_account: { required: ['key_json', 'project', 'region'], secret: ['key_json'] },
  vertex_access_token: { required: ['access_token', 'project', 'region'], secret: ['access_token'] },
  api_key: { required: ['api_key'], secret: ['api_key'] },
  service_account: { required: ['key_json'], secret: ['key_json'] },
};

export const LLM_AUTH_TYPES = Object.keys(AUTH_FIELDS) as readonly LlmAuthType[];

/** The non-secret part of an auth variant: what a reader may see (header names, client ids, regions, projects). */
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
  const secretFields = AUTH_FIELDS[auth.type].secret;
  const identifiers: Record<string, string | readonly string[]> = {};
  const secrets: Record<string, string> = {};
  for (const [k, v] of Object.entries(auth)) {
    if (k === 'type' || v === undefined) continue;
    if (secretFields.includes(k)) secrets[k] = v as string;
    else identifiers[k] = v as string | readonly string[];
  }
  return { identifiers, secrets };
}

/** Joins identifiers and opened secrets back into the auth variant. */
export function joinAuth(type: LlmAuthType, identifiers: AuthIdentifiers, secrets: Record<string, string>): LlmAuth {
  return { type, ...identifiers, ...secrets } as unknown as LlmAuth;
}

/** The reference API's read view: the variant with every secret field replaced by `****`. */
export function maskedAuth(stored: Pick<StoredAuth, 'type' | 'identifiers'>): Record<string, unknown> {
  const identifiers = Object.fromEntries(Object.entries(stored.identifiers).map(([k, v]) => [k, typeof v === 'string' ? maskUriCredentials(v) : v]));
  return { type: stored.type, ...identifiers, ...Object.fromEntries(AUTH_FIELDS[stored.type].secret.map((f) => [f, MASK])) };
}

/** The secret values of a variant, to scrub from upstream error text (a service-account key also by its private key). */
export function secretValues(auth: LlmAuth): string[] {
  const values = Object.values(splitAuth(auth).secrets);
  if ('key_json' in auth) {
    const key = parseServiceAccountKey(auth.key_json);
    if (key) values.push(key.private_key, ...key.private_key.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----')));
  }
  return values;
}

/** The fields of a Google service-account key that signing needs; `token_uri` defaults to Google's. */
export interface ServiceAccountKey {
  readonly client_email: string;
  readonly private_key: string;
  readonly private_key_id?: string;
  readonly project_id?: string;
  readonly token_uri?: string;
}

export function parseServiceAccountKey(text: string): ServiceAccountKey | undefined {
  try {
    const key = JSON.parse(text) as Partial<ServiceAccountKey> & { type?: string };
    if (typeof key.client_email !== 'string' || typeof key.private_key !== 'string' || !key.private_key.includes('PRIVATE KEY')) return undefined;
    return key as ServiceAccountKey;
  } catch {
    return undefined;
  }
}

/**
 * Problems with the content of an auth variant (checked before it is sealed, since the domain never sees
 * secrets afterwards), by field; empty when valid.
 */
export function authContentProblems(auth: LlmAuth, prefix = 'auth'): Record<string, string> {
  const problems: Record<string, string> = {};
  if ('key_json' in auth && !parseServiceAccountKey(auth.key_json)) {
    problems[`${prefix}.key_json`] = 'must be the JSON of a Google service-account key, with client_email and private_key';
  }
  if ('region' in auth && !/^[a-z0-9-]+$/.test(auth.region)) problems[`${prefix}.region`] = 'must be a region name such as us-east-1 or us-central1';
  if ('project' in auth && !/^[a-z0-9.:-]+$/i.test(auth.project)) problems[`${prefix}.project`] = 'must be a Google Cloud project id';
  if (auth.type === 'oauth_client_credentials' && !/^https?:\/\/[^/]/i.test(auth.token_endpoint)) {
    problems[`${prefix}.token_endpoint`] = 'must be an absolute http or https URL';
  } else if (auth.type === 'oauth_client_credentials' && hasUriCredentials(auth.token_endpoint)) {
    problems[`${prefix}.token_endpoint`] = 'must not carry user:password@: the client id and secret are sent in the token request';
  }
  return problems;
}

/** Whether a URL carries `user[:password]@` (refused: it would be stored and shown in clear). */
export const hasUriCredentials = hasUrlCredentials;

/** `https://****:****@host/…` for a URL stored with credentials before they were refused; others unchanged. */
export const maskUriCredentials = maskUrlCredentials;
