import { ApiError, Content, FinishReason as GeminiFinish, GenerateContentParameters, GenerateContentResponse, GoogleGenAI, Part } from '@google/genai';
import { LlmAuth, secretValues } from '../../domain/auth';
import { geminiEndpoint } from '../../domain/llm';
import type { ChatUpstream, StreamItem, UpstreamFailure } from '../../application/provider/chat-upstream.port';
import { ChatTurn, chunkMaker, completionOf, FinishReason, openAiUsage, splitSystem, translateRequest } from '../chat-translation';
import { serviceAccountTokens } from './google-credentials';
import type { ProviderEndpoint } from '../provider-endpoint';
import { connectionReason } from '../../application/provider/upstream-failure.port';

/**
 * `type: vertex-ai` through Google's official Gen AI SDK (`@google/genai`): Gemini on Vertex AI with a
 * service-account key (the uri names the project and location), or the Gemini API (Google AI Studio) with an
 * API key. The uri is normalised as the reference describes: model path, method suffix and query are dropped.
 */
export function geminiChat(endpoint: ProviderEndpoint, auth: LlmAuth, outboundFetch: typeof fetch): ChatUpstream {
  const target = geminiEndpoint(endpoint.uri);
  // The guarded fetch, as the openai and Anthropic SDKs get it (outbound policy, no 300 s transport timeouts; the
  // SDK would otherwise reach into undici's global dispatcher, which a sandboxed runtime such as jest's does not expose). No SDK
  // `timeout`: it would bound the whole stream, not the gaps; ChatCompletions' idle timer bounds each wait.
  const httpOptions = { baseUrl: target.baseUrl, apiVersion: target.apiVersion, headers: { ...endpoint.headers }, fetch: outboundFetch };
  let ai: GoogleGenAI;
  if (auth.type === 'api_key') ai = new GoogleGenAI({ apiKey: auth.api_key, vertexai: target.vertex, httpOptions });
  else if (auth.type === 'service_account') {
    const tokens = serviceAccountTokens(auth.key_json, target.project, outboundFetch);
    const authClient = tokens as unknown as NonNullable<NonNullable<NonNullable<ConstructorParameters<typeof GoogleGenAI>[0]>['googleAuthOptions']>['authClient']>;
    ai = new GoogleGenAI({ vertexai: true, project: tokens.projectId, location: target.location, googleAuthOptions: { authClient }, httpOptions });
  } else throw new Error(`auth type ${auth.type} does not apply to vertex-ai`);
  const model = endpoint.model;
  const request = (body: Parameters<ChatUpstream['complete']>[0], signal: AbortSignal): GenerateContentParameters => {
    const chat = translateRequest(body, 'vertex-ai', ['seed', 'presence_penalty', 'frequency_penalty'], { webImages: false });
    const { system, turns } = splitSystem(chat.turns);
    const extra = chat.extra as { seed?: number; presence_penalty?: number; frequency_penalty?: number };
    return {
      model,
      contents: turns.map(contentOf),
      config: {
        abortSignal: signal,
        ...(system !== undefined ? { systemInstruction: system } : {}),
        ...(chat.temperature !== undefined ? { temperature: chat.temperature } : {}),
        ...(chat.topP !== undefined ? { topP: chat.topP } : {}),
        ...(chat.maxTokens !== undefined ? { maxOutputTokens: chat.maxTokens } : {}),
        ...(chat.stop ? { stopSequences: [...chat.stop] } : {}),
        ...(extra.seed !== undefined ? { seed: extra.seed } : {}),
        ...(extra.presence_penalty !== undefined ? { presencePenalty: extra.presence_penalty } : {}),
        ...(extra.frequency_penalty !== undefined ? { frequencyPenalty: extra.frequency_penalty } : {}),
      },
    };
  };
  return {
    type: 'vertex-ai',
    model,
    idleTimeoutSeconds: endpoint.idleTimeoutSeconds,
    secrets: secretValues(auth),
    translates: { tools: false, responseFormat: false },
    async complete(body, signal) {
      const response = await ai.models.generateContent(request(body, signal));
      const blocked = !response.candidates?.length && response.promptFeedback?.blockReason;
      return completionOf(response.responseId, model, textOf(response), blocked ? 'content_filter' : finishOf(response.candidates?.[0]?.finishReason), usageOf(response));
    },
    async stream(body, signal) {
      return relay(await ai.models.generateContentStream(request(body, signal)), model);
    },
    classify: classifyGeminiError,
    async contextLimit() {
      // The Gemini API reports the window; Vertex AI's publisher models do not.
      if (target.vertex) return undefined;
      const info = await ai.models.get({ model });
      return info.inputTokenLimit ? { value: info.inputTokenLimit, detail: 'GET models/{model} reports inputTokenLimit' } : undefined;
    },
  };
}

function contentOf(turn: ChatTurn): Content {
  return {
    role: turn.role === 'assistant' ? 'model' : 'user',
    parts: turn.parts.map((p): Part => {
      if (p.type === 'text') return { text: p.text };
      // Gemini fetches no web URL (only its own file URIs): images are sent inline, as data URLs.
      if (!p.base64) throw new TypeError('unreachable: web image URLs are refused before translation');
      return { inlineData: { mimeType: p.mimeType, data: p.base64 } };
    }),
  };
}

/** Text of the first candidate; thought summaries are not part of the answer. */
function textOf(response: GenerateContentResponse): string {
  return (response.candidates?.[0]?.content?.parts ?? []).filter((p) => !p.thought && typeof p.text === 'string').map((p) => p.text).join('');
}

function finishOf(reason: GeminiFinish | undefined): FinishReason {
  switch (reason) {
    case undefined:
    case GeminiFinish.STOP:
      return 'stop';
    case GeminiFinish.MAX_TOKENS:
      return 'length';
    case GeminiFinish.SAFETY:
    case GeminiFinish.RECITATION:
    case GeminiFinish.BLOCKLIST:
    case GeminiFinish.PROHIBITED_CONTENT:
    case GeminiFinish.SPII:
    case GeminiFinish.IMAGE_SAFETY:
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Prompt tokens include cached ones; output is candidates plus thoughts (Gemini's reasoning tokens). */
function usageOf(response: GenerateContentResponse) {
  const u = response.usageMetadata;
  if (!u || typeof u.promptTokenCount !== 'number') return undefined;
  const thoughts = u.thoughtsTokenCount ?? 0;
  return openAiUsage(u.promptTokenCount + (u.toolUsePromptTokenCount ?? 0), (u.candidatesTokenCount ?? 0) + thoughts, u.cachedContentTokenCount, thoughts);
}

async function* relay(responses: AsyncIterable<GenerateContentResponse>, model: string): AsyncGenerator<StreamItem> {
  const chunks = chunkMaker(model);
  let started = false;
  let finish: FinishReason | undefined;
  let last: GenerateContentResponse | undefined;
  for await (const response of responses) {
    if (!started) {
      chunks.setId(response.responseId);
      started = true;
      yield { chunk: chunks.delta({ role: 'assistant', content: '' }) };
    }
    const text = textOf(response);
    if (text) yield { chunk: chunks.delta({ content: text }) };
    const reason = response.candidates?.[0]?.finishReason;
    if (reason) finish = finishOf(reason);
    else if (!response.candidates?.length && response.promptFeedback?.blockReason) finish = 'content_filter';
    if (response.usageMetadata) last = response;
  }
  yield { chunk: chunks.delta({}, finish ?? 'stop') };
  const usage = last && usageOf(last);
  if (usage) yield { chunk: chunks.usage(usage) };
}

export function classifyGeminiError(e: unknown): UpstreamFailure {
  if (e instanceof ApiError) return { kind: 'status', status: e.status, message: geminiMessage(e.message) };
  const error = e as Error & { cause?: Error };
  if (error?.name === 'AbortError') return { kind: 'aborted' };
  if (error instanceof TypeError && error.message === 'fetch failed') return { kind: 'unreachable', message: connectionReason(error, true) };
  return { kind: 'other', message: error?.message ?? String(e) };
}

/** The SDK's message is the error body as JSON; its `error.message` is what a person reads. */
function geminiMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string; status?: string } };
    if (body.error?.message) return body.error.status ? `${body.error.status}: ${body.error.message}` : body.error.message;
  } catch {
    /* not JSON: the text as it is */
  }
  return text;
}
