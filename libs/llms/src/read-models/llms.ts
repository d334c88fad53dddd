import { collection } from '@lib/platform/projections';
import { maskedAuth, maskUriCredentials, StoredAuth } from '../domain/auth';
import type { LlmCapabilities } from '../domain/capabilities';
import type { LlmEvent, LlmSettings, LlmType } from '../domain/llm';
import type { Quota } from '../domain/quota';

/** One row per registered model, keyed by llm id (projections/llms). `auth` keeps only identifiers and ciphertext. */
export type LlmRow = {
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
};

export const LLMS = collection<LlmRow>('llms');

/** Settings field → row field (the reference API's names). */
const FIELD = {
  type: 'type',
  model: 'model',
  uri: 'uri',
  description: 'description',
  headers: 'headers',
  idleTimeoutSeconds: 'idle_timeout_seconds',
  capabilities: 'capabilities',
  quota: 'llm_quota',
  enabled: 'enabled',
  auth: 'auth',
} as const satisfies { readonly [K in keyof LlmSettings]: keyof LlmRow };

type SettingsFields = { -readonly [K in keyof LlmSettings as (typeof FIELD)[K]]: LlmSettings[K] };
/** Fails to compile when a row field's type is not its setting's. */
type Checked<T extends SettingsFields> = T;
/** The row fields that hold the settings. */
export type LlmSettingsFields = Checked<Pick<LlmRow, keyof SettingsFields>>;

/** The row fields of the settings given (all of them on creation, the changed ones on update). */
export const llmFields = (settings: Partial<LlmSettings>): Partial<LlmSettingsFields> =>
  Object.fromEntries(Object.entries(settings).map(([k, v]) => [FIELD[k as keyof LlmSettings], v]));

type LlmCreated = Extract<LlmEvent, { type: 'LlmCreated' }>['data'];

/** The row an `LlmCreated` at log position `position` makes. */
export const llmRow = (d: LlmCreated, position: number): LlmRow => ({
  id: d.llmId,
  name: d.name,
  ...(llmFields(d.settings) as LlmSettingsFields),
  created_at: d.createdAt,
  updated_at: d.createdAt,
  position,
});

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
