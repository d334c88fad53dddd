import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import type { ContentBlockParam, Message, MessageCreateParamsBase, RawMessageStreamEvent, StopReason } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { LlmAuth, secretValues } from '../../domain/auth';
import { ANTHROPIC_DEFAULT_URI } from '../../domain/llm';
import { ChatUpstream, StreamItem, UpstreamFailure } from '../../application/provider/chat-upstream.port';
import { sdkLogger } from '../sdk-logger';
import { ChatTurn, chunkMaker, completionOf, FinishReason, openAiUsage, splitSystem, translateRequest } from '../chat-translation';
import { GoogleTokenSource, serviceAccountTokens, staticAccessToken } from '../google/google-credentials';
import type { ProviderEndpoint } from '../provider-endpoint';
import { connectionReason } from '../../application/provider/upstream-failure.port';

/** Anthropic requires `max_tokens`; OpenAI callers often omit it. 4096 is what every Claude model can give. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/**
 * The direct API client, never reading local Anthropic credentials (environment, profile files): a model
 * registered without them must not borrow the operator's, and a gateway must never be sent them.
 */
class StoredCredentialAnthropic extends Anthropic {
  protected override _shouldResolveDefaultCredentials(): boolean {
    return false;
  }
}

/**
 * `type: anthropic` through Anthropic's official SDKs: the Messages API directly (bearer or header auth),
 * on AWS Bedrock (`@anthropic-ai/bedrock-sdk`: SigV4 with static IAM keys, or a Bedrock API key) or on Google
 * Vertex AI (`@anthropic-ai/vertex-sdk`: a service-account key or an access token).
 */
export function anthropicChat(endpoint: ProviderEndpoint, auth: LlmAuth, outboundFetch: typeof fetch): ChatUpstream {
  const client = anthropicClient(endpoint, auth, outboundFetch);
  const model = endpoint.model;
  const request = (body: Parameters<ChatUpstream['complete']>[0]): MessageCreateParamsBase => {
    const chat = translateRequest(body, 'anthropic', ['top_k', 'metadata']);
    const { system, turns } = splitSystem(chat.turns);
    return {
      model,
      max_tokens: chat.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      messages: turns.map((t) => ({ role: t.role as 'user' | 'assistant', content: blocksOf(t) })),
      ...(system !== undefined ? { system } : {}),
      ...(chat.temperature !== undefined ? { temperature: chat.temperature } : {}),
      ...(chat.topP !== undefined ? { top_p: chat.topP } : {}),
      ...(chat.stop ? { stop_sequences: [...chat.stop] } : {}),
      ...chat.extra,
    };
  };
  return {
    type: 'anthropic',
    model,
    idleTimeoutSeconds: endpoint.idleTimeoutSeconds,
    secrets: secretValues(auth),
    translates: { tools: false, responseFormat: false },
    async complete(body, signal) {
      const message = (await client.messages.create({ ...request(body), stream: false }, { signal })) as Message;
      const text = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      return completionOf(message.id, model, text, finishOf(message.stop_reason), usageOf(message.usage));
    },
    async stream(body, signal) {
      const events = await client.messages.create({ ...request(body), stream: true }, { signal });
      return relayEvents(events, model);
    },
    classify: classifyAnthropicError,
    async contextLimit() {
      if (!(client instanceof StoredCredentialAnthropic)) return undefined;
      const info = (await client.models.retrieve(model)) as { max_input_tokens?: number | null };
      return typeof info.max_input_tokens === 'number' ? { value: info.max_input_tokens, detail: 'GET /v1/models/{model} reports max_input_tokens' } : undefined;
    },
  };
}

function anthropicClient(endpoint: ProviderEndpoint, auth: LlmAuth, outboundFetch: typeof fetch): Anthropic | AnthropicBedrock | AnthropicVertex {
  // Retries stay off (a retried completion is billed twice); the SDK timeout is a backstop behind ChatCompletions' own.
  const common = {
    maxRetries: 0,
    timeout: endpoint.idleTimeoutSeconds * 1000 + 5000,
    defaultHeaders: { ...endpoint.headers },
    logLevel: 'warn' as const,
    logger: sdkLogger('anthropic', secretValues(auth)),
    fetch: outboundFetch,
  };
  // The direct API's default URI names Anthropic itself: it is never a Bedrock or Vertex endpoint.
  const given = endpoint.uri && endpoint.uri !== ANTHROPIC_DEFAULT_URI ? endpoint.uri.replace(/\/$/, '') : undefined;
  switch (auth.type) {
    case 'bearer':
      return new StoredCredentialAnthropic({ ...common, baseURL: messagesBase(endpoint.uri || ANTHROPIC_DEFAULT_URI), apiKey: null, authToken: auth.token });
    case 'header':
      // The header as configured (`x-api-key` for Anthropic's own API keys), never also an Authorization header.
      return new StoredCredentialAnthropic({
        ...common,
        baseURL: messagesBase(endpoint.uri || ANTHROPIC_DEFAULT_URI),
        apiKey: null,
        authToken: null,
        defaultHeaders: { ...common.defaultHeaders, [auth.header]: auth.value, Authorization: null },
      });
    case 'bedrock_static_iam':
      return new AnthropicBedrock({
        ...common,
        baseURL: given ?? `https://bedrock-runtime.${auth.region}.amazonaws.com`,
        awsRegion: auth.region,
        awsAccessKey: auth.aws_access_key_id,
        awsSecretKey: auth.aws_secret_access_key,
        // Null, not undefined: a Bedrock bearer token in the environment must not replace the stored keys.
        apiKey: null,
      });
    case 'bedrock_api_key':
      return new AnthropicBedrock({ ...common, baseURL: given ?? `https://bedrock-runtime.${auth.region}.amazonaws.com`, awsRegion: auth.region, apiKey: auth.api_key });
    case 'vertex_service_account':
    case 'vertex_access_token': {
      const tokens: GoogleTokenSource = auth.type === 'vertex_access_token' ? staticAccessToken(auth.access_token, auth.project) : serviceAccountTokens(auth.key_json, auth.project, outboundFetch);
      return new AnthropicVertex({
        ...common,
        baseURL: given?.replace(/\/projects\/.*$/, '') ?? vertexBase(auth.region),
        region: auth.region,
        projectId: auth.project,
        authClient: tokens as unknown as NonNullable<ConstructorParameters<typeof AnthropicVertex>[0]>['authClient'],
      });
    }
    default:
      throw new Error(`auth type ${auth.type} does not apply to anthropic`);
  }
}

/** The reference's `uri` is the Messages URL (`…/v1/messages`); the SDK takes the base it appends that to. */
const messagesBase = (uri: string): string => uri.replace(/\/$/, '').replace(/\/v1\/messages$/, '');

/** Vertex AI's regional, multi-regional and global hosts, as Google names them. */
function vertexBase(region: string): string {
  if (region === 'global') return 'https://aiplatform.googleapis.com/v1';
  if (region === 'us' || region === 'eu') return `https://aiplatform.${region}.rep.googleapis.com/v1`;
  return `https://${region}-aiplatform.googleapis.com/v1`;
}

function blocksOf(turn: ChatTurn): string | ContentBlockParam[] {
  if (turn.parts.length === 1 && turn.parts[0].type === 'text') return turn.parts[0].text;
  return turn.parts.map((p): ContentBlockParam => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.base64) return { type: 'image', source: { type: 'base64', media_type: p.mimeType as 'image/png', data: p.base64 } };
    return { type: 'image', source: { type: 'url', url: p.url } };
  });
}

function finishOf(reason: StopReason | null): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

interface AnthropicUsage {
  readonly input_tokens?: number | null;
  readonly output_tokens?: number | null;
  readonly cache_creation_input_tokens?: number | null;
  readonly cache_read_input_tokens?: number | null;
}

/** Input tokens are the uncached ones plus those written to and read from the cache (OpenAI's prompt_tokens). */
function usageOf(u: AnthropicUsage) {
  const cached = u.cache_read_input_tokens ?? 0;
  return openAiUsage((u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + cached, u.output_tokens ?? 0, cached);
}

async function* relayEvents(events: AsyncIterable<RawMessageStreamEvent>, model: string): AsyncGenerator<StreamItem> {
  const chunks = chunkMaker(model);
  let usage: AnthropicUsage = {};
  let finish: FinishReason = 'stop';
  const emit = (chunk: ChatCompletionChunk): StreamItem => ({ chunk });
  for await (const event of events) {
    switch (event.type) {
      case 'message_start':
        chunks.setId(event.message.id);
        usage = event.message.usage;
        yield emit(chunks.delta({ role: 'assistant', content: '' }));
        break;
      case 'content_block_delta':
        if (event.delta.type === 'text_delta') yield emit(chunks.delta({ content: event.delta.text }));
        break;
      case 'message_delta':
        finish = finishOf(event.delta.stop_reason);
        // Counts in message_delta are cumulative; absent (null) ones keep message_start's.
        usage = { ...usage, ...Object.fromEntries(Object.entries(event.usage).filter(([, v]) => typeof v === 'number')) };
        break;
      case 'message_stop':
        yield emit(chunks.delta({}, finish));
        yield emit(chunks.usage(usageOf(usage)));
        return;
      default:
        break;
    }
  }
}

export function classifyAnthropicError(e: unknown): UpstreamFailure {
  if (e instanceof APIConnectionTimeoutError) return { kind: 'timeout' };
  if (e instanceof APIUserAbortError) return { kind: 'aborted' };
  if (e instanceof APIConnectionError) {
    return { kind: 'unreachable', message: e.cause ? `${e.message} ${connectionReason(e, true)}` : e.message };
  }
  if (e instanceof APIError) return e.status ? { kind: 'status', status: e.status, message: e.message } : { kind: 'other', message: e.message };
  if ((e as Error)?.name === 'AbortError') return { kind: 'aborted' };
  return { kind: 'other', message: (e as Error)?.message ?? String(e) };
}
