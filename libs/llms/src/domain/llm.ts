import { assertNever, invalid, notFound } from '@lib/platform/kernel';
import { hasUriCredentials, LlmAuthType, StoredAuth } from './auth';
import type { LlmCapabilities } from './capabilities';
import { Quota, quotaProblems } from './quota';

/** Provider types, as the reference API lists them (docs/llms.md: which SDK each uses). */
export const LLM_TYPES = ['openai-compatible', 'openai-responses', 'vertex-ai', 'anthropic'] as const;
export type LlmType = (typeof LLM_TYPES)[number];

const REMOTE_AUTH: readonly LlmAuthType[] = ['bearer', 'header', 'oauth_client_credentials'];

/** The auth variants each provider type takes (the reference's RemoteAuth, VertexAiAuth, AnthropicAuth). */
export const AUTH_TYPES_BY_LLM_TYPE: Readonly<Record<LlmType, readonly LlmAuthType[]>> = {
  'openai-compatible': REMOTE_AUTH,
  'openai-responses': REMOTE_AUTH,
  'vertex-ai': ['api_key', 'service_account'],
  anthropic: ['bearer', 'header', 'bedrock_static_iam', 'bedrock_api_key', 'vertex_service_account', 'vertex_access_token'],
};

/** Types whose reference request requires `auth` (an OpenAI-compatible server may need none, e.g. a local vLLM). */
const AUTH_REQUIRED: readonly LlmType[] = ['vertex-ai', 'anthropic'];

/** Anthropic's Messages endpoint, the reference's default `uri` for the direct API. */
export const ANTHROPIC_DEFAULT_URI = 'https://api.anthropic.com/v1/messages';

/**
 * The `uri` a model is stored with when none was given: Anthropic's API for direct auth; empty for Bedrock and
 * Vertex, whose endpoint follows from the region and project of the auth (the reference: "not required").
 */
export function defaultUri(type: LlmType, authType: LlmAuthType | undefined): string | undefined {
  if (type !== 'anthropic') return undefined;
  return authType === 'bearer' || authType === 'header' ? ANTHROPIC_DEFAULT_URI : '';
}

export const MAX_IDLE_TIMEOUT_SECONDS = 3600;

/** A registered model's configuration. `auth` holds only identifiers and ciphertext (never a secret in clear). */
export interface LlmSettings {
  readonly type: LlmType;
  readonly model: string;
  readonly uri: string;
  readonly description: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Null: the provider default read timeout applies. */
  readonly idleTimeoutSeconds: number | null;
  readonly capabilities: LlmCapabilities;
  readonly quota: Quota | null;
  readonly enabled: boolean;
  readonly auth: StoredAuth | null;
}

export type LlmEvent =
  | { type: 'LlmCreated'; data: { llmId: string; name: string; settings: LlmSettings; createdAt: string } }
  /** `changes`: only the fields that changed; `auth` present means a rotated credential. */
  | { type: 'LlmUpdated'; data: { llmId: string; name: string; changes: Partial<LlmSettings>; updatedAt: string } }
  | { type: 'LlmDeleted'; data: { llmId: string; name: string; deletedAt: string } };

export const LLM_EVENT_TYPES = ['LlmCreated', 'LlmUpdated', 'LlmDeleted'] as const;

export type LlmState = { readonly status: 'absent' } | { readonly status: 'active'; readonly llmId: string; readonly name: string; readonly settings: LlmSettings };

export const llmFold = {
  initialState: { status: 'absent' } as LlmState,
  evolve(state: LlmState, event: LlmEvent): LlmState {
    switch (event.type) {
      case 'LlmCreated':
        return { status: 'active', llmId: event.data.llmId, name: event.data.name, settings: event.data.settings };
      case 'LlmUpdated':
        return state.status === 'absent' ? state : { ...state, settings: { ...state.settings, ...event.data.changes } };
      case 'LlmDeleted':
        return { status: 'absent' };
      default:
        return assertNever(event);
    }
  },
};

export const llmNotFound = (nameOrId: string) => notFound('llm.not_found', `LLM "${nameOrId}" does not exist`, nameOrId);

/** Header names that carry credentials belong in `auth`, where they are encrypted and masked. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|x-api-key|api-key|cookie)$|token|secret|password|key$/i;

/** Checks the rules class-validator cannot express; throws `invalid` with field errors. */
export function validateSettings(settings: Partial<LlmSettings>): void {
  const problems: Record<string, string> = {};
  for (const name of Object.keys(settings.headers ?? {})) {
    if (CREDENTIAL_HEADER.test(name)) problems[`headers.${name}`] = 'looks like a credential: send it as auth {"type":"header","header":…,"value":…} so it is encrypted and masked';
  }
  if (settings.quota) Object.assign(problems, quotaProblems(settings.quota));
  if (settings.uri !== undefined && settings.uri !== '') {
    try {
      const url = new URL(settings.uri);
      if (!['http:', 'https:'].includes(url.protocol)) problems.uri = 'must be an http or https URL';
      else if (hasUriCredentials(settings.uri)) {
        problems.uri = 'must not carry user:password@ (it would be stored and shown in clear): send the credential in auth, e.g. {"type":"header","header":"Authorization","value":"Basic …"}, where it is encrypted and masked';
      }
      const secretParam = [...url.searchParams.keys()].find((k) => CREDENTIAL_HEADER.test(k));
      if (secretParam) problems.uri = `query parameter ${secretParam} looks like a credential: send it in auth, where it is encrypted and masked`;
    } catch {
      problems.uri = 'must be an absolute http or https URL';
    }
  }
  throwProblems(problems);
}

function throwProblems(problems: Record<string, string>): void {
  const first = Object.entries(problems)[0];
  if (first) throw invalid('llm.invalid', `Invalid ${first[0]}: ${first[1]}`, problems);
}

/** Where a `vertex-ai` uri points: the SDK's base URL and API version, and Vertex AI's project and location. */
export interface GeminiEndpoint {
  readonly baseUrl: string;
  readonly apiVersion: string;
  /** Vertex AI (project and location in the path, or an aiplatform host) rather than the Gemini API. */
  readonly vertex: boolean;
  readonly project?: string;
  readonly location?: string;
}

/**
 * Normalises a Gemini uri as the reference describes: any model path, method suffix (`:generateContent`) and
 * query are dropped; `…/v1/projects/P/locations/L` names Vertex AI's project and location.
 */
export function geminiEndpoint(uri: string): GeminiEndpoint {
  const url = new URL(uri);
  const segments = url.pathname.split('/').filter(Boolean);
  const at = segments.findIndex((s) => /^v\d+((alpha|beta)\d*)?$/.test(s));
  const prefix = at < 0 ? segments : segments.slice(0, at);
  const rest = at < 0 ? [] : segments.slice(at + 1);
  const project = rest[0] === 'projects' ? rest[1] : undefined;
  const location = project && rest[2] === 'locations' ? rest[3]?.split(':')[0] : undefined;
  const vertex = project !== undefined || url.hostname.endsWith('aiplatform.googleapis.com');
  const baseUrl = `${url.origin}${prefix.length ? `/${prefix.join('/')}` : ''}`;
  return { baseUrl, apiVersion: at < 0 ? (vertex ? 'v1' : 'v1beta') : segments[at], vertex, project, location };
}

/** Checks a whole configuration (after create, or a PATCH merged over the current one): type, auth and uri agree. */
export function validateCombination(settings: Pick<LlmSettings, 'type' | 'uri'> & { readonly auth: Pick<StoredAuth, 'type'> | null }): void {
  const problems: Record<string, string> = {};
  const allowed = AUTH_TYPES_BY_LLM_TYPE[settings.type];
  if (settings.auth && !allowed.includes(settings.auth.type)) {
    problems['auth.type'] = `auth type ${settings.auth.type} does not apply to LLM type ${settings.type}; it takes ${allowed.join(', ')}`;
  }
  if (!settings.auth && AUTH_REQUIRED.includes(settings.type)) problems.auth = `required for LLM type ${settings.type} (one of ${allowed.join(', ')})`;
  const endpointFromAuth = settings.type === 'anthropic' && settings.auth !== null && !['bearer', 'header'].includes(settings.auth.type);
  if (settings.uri === '' && !endpointFromAuth) problems.uri = `required for LLM type ${settings.type}${settings.type === 'anthropic' ? ' with bearer or header auth' : ''}`;
  if (settings.type === 'vertex-ai' && settings.uri && !problems.uri) Object.assign(problems, geminiProblems(settings));
  throwProblems(problems);
}

function geminiProblems(settings: Pick<LlmSettings, 'uri'> & { readonly auth: Pick<StoredAuth, 'type'> | null }): Record<string, string> {
  let target: GeminiEndpoint;
  try {
    target = geminiEndpoint(settings.uri);
  } catch {
    return {};
  }
  if (settings.auth?.type === 'service_account' && !target.location) {
    return { uri: 'service_account auth is for Vertex AI: the uri must name the project and location, e.g. https://us-central1-aiplatform.googleapis.com/v1/projects/P/locations/us-central1' };
  }
  if (settings.auth?.type === 'api_key' && target.project) {
    return { uri: 'api_key auth is for the Gemini API (e.g. https://generativelanguage.googleapis.com/v1beta) or Vertex AI express mode without a project; for a project and location use service_account auth' };
  }
  return {};
}

export function decideCreateLlm(state: LlmState, command: { llmId: string; name: string; settings: LlmSettings }, now: Date): LlmEvent[] {
  // 400 as the reference lists for createLLM (no 409 there), like a taken corpus key.
  if (state.status !== 'absent') throw invalid('llm.name_taken', `An LLM named "${command.name}" already exists`, { name: 'an LLM with this name already exists' });
  validateSettings(command.settings);
  validateCombination(command.settings);
  return [{ type: 'LlmCreated', data: { ...command, createdAt: now.toISOString() } }];
}

/** Only the fields that differ are recorded; a PATCH that changes nothing appends nothing. */
export function decideUpdateLlm(state: LlmState, name: string, requested: Partial<LlmSettings>, now: Date): LlmEvent[] {
  if (state.status === 'absent') throw llmNotFound(name);
  validateSettings(requested);
  const changes = Object.fromEntries(
    Object.entries(requested).filter(([k, v]) => v !== undefined && JSON.stringify(v) !== JSON.stringify(state.settings[k as keyof LlmSettings])),
  ) as Partial<LlmSettings>;
  if (Object.keys(changes).length === 0) return [];
  validateCombination({ ...state.settings, ...changes });
  return [{ type: 'LlmUpdated', data: { llmId: state.llmId, name: state.name, changes, updatedAt: now.toISOString() } }];
}

export function decideDeleteLlm(state: LlmState, name: string, now: Date): LlmEvent[] {
  if (state.status === 'absent') throw llmNotFound(name);
  return [{ type: 'LlmDeleted', data: { llmId: state.llmId, name: state.name, deletedAt: now.toISOString() } }];
}
