import { maskedAuth, maskUriCredentials, StoredAuth } from '../domain/auth';
import type { LlmCapabilities } from '../domain/capabilities';
import type { LlmType } from '../domain/llm';
import type { Quota } from '../domain/quota';

export const LLMS = 'llms';

/** The `llms` read model (projections/llms). `auth` keeps only identifiers and ciphertext. */
export interface LlmRow {
  readonly id: string;
  readonly name: string;
  readonly type: LlmType;
  readonly model: string;
  readonly uri: string;
  readonly description: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly idle_timeout_seconds: number | null;
  readonly capabilities: LlmCapabilities;
  readonly llm_quota: Quota | null;
  readonly enabled: boolean;
  readonly auth: StoredAuth | null;
  readonly created_at: string;
  readonly updated_at: string;
  /** Log position of the last change: a cached client built from an older row is rebuilt. */
  readonly position: number;
  readonly [k: string]: unknown;
}

/** The reference API's LLM object; secrets are `****`, the ciphertext never leaves the service. */
export function llmView(row: LlmRow): Record<string, unknown> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    enabled: row.enabled,
    default: false,
    ownership: 'customer',
    type: row.type,
    model: row.model,
    // Empty for Bedrock and Vertex auth given no uri: the endpoint follows from the auth's region and project.
    // Masked: a uri stored with user:password@ before such uris were refused never shows them.
    ...(row.uri ? { uri: maskUriCredentials(row.uri) } : {}),
    headers: row.headers,
    capabilities: row.capabilities,
    ...(row.idle_timeout_seconds !== null ? { idle_timeout_seconds: row.idle_timeout_seconds } : {}),
    ...(row.llm_quota ? { llm_quota: row.llm_quota } : {}),
    ...(row.auth ? { auth: maskedAuth(row.auth) } : {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
