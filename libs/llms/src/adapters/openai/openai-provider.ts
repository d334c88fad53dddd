import { Inject, Injectable } from '@nestjs/common';
import OpenAI from 'openai';
import { DomainError, OUTBOUND_HTTP, OutboundHttp, outboundRefusal } from '@lib/platform';
import { joinAuth, LlmAuth, secretValues, StoredAuth } from '../../domain/auth';
import type { LlmType } from '../../domain/llm';
import { SecretBox } from '../../application/secrets/secret-box';
import { sdkLogger } from '../sdk-logger';
import { scrub } from '../../application/provider/upstream-failure.port';
import { OpenAiHttpResponse, postJson } from './openai-http';

/** Read timeout when a model sets no `idle_timeout_seconds` (what OpenAI's and Anthropic's SDKs use). */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 60;

/** What a call to one registered model needs: an SDK client, the auth headers of the moment, the secrets to scrub. */
export interface Upstream {
  readonly client: OpenAI;
  readonly model: string;
  readonly idleTimeoutSeconds: number;
  readonly secrets: readonly string[];
  authHeaders(): Promise<Record<string, string | null>>;
  /** POSTs a JSON body to `baseURL + path` without the SDK (openai-http.ts), failing with the SDK's errors. */
  post(path: string, body: object, signal: AbortSignal | undefined): Promise<OpenAiHttpResponse>;
}

/** The endpoint a candidate or registered model is reached at (before or after registration). */
export interface Endpoint {
  /** Default `openai-compatible`. */
  readonly type?: LlmType;
  readonly uri: string;
  readonly model: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly idleTimeoutSeconds: number | null;
  readonly auth: LlmAuth | null;
}

/**
 * The `openai` SDK client of an OpenAI-compatible or Responses API model. The reference API's `uri` is the full
 * chat-completions (or responses) URL; the SDK takes the base URL, so `/chat/completions` (`/responses`) is cut
 * off and the query string (e.g. Azure's `api-version`) goes into every request.
 */
@Injectable()
export class OpenAiProvider {
  constructor(
    private readonly box: SecretBox,
    @Inject(OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
  ) {}

  open(llmId: string, stored: StoredAuth | null): LlmAuth | null {
    return stored ? joinAuth(stored.type, stored.identifiers, this.box.open(stored.sealed, `llm:${llmId}`)) : null;
  }

  connect(endpoint: Endpoint): Upstream {
    const url = new URL(endpoint.uri);
    const defaultQuery = Object.fromEntries(url.searchParams);
    url.search = '';
    const baseURL = url.toString().replace(/\/(chat\/completions|responses)\/?$/, '').replace(/\/$/, '');
    const idleTimeoutSeconds = endpoint.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS;
    // Retries stay off: a retried completion is billed twice and hides the failure from the caller. The SDK's
    // timeout is a backstop; callers time out themselves (ChatCompletions) to tell a timeout from an abort.
    const auth = endpoint.auth;
    const secrets = auth ? secretValues(auth) : [];
    const timeoutMs = idleTimeoutSeconds * 1000 + 5000;
    const client = new OpenAI({
      apiKey: 'unused',
      baseURL,
      defaultQuery,
      defaultHeaders: { ...endpoint.headers },
      maxRetries: 0,
      timeout: timeoutMs,
      logLevel: 'warn',
      logger: sdkLogger('openai', secrets),
      fetch: this.outbound.fetch,
    });
    const headers = auth ? authHeaders(auth, this.outbound.fetch) : async () => ({ Authorization: null });
    const target = { baseURL, query: queryString(defaultQuery), headers: { ...endpoint.headers }, timeoutMs };
    const outbound = this.outbound;
    return {
      client,
      model: endpoint.model,
      idleTimeoutSeconds,
      secrets,
      authHeaders: headers,
      async post(path, body, signal) {
        return postJson(outbound, target, path, body, await headers(), signal);
      },
    };
  }
}

function queryString(query: Record<string, string>): string {
  const search = new URLSearchParams(query).toString();
  return search ? `?${search}` : '';
}

/** Headers for each request; OAuth client credentials fetch a token and reuse it until shortly before it expires. */
function authHeaders(auth: LlmAuth, outboundFetch: typeof fetch): () => Promise<Record<string, string | null>> {
  switch (auth.type) {
    case 'bearer':
      return async () => ({ Authorization: `Bearer ${auth.token}` });
    case 'header':
      return async () => ({ Authorization: null, [auth.header]: auth.value });
    case 'oauth_client_credentials': {
      let token: { value: string; until: number } | undefined;
      return async () => {
        if (!token || Date.now() >= token.until) token = await fetchToken(auth, outboundFetch);
        return { Authorization: `Bearer ${token.value}` };
      };
    }
    default:
      // The registry only pairs these types with RemoteAuth (AUTH_TYPES_BY_LLM_TYPE).
      throw new DomainError('invalid', 'llm.auth_mismatch', `auth type ${auth.type} does not apply to an OpenAI endpoint`);
  }
}

async function fetchToken(auth: Extract<LlmAuth, { type: 'oauth_client_credentials' }>, outboundFetch: typeof fetch): Promise<{ value: string; until: number }> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: auth.client_id, client_secret: auth.client_secret });
  if (auth.scopes?.length) form.set('scope', auth.scopes.join(' '));
  const res = await outboundFetch(auth.token_endpoint, { method: 'POST', body: form, signal: AbortSignal.timeout(30_000) }).catch((e: Error) => {
    const refused = outboundRefusal(e);
    if (refused) throw new DomainError('upstream', 'llm.outbound_refused', `The OAuth token endpoint cannot be called: ${refused.message}`);
    throw new DomainError('upstream', 'llm.oauth_failed', `The OAuth token endpoint could not be reached: ${scrub(e.message, [auth.client_secret])}`);
  });
  const body = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number };
  if (!res.ok || !body.access_token) throw new DomainError('upstream', 'llm.oauth_failed', `The OAuth token endpoint refused the client credentials (${res.status})`);
  return { value: body.access_token, until: Date.now() + Math.max(0, (body.expires_in ?? 300) - 30) * 1000 };
}
