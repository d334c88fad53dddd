import { randomUUID } from 'node:crypto';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { invalid } from '@lib/platform';
import type { LlmType } from '../domain/llm';
import type { ChatBody } from '../application/provider/chat-upstream.port';

/** A content part the translating adapters understand: text, or an image as a data URL or a web URL. */
export type ChatPart = { readonly type: 'text'; readonly text: string } | { readonly type: 'image'; readonly url: string; readonly mimeType?: string; readonly base64?: string };

/** One message of the conversation, `developer` folded into `system` (what the providers other than OpenAI call it). */
export interface ChatTurn {
  readonly role: 'system' | 'user' | 'assistant';
  readonly parts: readonly ChatPart[];
}

/** The request fields every translating adapter maps; each adapter adds the extras its provider has. */
export interface TranslatedChat {
  readonly turns: readonly ChatTurn[];
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxTokens?: number;
  readonly stop?: readonly string[];
  /** Provider-specific fields the adapter declared it maps (by OpenAI name). */
  readonly extra: Readonly<Record<string, unknown>>;
}

const COMMON = new Set(['model', 'messages', 'stream', 'stream_options', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop']);

/** OpenAI's defaults, which ask for nothing: accepted (and dropped) by every type. */
const NEUTRAL: Readonly<Record<string, unknown>> = { n: 1, frequency_penalty: 0, presence_penalty: 0 };

/**
 * Reads an OpenAI chat request for a provider that is not OpenAI-compatible. What cannot be translated
 * faithfully (tools, tool messages, `n` > 1, other fields) is refused with a 400 naming the field, rather
 * than dropped: the caller would otherwise get an answer to a different question.
 */
export function translateRequest(body: ChatBody, type: LlmType, extras: readonly string[] = [], options: { webImages?: boolean } = {}): TranslatedChat {
  const problems: Record<string, string> = {};
  const allowed = new Set([...COMMON, ...extras]);
  for (const [field, value] of Object.entries(body)) {
    if (allowed.has(field) || value === undefined || value === null || NEUTRAL[field] === value) continue;
    problems[field] = `not supported for LLM type ${type}: it takes ${[...allowed].filter((f) => f !== 'model' && f !== 'messages').join(', ')} (other fields pass through to openai-compatible models only)`;
  }
  const turns: ChatTurn[] = [];
  body.messages.forEach((m, i) => {
    if (m.role === 'tool' || m.tool_calls !== undefined) {
      problems[`messages.${i}`] = `tool calls are not translated for LLM type ${type}`;
      return;
    }
    for (const key of Object.keys(m)) if (key !== 'role' && key !== 'content') problems[`messages.${i}.${key}`] = `not supported for LLM type ${type}`;
    const parts = readParts(m.content, `messages.${i}.content`, problems, options.webImages ?? true, type);
    turns.push({ role: m.role === 'developer' ? 'system' : (m.role as ChatTurn['role']), parts });
  });
  if (!turns.some((t) => t.role !== 'system')) problems.messages = `LLM type ${type} needs at least one user or assistant message`;
  const first = Object.entries(problems)[0];
  if (first) throw invalid('llm.untranslatable', `Invalid ${first[0]}: ${first[1]}`, problems);
  const stop = body.stop === undefined || body.stop === null ? undefined : Array.isArray(body.stop) ? (body.stop as string[]) : [String(body.stop)];
  const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
  return {
    turns,
    temperature: body.temperature as number | undefined,
    topP: body.top_p as number | undefined,
    maxTokens: maxTokens ?? undefined,
    stop,
    extra: Object.fromEntries(extras.filter((f) => body[f] !== undefined && body[f] !== null).map((f) => [f, body[f]])),
  };
}

function readParts(content: unknown, field: string, problems: Record<string, string>, webImages: boolean, type: LlmType): ChatPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: { type?: string; text?: unknown; image_url?: { url?: unknown } | string }, j): ChatPart[] => {
    if (part?.type === 'text' && typeof part.text === 'string') return [{ type: 'text', text: part.text }];
    const url = typeof part?.image_url === 'string' ? part.image_url : part?.image_url?.url;
    if (part?.type === 'image_url' && typeof url === 'string') {
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      if (data) return [{ type: 'image', url, mimeType: data[1], base64: data[2] }];
      if (webImages) return [{ type: 'image', url }];
      problems[`${field}.${j}.image_url`] = `LLM type ${type} takes images as data: URLs (base64), not web URLs`;
      return [];
    }
    problems[`${field}.${j}`] = `content part type ${String(part?.type)} is not translated (text and image_url are)`;
    return [];
  });
}

/** The system turns joined by a blank line (Anthropic and Gemini take the system prompt apart from the turns). */
export function splitSystem(turns: readonly ChatTurn[]): { system: string | undefined; turns: ChatTurn[] } {
  const system = turns.filter((t) => t.role === 'system').map((t) => textOf(t.parts));
  return { system: system.length ? system.join('\n\n') : undefined, turns: turns.filter((t) => t.role !== 'system') };
}

export const textOf = (parts: readonly ChatPart[]): string => parts.map((p) => (p.type === 'text' ? p.text : '')).join('');

/** OpenAI's usage object from a provider's counts: input includes cached tokens, output includes reasoning. */
export function openAiUsage(input: number, output: number, cached?: number, reasoning?: number): NonNullable<ChatCompletion['usage']> {
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    ...(cached ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
    ...(reasoning ? { completion_tokens_details: { reasoning_tokens: reasoning } } : {}),
  };
}

export type FinishReason = ChatCompletion['choices'][number]['finish_reason'];

/** A whole completion in OpenAI's shape (the caller's model name is set by ChatCompletions). */
export function completionOf(id: string | undefined, model: string, text: string, finish: FinishReason, usage: ChatCompletion['usage']): ChatCompletion {
  return {
    id: id ?? `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: finish, logprobs: null }],
    ...(usage ? { usage } : {}),
  };
}

/** Builds the chunks of one streamed answer, all sharing the id and creation time OpenAI's chunks share. */
export function chunkMaker(model: string) {
  let id = `chatcmpl-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const base = () => ({ id, object: 'chat.completion.chunk' as const, created, model });
  return {
    setId(upstreamId: string | undefined) {
      if (upstreamId) id = upstreamId;
    },
    delta(delta: ChatCompletionChunk.Choice.Delta, finish: FinishReason | null = null): ChatCompletionChunk {
      return { ...base(), choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
    },
    usage(usage: NonNullable<ChatCompletion['usage']>): ChatCompletionChunk {
      return { ...base(), choices: [], usage };
    },
  };
}
